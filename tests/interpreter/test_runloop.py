"""invoke()'s run loop (interpreter/runloop.py, native/runloop.c): the C loop and the Python
loop compute the same, native steps (RESHAPE / SQUEEZE / EXPAND_DIMS bound as a C copy)
replace exactly those ops, a failing step is named by its index on both loops, and
numpy's warnings are off inside a run and untouched outside it."""

from __future__ import annotations

import gc
import os
import warnings

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, native, runloop
from tests.interpreter.tflite_builder import ModelBuilder

needs_native = pytest.mark.skipif(
    not native.built() and not os.environ.get("CI"),
    reason="native kernels not built (python setup.py build_ext --inplace)")


def _mixed_chain(n: int, dtype=np.float32, **q) -> bytes:
    """x [1, 8] -> n times (RESHAPE to [2, 4], ADD a constant, RESHAPE back,
    FULLY_CONNECTED with a permutation, SQUEEZE / EXPAND_DIMS round trip)."""
    b = ModelBuilder()
    x = first = b.tensor("x", [1, 8], dtype, **q)
    perm = np.eye(8)[::-1]
    wq = dict(scale=0.05, zero_point=0) if q else {}
    for i in range(n):
        r = b.tensor(f"r{i}", [2, 4], dtype, **q)
        b.op("RESHAPE", [x, b.const(f"s{i}", np.array([2, 4], np.int32))], [r],
             new_shape=[2, 4])
        a = b.tensor(f"a{i}", [2, 4], dtype, **q)
        b.op("ADD", [r, b.tensor(f"c{i}", [2, 4], dtype, data=np.arange(8).reshape(2, 4) % 3,
                                 **q)], [a])
        f = b.tensor(f"f{i}", [1, 8], dtype, **q)
        b.op("RESHAPE", [a, b.const(f"t{i}", np.array([1, 8], np.int32))], [f],
             new_shape=[1, 8])
        y = b.tensor(f"y{i}", [1, 8], dtype, **q)
        b.op("FULLY_CONNECTED", [f, b.tensor(f"w{i}", [8, 8], dtype, data=perm * 20 if q
                                             else perm, **wq), -1], [y])
        s = b.tensor(f"q{i}", [8], dtype, **q)
        b.op("SQUEEZE", [y], [s], squeeze_dims=[0])
        x = b.tensor(f"e{i}", [1, 8], dtype, **q)
        b.op("EXPAND_DIMS", [s, b.const(f"d{i}", np.array(0, np.int32))], [x])
    return b.build(inputs=[first], outputs=[x])


def _run(model: bytes, x: np.ndarray, **kwargs) -> tuple[np.ndarray, Interpreter]:
    it = Interpreter(model_content=model, **kwargs)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"]), it


def _reference(x: np.ndarray, n: int) -> np.ndarray:
    for _ in range(n):
        x = (x + np.arange(8) % 3)[:, ::-1]
    return x


@needs_native
def test_native_steps_replace_exactly_the_copy_ops_and_compute_the_same():
    n = 6
    x = np.linspace(-3, 4, 8, dtype=np.float32).reshape(1, 8)
    model = _mixed_chain(n)
    y_native, it_native = _run(model, x, native=True)
    y_numpy, it_numpy = _run(model, x, native=False)
    np.testing.assert_array_equal(y_native, y_numpy)
    np.testing.assert_allclose(y_native, _reference(x, n), rtol=0, atol=1e-6)
    native_steps = [s for s in it_native._steps if isinstance(s[1], native.module.NativeStep)]
    assert len(it_native._steps) == len(it_numpy._steps) == 6 * n
    assert len(native_steps) == 4 * n  # 2 RESHAPE, SQUEEZE, EXPAND_DIMS per round
    assert not any(isinstance(s[1], native.module.NativeStep) for s in it_numpy._steps)


@needs_native
def test_int8_chain_identical_on_both_backends_and_both_loops():
    q = dict(scale=0.1, zero_point=-3)
    model = _mixed_chain(5, np.int8, **q)
    x = np.arange(-40, 40, 10, dtype=np.int8).reshape(1, 8)
    y_native, it = _run(model, x, native=True)
    y_numpy, _ = _run(model, x, native=False)
    np.testing.assert_array_equal(y_native, y_numpy)
    # the Python loop over the same (native) steps gives the same bytes
    it.set_tensor(it.get_input_details()[0]["index"], x)
    runloop.run_python(it._steps)
    np.testing.assert_array_equal(it.get_tensor(it.get_output_details()[0]["index"]),
                                  y_native)


def _failing(record, inputs, outputs):
    raise ValueError(f"step {record} failed")


@pytest.mark.parametrize("loop", ["run", "run_python"])
def test_a_failing_step_is_named_by_its_index(loop):
    seen = []
    steps = [((lambda r, i, o: seen.append(r)), k, (), ()) for k in range(3)]
    steps.insert(2, (_failing, "two", (), ()))
    with pytest.raises(ValueError, match="step two failed") as info:
        getattr(runloop, loop)(tuple(steps))
    assert runloop.failed_step(info.value) == 2
    assert seen == [0, 1]  # the steps after it did not run


@needs_native
def test_copy_step_refuses_what_it_cannot_copy_and_keeps_its_arrays_alive():
    a = np.arange(12, dtype=np.int16)
    assert runloop.copy_step(a, np.zeros(11, np.int16)) is None  # sizes differ
    assert runloop.copy_step(a[::2], np.zeros(6, np.int16)) is None  # not contiguous
    assert runloop.copy_step(np.array([b"x"], object), np.array([b""], object)) is None
    target = np.zeros((3, 4), np.int16)
    step = runloop.copy_step(a.copy(), target)
    del a
    gc.collect()
    runloop.run((step,))
    np.testing.assert_array_equal(target.ravel(), np.arange(12))


def test_numpy_warnings_are_off_inside_invoke_and_untouched_outside():
    b = ModelBuilder()
    x = b.tensor("x", [1, 4], np.float32)
    y = b.tensor("y", [1, 4], np.float32)
    z = b.tensor("z", [1, 4], np.float32)
    b.op("MUL", [x, x], [y])  # overflow: inf
    b.op("SUB", [y, y], [z])  # inf - inf: NaN
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, _ = _run(b.build(inputs=[x], outputs=[z]),
                      np.array([[1e30, -1e30, 2.0, 0.0]], np.float32))
    assert np.isnan(out[0, :2]).all() and (out[0, 2:] == 0).all()
    assert np.geterr() == before
