"""MEAN / SUM / REDUCE_MAX / REDUCE_MIN / REDUCE_PROD / REDUCE_ANY / REDUCE_ALL against
LiteRT's reference kernels; int8 / uint8 MEAN bit-exact with both LiteRT kernel sets."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError

from ..oracle import assert_matches_litert, rand, run_edgelite
from ..quant_oracle import QuantModel, assert_bit_exact, full_range, random_qparams
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
