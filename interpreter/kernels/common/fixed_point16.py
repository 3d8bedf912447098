"""gemmlowp's int16 fixed-point logistic and tanh, and TFLite's inverse square root: the
non-linearities of TFLite's integer LSTM (lstm_eval.cc, EvalInteger8x8_16).

tensor_utils::ApplySigmoid / ApplyTanh (tensorflow/lite/kernels/internal/reference/
portable_tensor_utils.cc; LiteRT's x86 build takes the portable versions in both kernel
sets) evaluate, per int16 value,

    ApplySigmoid:           gemmlowp::logistic(FixedPoint<int16, 3>::FromRaw(x)).raw()
    ApplyTanh(bits, x):     gemmlowp::tanh(FixedPoint<int16, bits>::FromRaw(x)).raw()

with gemmlowp's scalar int16 FixedPoint arithmetic (gemmlowp/fixedpoint/fixedpoint.h):
``a + b`` / ``a - b`` / ``-a`` wrap to int16 like the C++ casts, ``a * b`` is
SaturatingRoundingDoublingHighMul on int16 (round half up of a * b / 2^15), Rescale is a
saturating shift left or a rounding (half away from zero) shift right, and the constants
are the int32 ones of fixedpoint.h rounding-shifted right by 16 bits
(RescaleConstantInitializer). The functions below run that arithmetic on numpy int64
arrays holding int16 values; ``logistic_table`` / ``tanh_table`` evaluate it once on all
65536 inputs, so the kernels' invoke() is one table lookup per gate.

LiteRT's optimized int16 LOGISTIC / TANH kernels (optimized_ops::Logistic / Tanh, the
default kernel set) run the same gemmlowp functions: tests/interpreter/kernels/
test_fixed_point16.py checks these tables against them on every input.

TFLite Micro's integer LSTM uses other (table-interpolated) int16 sigmoid / tanh kernels
(reference_integer_ops::Logistic / Tanh): these tables reproduce LiteRT's, not TFLM's.
"""

from __future__ import annotations

import functools

import numpy as np

from ...quant_math import (rounding_divide_by_pot, saturating_rounding_doubling_high_mul,
                           saturating_rounding_multiply_by_pot)

INT16_MIN, INT16_MAX = -(2**15), 2**15 - 1


def _wrap(x):
    """The C++ cast of an int result back to int16 (two's complement)."""
    return ((np.asarray(x, np.int64) + 2**15) & 0xFFFF) - 2**15


def _constant(raw_int32: int) -> int:
    """RescaleConstantInitializer<int16>: RoundingDivideByPOT<int32>(raw, 16)."""
    return int(rounding_divide_by_pot(np.int64(raw_int32), 16))


def _mul(a, b):
    """SaturatingRoundingDoublingHighMul<int16>: (a*b + nudge) / 2^15, C division;
    -32768 * -32768 saturates to 32767."""
    ab = np.asarray(a, np.int64) * np.asarray(b, np.int64)
    nudge = np.where(ab >= 0, 1 << 14, 1 - (1 << 14))
    total = ab + nudge
    q = np.right_shift(np.abs(total), 15)
    out = np.where(total < 0, -q, q)
    return np.where(ab == 2**30, INT16_MAX, out)  # only (-32768)^2 reaches 2^30


def _mul_pot(x, exponent: int):
    """SaturatingRoundingMultiplyByPOT<exponent> on int16 raw values."""
    return saturating_rounding_multiply_by_pot(x, exponent, bits=16)


def _one(integer_bits: int) -> int:
    """FixedPoint::One(): the largest raw value with 0 integer bits, else 2^fraction."""
    return INT16_MAX if integer_bits == 0 else 1 << (15 - integer_bits)


def _exp_on_interval_between_negative_one_quarter_and_0_excl(a):
    constant_term = _constant(1895147668)  # exp(-1/8)
    constant_1_over_3 = _constant(715827883)
    x = _wrap(a + (1 << 12))  # a + 1/8 (ConstantPOT<-3> with 15 fractional bits)
    x2 = _mul(x, x)
    x3 = _mul(x2, x)
    x4 = _mul(x2, x2)
    x4_over_4 = _mul_pot(x4, -2)
    poly = _mul_pot(_wrap(_mul(_wrap(x4_over_4 + x3), constant_1_over_3) + x2), -1)
    # AddSaturatingIf16Bit: a saturating add for int16.
    return np.clip(constant_term + _mul(constant_term, _wrap(x + poly)), INT16_MIN, INT16_MAX)


# exp(-2^k) in Q0.31 for k = -2..4 (fixedpoint.h's GEMMLOWP_EXP_BARREL_SHIFTER table).
_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
           (2, 39332535), (3, 720401), (4, 242))


def _exp_on_negative_values(a, integer_bits: int):
    """exp(a) for a <= 0 given with ``integer_bits`` integer bits; result in Q0.15."""
    frac_bits = 15 - integer_bits
    one_quarter = 1 << (frac_bits - 2)
    a_mod = _wrap((a & (one_quarter - 1)) - one_quarter)
    result = _exp_on_interval_between_negative_one_quarter_and_0_excl(
        _mul_pot(a_mod, integer_bits))  # Rescale<0>
    remainder = _wrap(a_mod - a)
    for exponent, multiplier in _BARREL:
        if integer_bits > exponent:
            bit = 1 << (frac_bits + exponent)
            result = np.where(remainder & bit, _mul(result, _constant(multiplier)), result)
    if integer_bits > 5:
        clamp = _constant(-(1 << (36 - integer_bits)))  # -32
        result = np.where(a < clamp, 0, result)
    return np.where(a == 0, _one(0), result)


def _newton_reciprocal(half_denominator):
    """The three Newton-Raphson steps of one_over_one_plus_x / one_minus_x_over_one_plus_x:
    x ~= 1 / half_denominator in Q2.13."""
    c48_over_17 = _constant(1515870810)
    c_neg32_over_17 = _constant(-1010580540)
    one_f2 = _one(2)
    x = _wrap(c48_over_17 + _mul(half_denominator, c_neg32_over_17))
    for _ in range(3):
        one_minus = _wrap(one_f2 - _mul(half_denominator, x))
        x = _wrap(x + _mul_pot(_mul(x, one_minus), 2))  # F4 -> Rescale<2>
    return x


def _rounding_half_sum(a, b):
    total = np.asarray(a, np.int64) + b
    sign = np.where(total >= 0, 1, -1)
    s = total + sign
    q = np.right_shift(np.abs(s), 1)
    return _wrap(np.where(s < 0, -q, q))


def logistic(a, integer_bits: int):
    """gemmlowp::logistic(FixedPoint<int16, integer_bits>) -> Q0.15 raw values."""
    a = np.asarray(a, np.int64)
    positive = a > 0
    abs_input = np.where(positive, a, _wrap(-a))
    e = _exp_on_negative_values(_wrap(-abs_input), integer_bits)
    x = _newton_reciprocal(_rounding_half_sum(e, _one(0)))
    result_if_positive = _mul_pot(x, 1)  # ExactMulByPot<-1> then Rescale<0> from F1
    result_if_negative = _wrap(_one(0) - result_if_positive)
    out = np.where(positive, result_if_positive, result_if_negative)
    return np.where(a == 0, _constant(1 << 30), out)


def tanh(a, integer_bits: int):
    """gemmlowp::tanh(FixedPoint<int16, integer_bits>) -> Q0.15 raw values."""
    a = np.asarray(a, np.int64)
    negative = a < 0
    n = np.where(negative, a, _wrap(-a))
    e = _exp_on_negative_values(n, integer_bits + 1)  # ExactMulByPot<1>
    x = _newton_reciprocal(_rounding_half_sum(e, _one(0)))
    t = _mul_pot(_wrap(x - _one(2)), 2)  # Rescale<0> from F2
    return np.where(a == 0, 0, np.where(negative, _wrap(-t), t))


_ALL_INT16 = np.arange(INT16_MIN, INT16_MAX + 1, dtype=np.int64)


@functools.lru_cache(maxsize=None)
def logistic_table(integer_bits: int = 3) -> np.ndarray:
    """int16 table of logistic over every raw input, indexed by ``x + 32768``."""
    table = logistic(_ALL_INT16, integer_bits).astype(np.int16)
    table.setflags(write=False)
    return table


@functools.lru_cache(maxsize=None)
def tanh_table(integer_bits: int) -> np.ndarray:
    """int16 table of tanh over every raw input (``integer_bits`` in 0..6, as
    PortableApplyTanh dispatches), indexed by ``x + 32768``."""
    table = tanh(_ALL_INT16, integer_bits).astype(np.int16)
    table.setflags(write=False)
    return table


def lookup(table: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """out = table[x] for int16 ``x`` (a view of the bits as uint16 plus 32768)."""
    np.take(table, x.astype(np.int64) + 32768, out=out)


# --------------------------------------------------------------------------- 1/sqrt


def inv_sqrt_multiplier(value: int) -> tuple[int, int]:
    """GetInvSqrtQuantizedMultiplierExp(value, reverse_shift=-1) (internal/common.h):
    (multiplier, shift) with 1/sqrt(value) ~= multiplier * 2^(shift - 31), in gemmlowp's
    int32 fixed point (5 Newton-Raphson steps in Q3.28). Scalar: one per batch row."""
    if value <= 1:
        return 2**31 - 1, 0
    shift = 11
    while value >= (1 << 29):
        value //= 4
        shift += 1
    leading_zeros = 32 - int(value).bit_length()
    pairs = (leading_zeros - 1) // 2 - 1
    shift -= pairs
    value <<= 2 * pairs

    def mul(a, b):
        return int(saturating_rounding_doubling_high_mul(a, b))

    def to_q3(x, from_bits):  # Rescale<3>: a saturating shift left by from_bits - 3
        return int(np.clip(x << (from_bits - 3), -(2**31), 2**31 - 1))

    x_in = value >> 1
    half_input = int(rounding_divide_by_pot(np.int64(x_in), 1))
    half_three = (1 << 28) + (1 << 27)
    x = 1 << 28  # F3::One()
    for _ in range(5):
        x3 = to_q3(mul(mul(x, x), x), 9)  # F3 * F3 * F3 is F9
        x = to_q3(_wrap32(mul(half_three, x) - mul(half_input, x3)), 6)  # F3 * F3 is F6
    x = mul(x, 1518500250)  # * sqrt(2)/2 in Q0.31
    if shift < 0:
        x <<= -shift
        shift = 0
    return x, -shift


def _wrap32(v: int) -> int:
    """gemmlowp's scalar int32 subtraction (wraps like the C++ int32 result)."""
    return ((v + 2**31) & 0xFFFFFFFF) - 2**31
