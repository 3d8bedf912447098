"""invoke()'s run loop (interpreter/runloop.py, native/runloop.c): the C loop and the Python
loop compute the same, native steps (RESHAPE / SQUEEZE / EXPAND_DIMS bound as a C copy)
replace exactly those ops, a failing step is named by its index on both loops, and
numpy's warnings are off inside a run and untouched outside it.

int8 / uint8 kernels as native steps (docs/native-run-loop.md): QUANTIZE, ADD / MUL,
FULLY_CONNECTED, CONV_2D, the 256-entry table ops and DEQUANTIZE run in the C loop with no
Python call where they run as one slice; outputs are those of the numpy backend and of
LiteRT (both kernel sets) bit for bit, and a failing step among them is still named."""

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
def test_every_op_of_a_mixed_chain_is_a_native_step_with_the_same_values():
    n = 6
    x = np.linspace(-3, 4, 8, dtype=np.float32).reshape(1, 8)
    model = _mixed_chain(n)
    y_native, it_native = _run(model, x, native=True)
    y_numpy, it_numpy = _run(model, x, native=False)
    np.testing.assert_array_equal(y_native, y_numpy)
    np.testing.assert_allclose(y_native, _reference(x, n), rtol=0, atol=1e-6)
    native_steps = [s for s in it_native._steps if isinstance(s[1], native.module.NativeStep)]
    assert len(it_native._steps) == len(it_numpy._steps) == 6 * n
    # every op of each round: 2 RESHAPE, SQUEEZE, EXPAND_DIMS, the float ADD (binary_f32.c)
    # and the small FULLY_CONNECTED (fc_f32.c)
    assert len(native_steps) == 6 * n
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


# --------------------------------------------------------------------------- int8 kernels as steps

ROUNDS = 3
# per round: ADD, MUL (broadcast), FULLY_CONNECTED, CONV_2D, LOGISTIC, TANH, QUANTIZE
PER_ROUND = 7


def _chain(dtype) -> bytes:
    """float x [1, 2, 2, 8] -> QUANTIZE -> ROUNDS x (ADD a constant, MUL by a [8]
    constant, FULLY_CONNECTED 8x8 with bias, CONV_2D 1x1 8->8, LOGISTIC, TANH,
    QUANTIZE to another scale) -> DEQUANTIZE."""
    b = ModelBuilder()
    rng = np.random.default_rng(3)
    uint8 = dtype == np.uint8
    zp = 131 if uint8 else 3
    wzp = 128 if uint8 else 0
    shape = [1, 2, 2, 8]
    first = b.tensor("x", shape, np.float32)
    x = b.tensor("q", shape, dtype, scale=0.05, zero_point=zp)
    b.op("QUANTIZE", [first], [x])

    def act(name, scale=0.05, zero_point=zp, dims=shape):
        return b.tensor(name, dims, dtype, scale=scale, zero_point=zero_point)

    def values(n, lo=-60, hi=60, offset=0):
        return rng.integers(lo, hi, n) + offset

    for i in range(ROUNDS):
        a = act(f"add{i}")
        c = b.tensor(f"c{i}", shape, dtype, data=values(32, offset=zp).reshape(shape),
                     scale=0.03, zero_point=zp)
        b.op("ADD", [x, c], [a])
        m = act(f"mul{i}", scale=0.08)
        v = b.tensor(f"v{i}", [8], dtype, data=values(8, offset=zp), scale=0.02,
                     zero_point=zp)
        b.op("MUL", [a, v], [m])
        f = act(f"fc{i}", dims=[4, 8])
        w = b.tensor(f"w{i}", [8, 8], dtype, data=values(64, offset=wzp).reshape(8, 8),
                     scale=0.01, zero_point=wzp)
        bias = b.tensor(f"b{i}", [8], np.int32, data=values(8, -500, 500), scale=0.0008,
                        zero_point=0)
        b.op("FULLY_CONNECTED", [m, w, bias], [f], fused_activation_function=1)
        fr = act(f"fr{i}")
        b.op("RESHAPE", [f, b.const(f"s{i}", np.array(shape, np.int32))], [fr],
             new_shape=shape)
        cv = act(f"conv{i}", scale=0.06)
        k = b.tensor(f"k{i}", [8, 1, 1, 8], dtype,
                     data=values(64, offset=wzp).reshape(8, 1, 1, 8), scale=0.01,
                     zero_point=wzp)
        kb = b.tensor(f"kb{i}", [8], np.int32, data=values(8, -500, 500), scale=0.0005,
                      zero_point=0)
        b.op("CONV_2D", [fr, k, kb], [cv], padding=1, stride_w=1, stride_h=1)
        lg = act(f"sig{i}", scale=1 / 256, zero_point=0 if uint8 else -128)
        b.op("LOGISTIC", [cv], [lg])
        th = act(f"tanh{i}", scale=1 / 128, zero_point=128 if uint8 else 0)
        b.op("TANH", [lg], [th])
        x = act(f"rq{i}", scale=0.005, zero_point=0 if uint8 else -128)  # [0, 1.275]
        b.op("QUANTIZE", [th], [x])
    y = b.tensor("y", shape, np.float32)
    b.op("DEQUANTIZE", [x], [y])
    return b.build(inputs=[first], outputs=[y])


def _chain_input() -> np.ndarray:
    return np.linspace(-3, 3, 32, dtype=np.float32).reshape(1, 2, 2, 8)


def _run_chain(model: bytes, **kwargs):
    it = Interpreter(model_content=model, **kwargs)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], _chain_input())
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"]).copy(), it


def _native_steps(it) -> list[int]:
    return [i for i, s in enumerate(it._steps) if s[0] is native.module.run_native_step
            and isinstance(s[1], native.module.NativeStep)]


@needs_native
@pytest.mark.parametrize("dtype", [np.int8, np.uint8], ids=["int8", "uint8"])
@pytest.mark.parametrize("kernels", ["reference", "default", "micro"])
@pytest.mark.parametrize("threads", [1, 2])
def test_chain_runs_as_native_steps_and_matches_numpy_and_its_runtime(dtype, kernels, threads):
    """Each kernel set's outputs equal its runtime's: LiteRT's BUILTIN_REF / default
    kernels, TFLite Micro."""
    from tests.support.runtimes import run_litert, run_micro

    if kernels == "micro" and dtype == np.uint8:
        pytest.skip("TFLM has no uint8 kernels (micro/uint8.py)")
    model = _chain(dtype)
    got, it = _run_chain(model, native=True, kernels=kernels, num_threads=threads)
    want, it_numpy = _run_chain(model, native=False, kernels=kernels, num_threads=threads)
    np.testing.assert_array_equal(got, want)
    assert not _native_steps(it_numpy)
    # every op but the RESHAPEs (a copy step too) is a kernel of this task
    ops = 2 + ROUNDS * (PER_ROUND + 1)
    assert len(it._steps) == ops
    assert len(_native_steps(it)) == ops
    # the Python loop over the same steps gives the same bytes
    it.set_tensor(it.get_input_details()[0]["index"], _chain_input())
    runloop.run_python(it._steps)
    np.testing.assert_array_equal(it.get_tensor(it.get_output_details()[0]["index"]), got)
    oracle = run_micro(model, [_chain_input()]) if kernels == "micro" else \
        run_litert(model, [_chain_input()], kernels)
    np.testing.assert_array_equal(got, oracle[0])
    assert len(np.unique(got)) > 16  # the chain does not collapse to a few values


def test_a_failing_step_among_native_steps_is_named_by_its_index():
    _, it = _run_chain(_chain(np.int8), native=True)
    steps = list(it._steps)
    at = len(steps) // 2
    assert at - 1 in _native_steps(it) and at + 1 in _native_steps(it)
    steps[at] = (_failing, "middle", (), ())
    for loop in (runloop.run, runloop.run_python):
        with pytest.raises(ValueError, match="step middle failed") as info:
            loop(tuple(steps))
        assert runloop.failed_step(info.value) == at


@needs_native
def test_binds_refuse_what_they_cannot_run_and_keep_their_arrays_alive():
    m = native.module
    x, out = np.arange(16, dtype=np.uint8), np.zeros(16, np.uint8)
    table = (np.arange(256) ^ 0x55).astype(np.uint8)
    with pytest.raises(ValueError, match="lut: the output holds 16 bytes, needs 17"):
        m.lut_step(np.zeros(17, np.uint8), out, ((table, 0, 17),))
    with pytest.raises(ValueError, match="1 to 4 slices"):
        m.lut_step(x, out, ((table, 0, 1),) * 5)
    params = np.array([1, 0, 0, 0, 0, -128, 127, 1 << 20, 1 << 20, 21], np.int64)
    dims = np.array([16, 1, 1], np.int64)
    with pytest.raises(ValueError, match="binary: values out of range"):
        m.binary_step(x, x, None, None, params, 0.0, out, dims, 0, 17)
    with pytest.raises(ValueError, match="quantize: the output holds 16 bytes, needs 20"):
        m.quantize_step(np.zeros(20, np.float32), out, (0, 0), 1.0, 0.0, 0, (0, -128, 127),
                        0, 20)
    # a bound step keeps its arrays: the table and the input may go away in Python
    step = m.lut_step(x.copy(), out, ((table.copy(), 0, 8), (table[::-1].copy(), 8, 16)))
    gc.collect()
    runloop.run(((m.run_native_step, step, None, None),))
    np.testing.assert_array_equal(out[:8], table[:8])
    np.testing.assert_array_equal(out[8:], table[::-1][8:16])
