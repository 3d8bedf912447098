"""interpreter/kernels/binary.py: DIV / FLOOR_DIV / FLOOR_MOD / MAXIMUM / MINIMUM /
SQUARED_DIFFERENCE / POW / PRELU against LiteRT's kernels; FLOOR_MOD for every type
LiteRT's floor_mod.cc takes (int8, int16, int32, int64, float32), bit for bit, sign of zero
included."""

import numpy as np
import pytest

from edgelite.interpreter import EdgeliteError
from tests.support import (assert_bit_exact, full_range, rand, random_qparams, run_edgelite,
                          run_litert)

from ..op_models import check_op, const, op_model, run_op
from .test_logical import SHAPES as QUANTIZED_SHAPES, binary_model

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



INTS = [np.int8, np.int16, np.int32, np.int64]
KERNEL_SETS = ("reference", "default")


def floor_mod(a, b):
    """reference/floor_mod.h: t = a % b (C++: truncated) or fmod(a, b), then t + b where
    t != 0 and the signs of t and b differ -- Python's % for integers."""
    a, b = np.broadcast_arrays(a, b)
    if a.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            t = np.fmod(a, b)
    else:
        t = np.array([_cpp_remainder(int(x), int(y)) for x, y in zip(a.ravel(), b.ravel())],
                     a.dtype).reshape(a.shape)
    fix = (t != 0) & ((b < 0) != (t < 0))
    return np.where(fix, t + b, t).astype(a.dtype)


def _cpp_remainder(x: int, y: int) -> int:
    """C++ x % y: the quotient truncated toward zero."""
    q = abs(x) // abs(y)
    return x - y * (q if (x < 0) == (y < 0) else -q)


def check_floor_mod(a, b):
    shape = np.broadcast_shapes(a.shape, b.shape)
    model, feeds = op_model("FLOOR_MOD", [a, b], [(shape, a.dtype)])
    want = floor_mod(a, b)
    for kernels in KERNEL_SETS:
        (ours,) = run_edgelite(model, feeds, kernels)
        (theirs,) = run_litert(model, feeds, kernels)
        assert ours.dtype == a.dtype and ours.shape == shape
        bits = np.dtype(f"u{a.itemsize}")
        np.testing.assert_array_equal(ours.view(bits), theirs.view(bits), err_msg=kernels)
        np.testing.assert_array_equal(ours.view(bits), want.view(bits))
    return ours


# Every sign combination, exact multiples (remainder 0), |a| < |b|, and the extremes.
def signed_pairs(dtype):
    info = np.iinfo(dtype)
    a = [7, -7, 7, -7, 6, -6, 0, 3, -3, info.max, info.min, info.min, info.max, info.min + 1]
    b = [3, 3, -3, -3, 3, -3, 5, 7, -7, 2, 3, info.max, info.min, -1]
    return np.array(a, dtype), np.array(b, dtype)


@pytest.mark.parametrize("dtype", INTS)
def test_integers(dtype):
    a, b = signed_pairs(dtype)
    out = check_floor_mod(a, b)
    np.testing.assert_array_equal(out[:9], [1, 2, -2, -1, 0, 0, 0, 3, -3])


@pytest.mark.parametrize("dtype", INTS)
def test_integers_broadcast(rng, dtype):
    a = rng.integers(-100, 100, (2, 3, 4)).astype(dtype)
    b = np.array([5, -3, 7, -1], dtype)
    check_floor_mod(a, b)
    check_floor_mod(b.reshape(4, 1), a[0, :1])  # [4, 1] against [1, 4]


def test_float_signs_of_zero_inf_and_nan():
    # A zero remainder keeps a's sign (fmod), where np.mod would give b's.
    a = np.array([-4, 4, -4, 4, 5, -5, 1.5, -1.5, np.inf, -1, 1, np.nan, 3, 0.0, -0.0, 7],
                 np.float32)
    b = np.array([2, -2, -2, 2, 3, 3, np.inf, np.inf, 2, np.inf, -np.inf, 1, np.nan, 3, 3, 0],
                 np.float32)
    out = check_floor_mod(a, b)
    np.testing.assert_array_equal(np.signbit(out[:4]), [True, False, True, False])
    np.testing.assert_array_equal(out[4:8], [2, 1, 1.5, np.inf])


def test_float_broadcast(rng):
    a = rng.uniform(-10, 10, (3, 1, 5)).astype(np.float32)
    b = rng.uniform(0.5, 3, (4, 1)).astype(np.float32) * np.array([[1], [-1], [1], [-1]],
                                                                 np.float32)
    check_floor_mod(a, b)


@pytest.mark.parametrize("dtype", INTS)
def test_integer_division_by_zero_fails(dtype):
    a, b = np.array([4, 5], dtype), np.array([1, 0], dtype)
    model, feeds = op_model("FLOOR_MOD", [a, b], [((2,), dtype)])
    with pytest.raises(EdgeliteError, match="FLOOR_MOD.*integer division by zero"):
        run_edgelite(model, feeds, "default")
    with pytest.raises(RuntimeError, match="Division by 0"):
        run_litert(model, feeds, "reference")


def test_uint8_is_refused_like_litert():
    a = np.array([4, 5], np.uint8)
    with pytest.raises(EdgeliteError, match="has type uint8; this kernel supports float32, "
                       "int8, int16, int32, int64"):
        run_op("FLOOR_MOD", [a, a], [((2,), np.uint8)])


# Quantized inputs are compared and copied raw: the inputs share the output's parameters.
@pytest.mark.parametrize("op", ["MAXIMUM", "MINIMUM"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16])
@pytest.mark.parametrize("shapes", QUANTIZED_SHAPES[1:3])
def test_quantized_maximum_minimum(rng, op, dtype, shapes):
    q = random_qparams(rng, dtype, 0.01, 0.1) if dtype != np.int16 else (0.001, 0)
    model = binary_model(op, dtype, shapes, q, q, dtype, q)
    feeds = [full_range(rng, s, dtype) for s in shapes]
    assert_bit_exact(model, feeds)


BITS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32]


@pytest.mark.parametrize("dtype", BITS)
def test_bitwise_xor(rng, dtype):
    """Every bit pattern of the type's extremes, broadcast [2, 3, 4] against [4]: equal to
    LiteRT's bitwise_xor.cc and to a ^ b."""
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, (2, 3, 4), endpoint=True).astype(dtype)
    b = np.array([info.min, info.max, 0, -1 if info.min < 0 else 1], dtype)
    model, feeds = op_model("BITWISE_XOR", [a, b], [((2, 3, 4), np.dtype(dtype))])
    (ours,) = run_edgelite(model, feeds)
    (theirs,) = run_litert(model, feeds, "default")
    assert ours.dtype == dtype
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(ours, a ^ b)


def test_bitwise_xor_refuses_float(rng):
    a = rand(rng, (4,))
    with pytest.raises(EdgeliteError, match="BITWISE_XOR"):
        run_op("BITWISE_XOR", [a, a], [((4,), F32)])
