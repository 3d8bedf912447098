"""DIV / FLOOR_DIV / FLOOR_MOD / MAXIMUM / MINIMUM / SQUARED_DIFFERENCE / POW / PRELU,
unary math, LEAKY_RELU / ELU / HARD_SWISH / GELU, LOG_SOFTMAX, L2_NORMALIZATION and
REDUCE_PROD / ANY / ALL against LiteRT's reference kernels."""

import numpy as np
import pytest

from edgelite.interpreter import EdgeliteError

from .op_models import check_op, check_op_default, const, run_op
from .oracle import assert_matches_litert, rand
from .test_reduce import reduce_model

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


UNARY = {
    "EXP": (-20, 20), "LOG": (0.001, 100), "SQRT": (0, 100), "RSQRT": (0.001, 100),
    "SQUARE": (-100, 100), "ABS": (-10, 10), "NEG": (-10, 10), "SIN": (-10, 10),
    "COS": (-10, 10), "FLOOR": (-10, 10), "CEIL": (-10, 10), "ROUND": (-10, 10),
    "SIGN": (-3, 3),
}


NOT_IN_REF_RESOLVER = {"CEIL", "ROUND", "ELU"}  # LiteRT's BUILTIN_REF lacks these


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_float(rng, op):
    low, high = UNARY[op]
    x = rand(rng, (3, 50), low=low, high=high)
    if op in ("ROUND", "SIGN"):
        x[0, :8] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.0, 3.0]
    check = check_op_default if op in NOT_IN_REF_RESOLVER else check_op
    check(op, [x], [(x.shape, F32)])


@pytest.mark.parametrize("op,dtype", [("ABS", I32), ("NEG", I32), ("NEG", I64), ("SIGN", I32)])
def test_unary_int(rng, op, dtype):
    x = rand(rng, (4, 9), dtype, low=-1000, high=1000)
    check_op(op, [x], [(x.shape, dtype)])


def test_square_int32(rng):
    # LiteRT's SQUARE is float only; edgelite also squares int32 (wrapping).
    x = rand(rng, (4, 9), I32, low=-1000, high=1000)
    (out,) = run_op("SQUARE", [x], [(x.shape, I32)])
    np.testing.assert_array_equal(out, x * x)


def test_unary_special_values():
    x = np.array([0.0, -1.0, np.inf, -0.0], F32)
    for op in ("LOG", "SQRT", "RSQRT"):
        check_op(op, [x], [((4,), F32)])
    check_op("EXP", [np.array([100.0, -200.0, 0.0], F32)], [((3,), F32)])


@pytest.mark.parametrize("alpha", [0.2, 0.01, 1.5, -0.3])
def test_leaky_relu(rng, alpha):
    x = rand(rng, (2, 5, 7), low=-4, high=4)
    x[0, 0, :2] = [0.0, -0.0]
    check_op("LEAKY_RELU", [x], [(x.shape, F32)], alpha=alpha)


@pytest.mark.parametrize("op", ["ELU", "HARD_SWISH", "RELU_0_TO_1"])
def test_activation_float(rng, op):
    x = np.concatenate([rand(rng, (200,), low=-8, high=8),
                        np.array([-3, 3, 0, -1e-5, 1e-5, -20, 20], F32)])
    check = check_op_default if op in NOT_IN_REF_RESOLVER else check_op
    check(op, [x], [(x.shape, F32)])


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu(rng, approximate):
    x = np.concatenate([rand(rng, (300,), low=-6, high=6), np.linspace(-12, 12, 97, dtype=F32),
                        np.array([0.0, -30.0, 30.0, 1e-4], F32)])
    check_op("GELU", [x], [(x.shape, F32)], approximate=approximate, rtol=2e-6)


@pytest.mark.parametrize("shape", [(1, 10), (3, 4, 7), (5,)])
def test_log_softmax(rng, shape):
    x = rand(rng, shape, low=-10, high=10)
    check_op("LOG_SOFTMAX", [x], [(shape, F32)])


@pytest.mark.parametrize("shape", [(1, 10), (2, 3, 16), (4,), (1, 1, 1, 64)])
def test_l2_normalization(rng, shape):
    x = rand(rng, shape, low=-3, high=3)
    check_op("L2_NORMALIZATION", [x], [(shape, F32)])


def test_l2_normalization_epsilon():
    # A zero row stays zero; a row whose norm is below 1e-6 is divided by 1e-6.
    x = np.array([[0.0, 0.0, 0.0], [3e-7, -4e-7, 0.0], [3.0, 4.0, 0.0]], F32)
    (out,) = check_op("L2_NORMALIZATION", [x], [((3, 3), F32)])
    np.testing.assert_allclose(out, [[0, 0, 0], [0.3, -0.4, 0], [0.6, 0.8, 0]], rtol=1e-6)


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


@pytest.mark.parametrize("op", ["DIV", "FLOOR_DIV"])
def test_int64_division(op):
    # LiteRT has no int64 DIV / FLOOR_DIV; edgelite folds int64 shape arithmetic with them.
    a = np.array([7, -7, 7, -7, 6, -(1 << 40)], I64)
    b = np.array([2, 2, -2, -2, 3, 3], I64)
    (out,) = run_op(op, [a, b], [((6,), I64)])
    expected = np.trunc(a / b) if op == "DIV" else np.floor_divide(a, b)
    np.testing.assert_array_equal(out, expected.astype(I64))


@pytest.mark.parametrize("op,options,low,high", [
    ("EXP", {}, -20, 20), ("LOG", {}, 0.001, 100), ("SIN", {}, -10, 10), ("COS", {}, -10, 10),
    ("HARD_SWISH", {}, -8, 8), ("GELU", dict(approximate=False), -6, 6),
    ("GELU", dict(approximate=True), -6, 6), ("LOG_SOFTMAX", {}, -10, 10),
    ("L2_NORMALIZATION", {}, -3, 3), ("LEAKY_RELU", dict(alpha=0.1), -3, 3),
])
def test_against_default_kernels(rng, op, options, low, high):
    # LiteRT's optimized kernels (Eigen / XNNPACK) round differently from its reference
    # kernels, by up to ~100 ulp for SIN / COS / LOG: still within rtol 1e-5 relative to
    # the tensor's magnitude.
    x = rand(rng, (4, 64), low=low, high=high)
    check_op_default(op, [x], [(x.shape, F32)], **options)
