"""Comparisons, LOGICAL_AND / LOGICAL_OR, SELECT / SELECT_V2 against LiteRT's reference
kernels."""

import numpy as np
import pytest

from ..op_models import check_op
from ..oracle import rand

I32, I64, F32 = np.int32, np.int64, np.float32


@pytest.mark.parametrize("op", ["LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "EQUAL",
                                "NOT_EQUAL"])
@pytest.mark.parametrize("dtype", [F32, I32, I64])
def test_comparisons(rng, op, dtype):
    a = rand(rng, (3, 4), dtype, low=-3, high=3).round().astype(dtype)
    b = rand(rng, (4,), dtype, low=-3, high=3).round().astype(dtype)
    check_op(op, [a, b], [((3, 4), np.bool_)])


@pytest.mark.parametrize("op", ["LOGICAL_AND", "LOGICAL_OR"])
def test_logical_binary(rng, op):
    a, b = rand(rng, (3, 4)) > 0, rand(rng, (3, 1)) > 0
    check_op(op, [a, b], [((3, 4), np.bool_)])


@pytest.mark.parametrize("c_shape,x_shape,y_shape", [((3, 4), (3, 4), (3, 4)),
                                                     ((3, 1), (1, 4), (3, 4)),
                                                     ((), (2, 3), (3,)), ((4,), (3, 4), ())])
@pytest.mark.parametrize("dtype", [F32, I32])
def test_select_v2(rng, c_shape, x_shape, y_shape, dtype):
    cond = rand(rng, c_shape) > 0
    x = rand(rng, x_shape, low=-9, high=9).astype(dtype)
    y = rand(rng, y_shape, low=-9, high=9).astype(dtype)
    out_shape = np.broadcast_shapes(c_shape, x_shape, y_shape)
    (out,) = check_op("SELECT_V2", [cond, x, y], [(out_shape, dtype)])
    np.testing.assert_array_equal(out, np.where(cond, x, y))


@pytest.mark.parametrize("c_shape", [(3, 4), (3,)])
def test_select(rng, c_shape):
    cond = rand(rng, c_shape) > 0
    x, y = rand(rng, (3, 4)), rand(rng, (3, 4))
    (out,) = check_op("SELECT", [cond, x, y], [((3, 4), F32)])
    np.testing.assert_array_equal(out, np.where(cond.reshape(3, -1), x, y))
