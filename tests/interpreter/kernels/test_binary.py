"""DIV / FLOOR_DIV / FLOOR_MOD / MAXIMUM / MINIMUM / SQUARED_DIFFERENCE / POW / PRELU
against LiteRT's reference kernels."""

import numpy as np
import pytest

from edgelite.interpreter import EdgeliteError

from ..op_models import check_op, const, run_op
from ..oracle import rand

I32, I64, F32 = np.int32, np.int64, np.float32

SHAPES = [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((2, 1, 4), (1, 3, 1)), ((3,), ())]


def nonzero(rng, shape, dtype=F32, low=-5, high=5):
    x = rand(rng, shape, dtype, low=low, high=high)
    return np.where(x == 0, dtype(1), x).astype(dtype) if dtype != F32 else \
        np.where(np.abs(x) < 0.1, F32(0.5), x).astype(F32)


@pytest.mark.parametrize("op", ["DIV", "FLOOR_DIV", "FLOOR_MOD", "MAXIMUM", "MINIMUM",
                                "SQUARED_DIFFERENCE"])
@pytest.mark.parametrize("a_shape,b_shape", SHAPES)
def test_binary_float(rng, op, a_shape, b_shape):
    a, b = rand(rng, a_shape, low=-5, high=5), nonzero(rng, b_shape)
    out_shape = np.broadcast_shapes(a_shape, b_shape)
    check_op(op, [a, b], [(out_shape, F32)])


@pytest.mark.parametrize("op", ["DIV", "FLOOR_DIV", "FLOOR_MOD", "MAXIMUM", "MINIMUM",
                                "SQUARED_DIFFERENCE"])
def test_binary_int32(rng, op):
    # Mixed signs and inexact quotients: DIV truncates, FLOOR_DIV floors.
    a = rand(rng, (5, 6), I32, low=-50, high=50)
    b = nonzero(rng, (6,), I32, low=-7, high=7)
    (out,) = check_op(op, [a, b], [((5, 6), I32)])
    if op == "DIV":
        np.testing.assert_array_equal(out, np.trunc(a / b).astype(I32))


@pytest.mark.parametrize("op", ["MAXIMUM", "MINIMUM", "FLOOR_MOD"])
def test_binary_int64(rng, op):
    a = rand(rng, (3, 4), I64, low=-1000, high=1000)
    b = nonzero(rng, (3, 4), I64, low=-9, high=9)
    check_op(op, [a, b], [((3, 4), I64)])


@pytest.mark.parametrize("act", ["RELU", "RELU6", "RELU_N1_TO_1"])
@pytest.mark.parametrize("dtype", [F32, I32])
def test_div_activation(rng, act, dtype):
    a = rand(rng, (4, 5), dtype, low=-20, high=20)
    b = nonzero(rng, (5,), dtype, low=-3, high=3)
    check_op("DIV", [a, b], [((4, 5), dtype)], fused_activation_function=act)


@pytest.mark.parametrize("op", ["DIV", "FLOOR_DIV", "FLOOR_MOD"])
def test_integer_division_by_zero(op):
    with pytest.raises(EdgeliteError, match=f"{op}.*integer division by zero"):
        run_op(op, [np.array([4, 5], I32), np.array([1, 0], I32)], [((2,), I32)])


def test_maximum_minimum_nan(rng):
    # The reference picks a > b ? a : b: NaN in the first input gives the second.
    a = np.array([np.nan, 1.0, np.nan, 2.0], F32)
    b = np.array([1.0, np.nan, np.nan, 3.0], F32)
    (hi,) = check_op("MAXIMUM", [a, b], [((4,), F32)])
    (lo,) = check_op("MINIMUM", [a, b], [((4,), F32)])
    np.testing.assert_array_equal(hi, [1.0, np.nan, np.nan, 3.0])
    np.testing.assert_array_equal(lo, [1.0, np.nan, np.nan, 2.0])


def test_maximum_constant_operand(rng):
    x = rand(rng, (2, 3, 4))
    check_op("MAXIMUM", [x, const(np.float32(0.25))], [((2, 3, 4), F32)])


@pytest.mark.parametrize("a_shape,b_shape", SHAPES)
def test_pow_float(rng, a_shape, b_shape):
    a = rand(rng, a_shape, low=0.1, high=4)
    b = rand(rng, b_shape, low=-3, high=3)
    check_op("POW", [a, b], [(np.broadcast_shapes(a_shape, b_shape), F32)])


def test_pow_int32(rng):
    a = rand(rng, (4, 5), I32, low=-9, high=9)
    b = rand(rng, (4, 5), I32, low=0, high=8)
    check_op("POW", [a, b], [((4, 5), I32)])
    with pytest.raises(EdgeliteError, match="negative exponent"):
        run_op("POW", [a, -b - 1], [((4, 5), I32)])


@pytest.mark.parametrize("x_shape,alpha_shape", [((1, 4, 4, 3), (3,)), ((1, 4, 4, 3), (1, 1, 3)),
                                                 ((2, 5), (2, 5)), ((2, 3, 4), ()),
                                                 ((2, 3, 4), (3, 1))])
@pytest.mark.parametrize("alpha_const", [True, False])
def test_prelu(rng, x_shape, alpha_shape, alpha_const):
    x = rand(rng, x_shape, low=-3, high=3)
    x.reshape(-1)[0] = 0.0
    alpha = rand(rng, alpha_shape, low=-0.5, high=0.5)
    out_shape = np.broadcast_shapes(x_shape, alpha_shape)
    check_op("PRELU", [x, const(alpha) if alpha_const else alpha], [(out_shape, F32)])


def test_prelu_alpha_widens_output(rng):
    # LiteRT insists the output has the input's shape; edgelite broadcasts both ways.
    x, alpha = rand(rng, (1, 2, 2, 3), low=-3, high=3), rand(rng, (4, 1, 1, 1))
    (out,) = run_op("PRELU", [x, alpha], [((4, 2, 2, 3), F32)])
    np.testing.assert_array_equal(out, np.where(x >= 0, x, x * alpha))


@pytest.mark.parametrize("op", ["DIV", "FLOOR_DIV"])
def test_int64_division(op):
    # LiteRT has no int64 DIV / FLOOR_DIV; edgelite folds int64 shape arithmetic with them.
    a = np.array([7, -7, 7, -7, 6, -(1 << 40)], I64)
    b = np.array([2, 2, -2, -2, 3, 3], I64)
    (out,) = run_op(op, [a, b], [((6,), I64)])
    expected = np.trunc(a / b) if op == "DIV" else np.floor_divide(a, b)
    np.testing.assert_array_equal(out, expected.astype(I64))
