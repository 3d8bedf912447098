"""MEAN / SUM / REDUCE_MAX / REDUCE_MIN against LiteRT's reference kernels."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError, UnsupportedOpError

from .oracle import assert_matches_litert, rand, run_edgelite
from .tflite_builder import ModelBuilder


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


def test_reduce_runtime_axis_is_unsupported(rng):
    model = reduce_model("MEAN", (2, 3), [1], False, const_axis=False)
    with pytest.raises(UnsupportedOpError, match="axis .* must be a constant"):
        run_edgelite(model, [rand(rng, (2, 3)), np.array([1], np.int32)])
