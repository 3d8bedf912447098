"""int8 / uint8 kernels as native steps (docs/native-run-loop.md): QUANTIZE, ADD / MUL,
FULLY_CONNECTED, CONV_2D, the 256-entry table ops and DEQUANTIZE run in the C loop with no
Python call where they run as one slice; outputs are those of the numpy backend and of
LiteRT (both kernel sets) bit for bit, and a failing step is still named by its index."""

from __future__ import annotations

import gc
import os

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, native, runloop
from tests.interpreter.tflite_builder import ModelBuilder

needs_native = pytest.mark.skipif(
    not native.built() and not os.environ.get("CI"),
    reason="native kernels not built (python setup.py build_ext --inplace)")

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
        x = act(f"rq{i}", scale=0.04)
        b.op("QUANTIZE", [th], [x])
    y = b.tensor("y", shape, np.float32)
    b.op("DEQUANTIZE", [x], [y])
    return b.build(inputs=[first], outputs=[y])


def _input() -> np.ndarray:
    return np.linspace(-3, 3, 32, dtype=np.float32).reshape(1, 2, 2, 8)


def _run(model: bytes, **kwargs):
    it = Interpreter(model_content=model, **kwargs)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], _input())
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"]).copy(), it


def _native_steps(it) -> list[int]:
    return [i for i, s in enumerate(it._steps) if s[0] is native.module.run_native_step
            and isinstance(s[1], native.module.NativeStep)]


KERNEL_SETS = [("reference", "BUILTIN_REF"), ("default", "BUILTIN"), ("micro", None)]


@needs_native
@pytest.mark.parametrize("dtype", [np.int8, np.uint8], ids=["int8", "uint8"])
@pytest.mark.parametrize("kernels,resolver", KERNEL_SETS, ids=[k for k, _ in KERNEL_SETS])
@pytest.mark.parametrize("threads", [1, 2])
def test_chain_runs_as_native_steps_and_matches_numpy_and_litert(dtype, kernels, resolver,
                                                                 threads, litert):
    if kernels == "micro" and dtype == np.uint8:
        pytest.skip("TFLM has no uint8 kernels (micro/uint8.py)")
    model = _chain(dtype)
    got, it = _run(model, native=True, kernels=kernels, num_threads=threads)
    want, it_numpy = _run(model, native=False, kernels=kernels, num_threads=threads)
    np.testing.assert_array_equal(got, want)
    assert not _native_steps(it_numpy)
    # every op but the RESHAPEs (a copy step too) is a kernel of this task
    ops = 2 + ROUNDS * (PER_ROUND + 1)
    assert len(it._steps) == ops
    assert len(_native_steps(it)) == ops
    # the Python loop over the same steps gives the same bytes
    it.set_tensor(it.get_input_details()[0]["index"], _input())
    runloop.run_python(it._steps)
    np.testing.assert_array_equal(it.get_tensor(it.get_output_details()[0]["index"]), got)
    if resolver is not None:
        ref = litert.Interpreter(model_content=model, num_threads=threads,
                                 experimental_op_resolver_type=getattr(
                                     litert.OpResolverType, resolver))
        ref.allocate_tensors()
        ref.set_tensor(ref.get_input_details()[0]["index"], _input())
        ref.invoke()
        np.testing.assert_array_equal(got, ref.get_tensor(ref.get_output_details()[0]["index"]))


def _failing(record, inputs, outputs):
    raise ValueError(f"step {record} failed")


@needs_native
def test_a_failing_step_among_native_steps_is_named_by_its_index():
    _, it = _run(_chain(np.int8), native=True)
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
