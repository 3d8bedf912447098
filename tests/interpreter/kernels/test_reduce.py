"""MEAN / SUM / REDUCE_MAX / REDUCE_MIN / REDUCE_PROD / REDUCE_ANY / REDUCE_ALL against
LiteRT's reference kernels; quantized SUM / MEAN / REDUCE_MAX / REDUCE_MIN / REDUCE_PROD
(int8, uint8, int16 16x8) bit-exact with both LiteRT kernel sets (XNNPACK takes int8 /
uint8 SUM, MEAN, MAX and MIN in the default set)."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError, UnsupportedOpError

from tests.conftest import missing
from tests.interpreter.tflite_builder import QuantModel
from tests.support import (assert_bit_exact, assert_float_native_steps, assert_matches_litert,
                           assert_native_steps, full_range, rand, random_qparams, run_edgelite)
from ..tflite_builder import ModelBuilder

I32, I64, F32 = np.int32, np.int64, np.float32


def reduce_model(op, x_shape, axes, keep_dims, dtype=np.float32, const_axis=True):
    b = ModelBuilder()
    x = b.tensor("x", x_shape, dtype)
    axis_values = np.array(axes, np.int32)
    if const_axis:
        axis = b.const("axis", axis_values)
        graph_inputs = [x]
    else:
        axis = b.tensor("axis", axis_values.shape, np.int32)
        graph_inputs = [x, axis]
    norm = {a % len(x_shape) for a in np.atleast_1d(axes)}
    if keep_dims:
        out_shape = [1 if i in norm else d for i, d in enumerate(x_shape)]
    else:
        out_shape = [d for i, d in enumerate(x_shape) if i not in norm]
    y = b.tensor("y", out_shape, dtype)
    b.op(op, [x, axis], [y], keep_dims=keep_dims)
    return b.build(graph_inputs, [y])


AXES = [[1, 2], [0], [-1], [3, -3], [0, 1, 2, 3], [2, 2]]


@pytest.mark.parametrize("op", ["MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN"])
@pytest.mark.parametrize("axes", AXES)
@pytest.mark.parametrize("keep_dims", [False, True])
def test_reduce(rng, op, axes, keep_dims):
    x = rand(rng, (2, 3, 4, 5))
    assert_matches_litert(reduce_model(op, x.shape, axes, keep_dims), [x])


def test_mean_scalar_axis(rng):
    x = rand(rng, (3, 4))
    assert_matches_litert(reduce_model("MEAN", x.shape, 1, False), [x])


@pytest.mark.parametrize("op", ["SUM", "REDUCE_MAX", "REDUCE_MIN"])
def test_reduce_int32(rng, op):
    x = rand(rng, (3, 4, 5), np.int32, low=-100, high=100)
    assert_matches_litert(reduce_model(op, x.shape, [0, 2], True, np.int32), [x])


def test_reduce_axis_out_of_range(rng):
    b = ModelBuilder()
    x = b.tensor("x", (2, 3))
    axis = b.const("axis", np.array([4], np.int32))
    y = b.tensor("y", (2,))
    b.op("MEAN", [x, axis], [y])
    with pytest.raises(ShapeError, match="axis 4 is out of range"):
        run_edgelite(b.build([x], [y]), [rand(rng, (2, 3))])


def test_reduce_runtime_axis_runs_at_invoke(rng):
    # a computed axis: the output is dynamic, prepared at invoke (interpreter/dynamic.py)
    model = reduce_model("MEAN", (2, 3), [1], False, const_axis=False)
    x = rand(rng, (2, 3))
    (out,) = assert_matches_litert(model, [x, np.array([1], np.int32)])
    np.testing.assert_allclose(out, x.mean(1), rtol=1e-6)


@pytest.mark.parametrize("axes,keep_dims", [([1], False), ([0, 2], True), ([-1], False),
                                            ([0, 1, 2], False)])
@pytest.mark.parametrize("dtype", [F32, I32, I64])
def test_reduce_prod(rng, axes, keep_dims, dtype):
    x = rand(rng, (2, 3, 4), dtype, low=-3, high=3) if dtype != F32 else \
        rand(rng, (2, 3, 4), low=0.5, high=1.5)
    assert_matches_litert(reduce_model("REDUCE_PROD", x.shape, axes, keep_dims, dtype), [x])


@pytest.mark.parametrize("op", ["REDUCE_ANY", "REDUCE_ALL"])
@pytest.mark.parametrize("axes", [[1], [0, 2]])
def test_reduce_any_all(rng, op, axes):
    x = rand(rng, (3, 4, 5)) > 0.6
    x[0] = True
    assert_matches_litert(reduce_model(op, x.shape, axes, False, np.bool_), [x])


@pytest.mark.parametrize("dtype", [I32, I64])
def test_mean_integer(rng, dtype):
    x = rand(rng, (3, 4, 5), dtype, low=-100, high=100)
    assert_matches_litert(reduce_model("MEAN", x.shape, [1, 2], False, dtype), [x])


# --------------------------------------------------------------------------- int8 / uint8


def mean_model(rng, dtype, x_shape, axes, keep_dims, q_in=None, q_out=None):
    s, z = q_in or random_qparams(rng, dtype, 0.01, 0.1)
    so, zo = q_out or random_qparams(rng, dtype, 0.005, 0.05)
    out_shape = tuple(1 if i in axes else d for i, d in enumerate(x_shape)) if keep_dims \
        else tuple(d for i, d in enumerate(x_shape) if i not in axes)
    m = QuantModel()
    x = m.input("x", x_shape, dtype, s, z)
    ax = m.const("axis", np.array(axes, np.int32), np.int32)
    y = m.output("y", out_shape, dtype, so, zo)
    m.op("MEAN", [x, ax], [y], version=2, keep_dims=keep_dims)
    return m.build(), [full_range(rng, x_shape, dtype)]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("x_shape,axes,keep_dims", [
    ((2, 7, 7, 16), (1, 2), True), ((2, 7, 7, 16), (1, 2), False), ((3, 5, 6), (2,), False),
    ((4, 10), (0,), True), ((2, 3, 4, 5), (1, 3), False), ((2, 8, 8, 3), (1, 2, 3), True),
])
def test_mean(rng, dtype, x_shape, axes, keep_dims):
    model, feeds = mean_model(rng, dtype, x_shape, axes, keep_dims)
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_mean_same_scale_ties(rng, dtype):
    # Equal input / output scale and 4 elements per mean: every quarter value appears.
    z = 0 if dtype == np.int8 else 128
    model, feeds = mean_model(rng, dtype, (64, 2, 2, 8), (1, 2), True, (0.1, z), (0.1, z))
    assert_bit_exact(model, feeds)


# ------------------------------------------------------------- quantized SUM, MAX, MIN, PROD

RATIOS = (0.5, 0.25, 0.125, 1.5, 3.0)  # s_in / s_out: many exact .5 ties to round


def reduce_q(op, shape, axes, keep, dtype, qin, qout):
    m = QuantModel()
    x = m.input("x", shape, dtype, *qin)
    a = m.const("axes", np.array(axes, np.int32), np.int32)
    norm = {ax % len(shape) for ax in axes}
    out = [1 if i in norm else d for i, d in enumerate(shape)] if keep else \
        [d for i, d in enumerate(shape) if i not in norm]
    y = m.output("y", out, dtype, *qout)
    m.op(op, [x, a], [y], keep_dims=keep)
    return m.build()


def random_case(rng, dtype, symmetric=False):
    shape = tuple(int(d) for d in rng.integers(1, 7, size=int(rng.integers(2, 5))))
    axes = sorted({int(a) for a in rng.integers(-len(shape), len(shape), size=2)})
    s_out = float(np.float32(rng.uniform(0.01, 0.3)))
    ratio = float(rng.choice(RATIOS)) if rng.random() < 0.6 else float(rng.uniform(0.05, 2))
    s_in = float(np.float32(s_out * ratio))
    info = np.iinfo(dtype)
    if symmetric:
        zin = zout = 0
    else:
        zin, zout = (int(rng.integers(info.min // 2, info.max // 2)) for _ in range(2))
    return shape, axes, bool(rng.integers(2)), (s_in, zin), (s_out, zout)


@pytest.mark.parametrize("op", ["SUM", "MEAN"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("seed", range(6))
def test_sum_mean_8bit(op, dtype, seed):
    rng = np.random.default_rng(seed)
    shape, axes, keep, qin, qout = random_case(rng, dtype)
    x = full_range(rng, shape, dtype)
    assert_bit_exact(reduce_q(op, shape, axes, keep, dtype, qin, qout), [x])


@pytest.mark.parametrize("op", ["SUM", "MEAN"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("shape,axes,keep", [((2, 7, 7, 16), [1, 2], True),
                                             ((3, 5, 6), [2], False), ((4, 10), [0], True),
                                             ((6, 5), [0, 1], False)])
def test_sum_mean_8bit_default_set_is_a_native_step(op, dtype, shape, axes, keep):
    # the default set's MEAN / SUM (sums in C, XNNPACK's float32 stage) as one native
    # step of the C loop (native/steps.c mean_step), ratios with .5 ties included: the
    # same bytes as the numpy backend and LiteRT at 1 and 2 threads
    rng = np.random.default_rng(len(shape) + len(axes))
    for ratio in (0.5, 1.5, float(rng.uniform(0.05, 2))):
        info = np.iinfo(dtype)
        qin = (float(np.float32(0.1 * ratio)), int(rng.integers(info.min // 2, info.max // 2)))
        qout = (0.1, int(rng.integers(info.min // 2, info.max // 2)))
        model = reduce_q(op, shape, axes, keep, dtype, qin, qout)
        assert_native_steps(model, [full_range(rng, shape, dtype)], steps=1,
                            kernels=("default",))


@pytest.mark.parametrize("op", ["SUM", "MEAN"])
@pytest.mark.parametrize("shape,axes,keep,steps", [
    ((1, 7, 7, 96), [1, 2], True, 1),       # global average pooling: rows added in order
    ((2, 9000, 3), [1], False, 1),
    ((3, 20000), [-1], True, 1),            # the innermost block: numpy's pairwise sum
    ((2, 9, 130), [0, 1, 2], False, 1),     # every axis: one pairwise sum of 2340
    ((1, 8), [0], True, 1),
    ((2, 3, 4), [0, 2], True, 0)])          # not one block: numpy's eval
def test_float_sum_mean_native_step_is_numpy_bit_for_bit(op, shape, axes, keep, steps):
    # float32 MEAN / SUM as one native step (native/reduce.c el_sum_f32): the bits of the
    # numpy kernel's np.add.reduce (pairwise on the innermost block, row by row otherwise),
    # at 1 and 2 threads; values of 1e6 make any other summation order show
    rng = np.random.default_rng(sum(shape))
    x = (rng.standard_normal(shape) * 1e6).astype(np.float32)
    model = reduce_model(op, shape, axes, keep)
    (want,) = assert_float_native_steps(model, [x], steps, threads=(1, 2), litert=False)
    expect = np.add.reduce(x.astype(np.float64), axis=tuple(axes), keepdims=keep)
    if op == "MEAN":
        expect /= x.size // max(expect.size, 1)
    np.testing.assert_allclose(want, expect, rtol=1e-4, atol=1e-4 * np.abs(x).max())


def test_sum_f32_step_refuses_short_buffers():
    from edgelite.interpreter import native
    if not native.built():
        missing("the native extension (python setup.py build_ext --inplace)")
    bind = native.module.sum_f32_step
    x, out = np.zeros(24, np.float32), np.zeros(4, np.float32)
    assert bind(x, 2, 6, 2, True, out) is not None
    with pytest.raises(ValueError, match="sum_f32_step: the input holds 96 bytes, needs 112"):
        bind(x, 2, 7, 2, True, out)
    with pytest.raises(ValueError, match="sum_f32_step: the output holds 12 bytes, needs 16"):
        bind(x, 2, 6, 2, False, out[:3].copy())
    with pytest.raises(ValueError, match="sum_f32_step: bad sizes"):
        bind(x, 0, 6, 2, False, out)


def test_mean_step_refuses_short_buffers():
    from edgelite.interpreter import native
    if not native.built():
        pytest.skip("native kernels not built")
    bind = native.module.mean_step
    x, total, out, acc = (np.zeros(24, np.int8), np.zeros(4, np.int64), np.zeros(4, np.int8),
                          np.zeros(2, np.int32))
    assert bind(x, 0, 2, 6, 2, total, 0.5, 1.0, -128, 127, out, acc) is not None
    with pytest.raises(ValueError, match="mean_step: the sums holds 24 bytes, needs 32"):
        bind(x, 0, 2, 6, 2, total[:3].copy(), 0.5, 1.0, -128, 127, out, acc)
    with pytest.raises(ValueError, match="mean_step: the input holds 24 bytes, needs 28"):
        bind(x, 0, 2, 7, 2, total, 0.5, 1.0, -128, 127, out, acc)
    with pytest.raises(ValueError, match="mean_step: bad sizes or bounds"):
        bind(x, 1, 2, 6, 2, total, 0.5, 1.0, -128, 127, out, acc)  # uint8 below 0


@pytest.mark.parametrize("seed", range(4))
def test_mean_int16(seed):
    rng = np.random.default_rng(seed)
    shape, axes, keep, qin, qout = random_case(rng, np.int16, symmetric=True)
    x = full_range(rng, shape, np.int16)
    assert_bit_exact(reduce_q("MEAN", shape, axes, keep, np.int16, qin, qout), [x])


@pytest.mark.parametrize("seed", range(4))
def test_sum_int16_default(seed):
    rng = np.random.default_rng(seed)
    shape, axes, keep, qin, qout = random_case(rng, np.int16, symmetric=True)
    x = (full_range(rng, shape, np.int16) // 64).astype(np.int16)
    assert_bit_exact(reduce_q("SUM", shape, axes, keep, np.int16, qin, qout), [x],
                     kernels=("default",))


def test_sum_int16_reference_is_refused():
    model = reduce_q("SUM", (2, 3), [1], False, np.int16, (0.1, 0), (0.2, 0))
    with pytest.raises(UnsupportedOpError, match="reads the int16 data as uint8"):
        run_edgelite(model, [np.zeros((2, 3), np.int16)], "reference")


@pytest.mark.parametrize("op", ["REDUCE_MAX", "REDUCE_MIN"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16])
@pytest.mark.parametrize("seed", range(3))
def test_max_min(op, dtype, seed):
    rng = np.random.default_rng(seed)
    shape, axes, keep, qin, _ = random_case(rng, dtype, symmetric=dtype == np.int16)
    x = full_range(rng, shape, dtype)
    assert_bit_exact(reduce_q(op, shape, axes, keep, dtype, qin, qin), [x])


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_max_with_unequal_params(dtype, rng):
    """LiteRT's reference kernel refuses; XNNPACK (default set) moves the values anyway."""
    model = reduce_q("REDUCE_MAX", (2, 3), [1], False, dtype, (0.1, 3), (0.2, 4))
    x = full_range(rng, (2, 3), dtype)
    with pytest.raises(ShapeError, match="equal quantization parameters"):
        run_edgelite(model, [x], "reference")
    assert_bit_exact(model, [x], kernels=("default",))


@pytest.mark.parametrize("dtype", [np.int8, np.int16])
@pytest.mark.parametrize("seed", range(4))
def test_prod(dtype, seed):
    rng = np.random.default_rng(seed)
    shape, axes, keep, (s_in, zin), (s_out, zout) = random_case(
        rng, dtype, symmetric=dtype == np.int16)
    n = int(np.prod([shape[a] for a in axes]))
    # keep the true product in range: |r| <= ~1.5 per element, s_out ~ max / 127
    s_in = float(np.float32(1.5 / np.iinfo(dtype).max))
    s_out = float(np.float32(1.5 ** n / np.iinfo(dtype).max * rng.uniform(0.3, 1)))
    x = full_range(rng, shape, dtype)
    assert_bit_exact(reduce_q("REDUCE_PROD", shape, axes, keep, dtype, (s_in, zin),
                              (s_out, zout)), [x])


def test_prod_uint8_is_refused():
    model = reduce_q("REDUCE_PROD", (2, 3), [1], False, np.uint8, (0.1, 3), (0.1, 4))
    with pytest.raises(UnsupportedOpError, match="uint8"):
        run_edgelite(model, [np.zeros((2, 3), np.uint8)], "reference")


@pytest.mark.parametrize("op", ["SUM", "MEAN", "REDUCE_PROD", "REDUCE_MAX"])
def test_reduce_to_a_scalar(op, rng):
    x = full_range(rng, (2, 4), np.int8)
    qout = (0.1, 3) if op == "REDUCE_MAX" else (0.4, 5)
    assert_bit_exact(reduce_q(op, (2, 4), [0, 1], False, np.int8, (0.1, 3), qout), [x])
