"""Fixed-point primitives of TFLite's integer kernels, vectorised over numpy int64 arrays.

Quantized values map to reals as ``r = scale * (q - zero_point)``. An integer kernel
accumulates in int32 and rescales with a *quantized multiplier*: a real multiplier
``M`` (e.g. ``s_in * s_w / s_out`` for a convolution) is split once, in prepare(), into an
int32 mantissa ``m`` in [2^30, 2^31) and a power-of-two exponent ``shift`` with

    M ~= m * 2^(shift - 31)                            (QuantizeMultiplier)

and every invoke() computes ``round(x * M)`` from ``x``, ``m`` and ``shift`` alone
(MultiplyByQuantizedMultiplier). TFLite has two roundings for that product:

* ``Rounding.DOUBLE`` (gemmlowp, TFLite's classic build, ``TFLITE_SINGLE_ROUNDING=0``)::

      left = max(shift, 0), right = max(-shift, 0)
      y = SaturatingRoundingDoublingHighMul(x * 2^left, m)   # round(x * m / 2^31)
      out = RoundingDivideByPOT(y, right)                     # round(y / 2^right)

  rounding twice: the high-mul rounds half *up* (towards +inf), the divide rounds half
  *away from zero*.
* ``Rounding.SINGLE`` (builds compiled with ``TFLITE_SINGLE_ROUNDING=1``; neither LiteRT's
  wheel nor TFLite Micro's tflite-micro package is one: both round twice, measured)::

      t = 31 - shift
      out = (x * m + 2^(t-1)) >> t                            # round half up, once

Sources: tensorflow/lite/kernels/internal/common.h / common.cc (MultiplyByQuantizedMultiplier
and friends), quantization_util.cc (QuantizeMultiplier, PreprocessSoftmaxScaling,
CalculateInputRadius) and gemmlowp's fixedpoint/fixedpoint.h.

What the installed LiteRT (ai-edge-litert 2.3.0, x86-64) does, measured with one-op
int8 / uint8 models whose results sit on rounding ties
(tests/interpreter/test_kernel_set.py keeps the evidence). REF is
``OpResolverType.BUILTIN_REF``; DEFAULT is ``AUTO`` == ``BUILTIN``: the XNNPACK delegate
for the ops it takes, TFLite's optimized kernels (built with NEON_2_SSE) for the rest.
"double" = this module's MultiplyByQuantizedMultiplier with Rounding.DOUBLE: LiteRT's
wheel is a double-rounding build (rounding="single" mismatches on the tie models).

=======================  ==============================  ===================================
op                       REF (BUILTIN_REF)               DEFAULT (AUTO / BUILTIN)
=======================  ==============================  ===================================
CONV_2D                  double                          XNNPACK fp32: rint(f32(acc) * f32 M)
DEPTHWISE_CONV_2D        double                          XNNPACK fp32; uint8 filter with
                                                         quantized_dimension != 0 is not
                                                         delegated: double (same as REF)
FULLY_CONNECTED          float64: round_half_away(       XNNPACK fp32
                         acc * double M), no MBQM
ADD / SUB                double (left_shift 20,          XNNPACK vadd: 21-bit multipliers,
                         T = 2 max(s1, s2)); SUB with    one rounding, half up; ADD past
                         an output multiplier > 1:       XNNPACK's ratios: NEON blocks that
                         masked shifts, vector elements  narrow to int16 (wrapping), double
                         +-1 (add_paths.py)              on the tails (add_paths.py)
MUL                      double                          XNNPACK fp32
AVERAGE_POOL_2D          integer, half away              same (not delegated)
MAX_POOL_2D              exact (TFLite clamp)            exact (XNNPACK clamp, half even)
MEAN                     double (reduce.h)               XNNPACK fp32, scale (s_in/s_out)/n
SOFTMAX                  gemmlowp fixed point (exp,      float table, expf (not delegated)
                         1/(1+x)); MBQM > 1 only
LOGISTIC / TANH          float table (expf / tanhf),     XNNPACK float table; agrees with
                         half away                       REF on every scale measured
HARD_SWISH               int16 fixed point               same (not delegated)
LEAKY_RELU               double                          XNNPACK: 8-bit multipliers, half up
RELU / RELU6 / RELU_N1   double                          same (not delegated)
QUANTIZE float -> q      round_half_away(x / s)          XNNPACK: rint(x * (1 / s))
QUANTIZE q -> q (same    double                          XNNPACK: 8-bit multiplier, half up
  type)
QUANTIZE int8 <-> uint8  double                          optimized NEON: SRDHM then a
                                                         half-up shift (16 at a time),
                                                         double on the tail
CONCATENATION (uint8)    float, half away                same (not delegated)
RESIZE_BILINEAR          uint8: float, half away;        XNNPACK: 11-bit weights, half up
                         int8: 10-bit fixed, half away
DEQUANTIZE, RESHAPE,     exact                           exact
SQUEEZE, PAD, RESIZE_NN
LSTM, UNIDIRECTIONAL_    double; int16 gemmlowp sigmoid  same kernel (not delegated)
  SEQUENCE_LSTM (int8)   / tanh; peephole: NEON half-up
                         per 16-block (lstm/integer_cell.py)
=======================  ==============================  ===================================

MICRO (``kernels="micro"``, TensorFlow Lite Micro's reference kernels, measured against the
tflite-micro runtime on random single-op files and every int8 / 16x8 file of the suite) is
REF everywhere except:

=======================  ==================================================================
op                       MICRO (TFLM's micro/kernels/*.cc)
=======================  ==================================================================
FULLY_CONNECTED (int8)   double MBQM of the int32 acc (reference_integer_ops::FullyConnected);
                         per-tensor M = float32(s_x * s_w) / s_out (requantize.micro_fc_reals)
FULLY_CONNECTED (16x8)   MBQM, int64 overload (int64 bias) -- LiteRT REF: float64 rescale
MUL (int8, 16x8)         M = double(s1) * double(s2) / double(s_out) (mul_multiplier)
RELU6 (int8, int16)      clamp(q, z_in, q(6.0) in the input's scale): no rescale to the output
SUM (int8, int16)        data read as its own type (LiteRT REF reads it as uint8)
SOFTMAX (16x8)           LUTPopulateInt16<float>: tables in float32 (LiteRT: double)
UNIDIRECTIONAL_SEQUENCE_ TFLM's own lstm_eval.cc (lstm/micro.py): FC multipliers to 2^-12,
  LSTM (int8)            reference LUT sigmoid / tanh, MulElementwise cell and hidden
                         updates, h requantized to the output state's own parameters;
                         no CIFG / peephole / layer norm / projection (refused, as TFLM)
=======================  ==================================================================

Equal to REF (random single-op files, several seeds): CONV_2D, DEPTHWISE_CONV_2D (int8 and
16x8), ADD / SUB (int8, 16x8), SQUARED_DIFFERENCE, MAXIMUM, PRELU, LOGISTIC, TANH (int8,
16x8), SOFTMAX (int8), HARD_SWISH, LEAKY_RELU, RELU, ELU, ABS, AVERAGE_POOL_2D, MAX_POOL_2D,
MEAN (int8, int16), REDUCE_MAX, RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR, BATCH_MATMUL,
QUANTIZE (float -> int8 / int16, int8 -> int8), DEQUANTIZE. TFLM lacks (edgelite still runs them): TILE,
POW, RANGE, DENSIFY, sparse tensors, non-constant PAD paddings, int16 GATHER, float16
DEQUANTIZE, uint8 kernels; it refuses AVERAGE_POOL_2D, MAX_POOL_2D and CONCATENATION whose
input and output quantization differ, and LOG_SOFTMAX / EXP outside its parameter limits.

The kernel sets differ from each other on every op above except AVERAGE_POOL_2D,
HARD_SWISH, the RELU family, LOGISTIC, TANH, CONCATENATION, the exact ops and
non-delegated uint8 depthwise convolutions; fused-activation clamps differ where a bound falls on a tie
(TFLite rounds it half away, XNNPACK half to even). edgelite matches both: the
Interpreter's ``kernels`` option picks the set (default: DEFAULT, like LiteRT) and
``rounding`` the MBQM rounding (default: DOUBLE, like LiteRT's build).
"""

from __future__ import annotations

import enum
import math

import numpy as np

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1


class Rounding(enum.Enum):
    """How MultiplyByQuantizedMultiplier rounds (see the module docstring)."""

    DOUBLE = "double"  # gemmlowp SaturatingRoundingDoublingHighMul + RoundingDivideByPOT
    SINGLE = "single"  # (x * m + 2^(t-1)) >> t, t = 31 - shift


# --------------------------------------------------------------------------- scalars


def round_half_away(x):
    """TfLiteRound / std::round: round half away from zero (numpy rounds half to even).

    Exact in the input's float type (integers are rounded as float64): the fraction is taken
    as x - trunc(x), which floating point computes exactly. floor(|x| + 0.5) is not exact: it
    rounds the sum first, so in float32 0.49999997 + 0.5 is 1.0 (std::round gives 0) and an
    odd integer in [2^23, 2^24) plus 0.5 becomes the next even integer."""
    x = np.asarray(x)
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    if x.ndim == 0:
        return round_half_away(x.reshape(1))[0]
    whole = np.trunc(x)
    with np.errstate(invalid="ignore"):  # inf - inf is NaN, which compares False below
        frac = np.subtract(x, whole)
    np.abs(frac, out=frac)
    np.greater_equal(frac, 0.5, out=frac)  # 1.0 where |fraction| >= 0.5, else 0.0
    np.copysign(frac, x, out=frac)
    return np.add(whole, frac, out=whole)


def quantize_multiplier(real: float, rounding: Rounding = Rounding.DOUBLE) -> tuple[int, int]:
    """QuantizeMultiplier: ``real ~= m * 2^(shift - 31)``, m an int32 in [2^30, 2^31).

        (frac, shift) = frexp(real)           # real = frac * 2^shift, frac in [0.5, 1)
        m = round(frac * 2^31)                # half away from zero; exact product
        m == 2^31  ->  m = 2^30, shift += 1   # frac rounded up to 1.0
        shift < -31 -> m = 0, shift = 0       # |real| < ~2^-32: flushed to zero
        SINGLE only: shift > 30 -> m = 2^31 - 1, shift = 30   # saturate

    ``real == 0`` gives (0, 0). Negative multipliers keep their sign in ``m`` (as in
    TFLite); no TFLite kernel feeds them to the SINGLE rounding.
    """
    real = float(real)
    if real == 0.0:
        return 0, 0
    if not math.isfinite(real):
        raise ValueError(f"cannot quantize the multiplier {real}")
    frac, shift = math.frexp(real)
    m = int(round_half_away(frac * 2.0**31))
    if m == 2**31:  # frac rounded up to 1.0 (TFLite checks q_fixed <= 2^31)
        m //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    if rounding is Rounding.SINGLE and shift > 30:
        return INT32_MAX, 30
    return m, shift


def quantize_multiplier_smaller_than_one_exp(real: float,
                                             rounding: Rounding = Rounding.DOUBLE):
    """QuantizeMultiplierSmallerThanOneExp: 0 <= real < 1, so shift <= 0."""
    if not 0.0 <= real < 1.0:
        raise ValueError(f"multiplier {real} is not in [0, 1)")
    return quantize_multiplier(real, rounding)


def quantize_multiplier_greater_than_one(real: float, rounding: Rounding = Rounding.DOUBLE):
    """QuantizeMultiplierGreaterThanOne: real > 1, so shift >= 0 (a left shift)."""
    if not real > 1.0:
        raise ValueError(f"multiplier {real} is not > 1")
    return quantize_multiplier(real, rounding)


def quantize_multipliers(reals, rounding: Rounding = Rounding.DOUBLE):
    """quantize_multiplier over an array (per-channel): (int64 mantissas, int64 shifts)."""
    pairs = [quantize_multiplier(float(r), rounding) for r in np.asarray(reals).reshape(-1)]
    m = np.array([p[0] for p in pairs], np.int64)
    s = np.array([p[1] for p in pairs], np.int64)
    return m, s


# --------------------------------------------------------------------------- int32 helpers


def wrap_int32(x):
    """Two's-complement wrap of int64 values to int32 (what an overflowing int32 op
    gives on every platform TFLite runs on)."""
    x = np.asarray(x, np.int64)
    return ((x + 2**31) & 0xFFFFFFFF) - 2**31


def saturate_int32(x):
    return np.clip(np.asarray(x, np.int64), INT32_MIN, INT32_MAX)


def _trunc_div_pot(x, n: int):
    """x / 2^n rounding towards zero (C integer division), int64."""
    q = np.right_shift(np.abs(x), n)
    return np.where(x < 0, -q, q)


def saturating_rounding_doubling_high_mul(a, b):
    """gemmlowp SaturatingRoundingDoublingHighMul: round(a * b / 2^31) for int32 a, b.

        ab = a * b                                  (exact in int64)
        nudge = 2^30 if ab >= 0 else 1 - 2^30
        out = (ab + nudge) / 2^31                   (C division: truncates towards 0)

    i.e. ties round towards +inf (2.5 -> 3, -2.5 -> -2). The one overflow,
    a = b = INT32_MIN (2^62 / 2^31 = 2^31), saturates to INT32_MAX.
    """
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    out = _trunc_div_pot(ab + nudge, 31)
    overflow = (a == INT32_MIN) & (b == INT32_MIN)
    return np.where(overflow, INT32_MAX, out)


def rounding_divide_by_pot(x, exponent):
    """gemmlowp RoundingDivideByPOT: x / 2^exponent rounded half away from zero.

        mask = 2^exponent - 1
        remainder = x & mask                        (two's complement, so >= 0)
        threshold = mask >> 1, plus 1 when x < 0
        out = (x >> exponent) + (remainder > threshold)

    ``exponent`` in [0, 31], scalar or broadcastable (per channel).
    """
    x = np.asarray(x, np.int64)
    exponent = np.asarray(exponent, np.int64)
    mask = np.left_shift(np.int64(1), exponent) - 1
    remainder = np.bitwise_and(x, mask)
    threshold = np.right_shift(mask, 1) + (x < 0)
    return np.right_shift(x, exponent) + (remainder > threshold)


def saturating_rounding_multiply_by_pot(x, exponent: int, bits: int = 32):
    """SaturatingRoundingMultiplyByPOT<exponent> on int32 (or ``bits``-bit: gemmlowp's
    int16 FixedPoint) raw values: for exponent > 0 a saturating left shift, for
    exponent < 0 RoundingDivideByPOT(x, -exponent)."""
    x = np.asarray(x, np.int64)
    if exponent == 0:
        return x
    if exponent < 0:
        return rounding_divide_by_pot(x, -exponent)
    threshold = (1 << (bits - 1 - exponent)) - 1
    out = np.left_shift(x, exponent)
    out = np.where(x > threshold, (1 << (bits - 1)) - 1, out)
    return np.where(x < -threshold, -(1 << (bits - 1)), out)


# --------------------------------------------------------------------------- MBQM


def multiply_by_quantized_multiplier(x, multiplier, shift,
                                     rounding: Rounding = Rounding.DOUBLE):
    """MultiplyByQuantizedMultiplier(int32 x, m, shift): round(x * m * 2^(shift - 31)).

    ``x`` is int32-valued (any int array); ``multiplier`` and ``shift`` are scalars or
    arrays broadcasting against ``x`` (per-channel along the last axis). Returns int64.

    DOUBLE: RoundingDivideByPOT(SRDHM(x * 2^max(shift, 0), m), max(-shift, 0)), where
            x * 2^left wraps like the C int32 product.
    SINGLE: (x * m + 2^(t-1)) >> t with t = 31 - shift (shift in [-31, 30]); the result
            is wrapped to int32 like TFLite's static_cast.
    """
    x = np.asarray(x, np.int64)
    m = np.asarray(multiplier, np.int64)
    shift = np.asarray(shift, np.int64)
    if rounding is Rounding.SINGLE:
        total = 31 - shift
        out = np.right_shift(x * m + np.left_shift(np.int64(1), total - 1), total)
        return wrap_int32(out)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    if np.any(left):
        x = wrap_int32(np.left_shift(x, left))
    if m.size and m.min() >= 0:
        # Fast form of the same arithmetic (m >= 0 rules out the INT32_MIN^2 overflow):
        #   SRDHM(x, m) = floor((x * m + 2^30) / 2^31)
        #   RDBPOT(y, r) = floor((y + 2^(r-1) - (y < 0)) / 2^r)   for r >= 1
        y = np.right_shift(x * m + (1 << 30), 31)
        if not np.any(right):
            return y
        shifted = right > 0
        half = np.left_shift(np.int64(1), np.maximum(right - 1, 0)) * shifted
        return np.right_shift(y + half - ((y < 0) & shifted), right)
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x, m), right)


def multiply_by_quantized_multiplier_neon(x, multiplier, shift):
    """MultiplyByQuantizedMultiplier4Rows (common.h, double-rounding build): TFLite's NEON
    path, which LiteRT's x86 wheels also run (NEON_2_SSE):

        vrshlq(vqrdmulhq(vshlq(x, max(shift, 0)), m), min(shift, 0))

    vqrdmulh is SaturatingRoundingDoublingHighMul exactly, but the final rounding shift
    rounds half *up* ((y + 2^(n-1)) >> n), not away from zero: -38.5 -> -38."""
    x = np.asarray(x, np.int64)
    shift = np.asarray(shift, np.int64)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    if np.any(left):
        x = wrap_int32(np.left_shift(x, left))
    y = saturating_rounding_doubling_high_mul(x, multiplier)
    half = np.where(right > 0, np.left_shift(np.int64(1), np.maximum(right - 1, 0)), 0)
    return np.right_shift(y + half, right)


def multiply_by_quantized_multiplier_smaller_than_one_exp(
        x, multiplier, left_shift, rounding: Rounding = Rounding.DOUBLE):
    """MultiplyByQuantizedMultiplierSmallerThanOneExp (left_shift <= 0).

    DOUBLE: RoundingDivideByPOT(SRDHM(x, m), -left_shift); SINGLE: the single-rounding
    MultiplyByQuantizedMultiplier. Used by ADD / SUB (add.cc, sub.cc)."""
    if np.any(np.asarray(left_shift) > 0):
        raise ValueError("left_shift must be <= 0")
    return multiply_by_quantized_multiplier(x, multiplier, left_shift, rounding)


def multiply_by_quantized_multiplier_greater_than_one(
        x, multiplier, left_shift, rounding: Rounding = Rounding.DOUBLE):
    """MultiplyByQuantizedMultiplierGreaterThanOne (left_shift >= 0):
    DOUBLE: SRDHM(x * 2^left_shift, m); SINGLE: the single-rounding form."""
    if np.any(np.asarray(left_shift) < 0):
        raise ValueError("left_shift must be >= 0")
    return multiply_by_quantized_multiplier(x, multiplier, left_shift, rounding)


def multiply_by_quantized_multiplier_int64(x, multiplier, shift):
    """The int64-input overload (16x8 kernels): the mantissa is reduced to 16 bits first.

        reduced = (m + 2^15) >> 16   (0x7FFF when m >= 0x7FFF0000)
        t = 15 - shift
        out = (x * reduced + 2^(t-1)) >> t

    Identical in both rounding builds (common.cc)."""
    x = np.asarray(x, np.int64)
    m = np.asarray(multiplier, np.int64)
    reduced = np.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, 0x7FFF)
    total = 15 - np.asarray(shift, np.int64)
    return wrap_int32(np.right_shift(x * reduced + np.left_shift(np.int64(1), total - 1), total))


def mul_multiplier(s1: float, s2: float, s_out: float, micro: bool = False) -> float:
    """MUL's real multiplier M = s1 * s2 / s_out (int8 and int16), before QuantizeMultiplier.
    LiteRT (kernels/mul.cc Prepare) forms it from float32 values in float32:
    float32(float32(s1 * s2) / s_out). TFLite Micro (micro/kernels/mul_common.cc
    CalculateOpDataMul) in double: double(s1) * double(s2) / double(s_out). The two can
    differ in the last bits of M and so give a different mantissa (1 LSB on a few outputs,
    measured on TF's 16x8 EfficientNet-like file)."""
    if micro:
        return float(np.float32(s1)) * float(np.float32(s2)) / float(np.float32(s_out))
    return float(np.float32(np.float32(s1) * np.float32(s2)) / np.float32(s_out))


# --------------------------------------------------------------------------- quantize


def quantize(real, scale: float, zero_point: int, dtype):
    """reference_ops::AffineQuantize: q = clamp(round(r / scale) + zero_point).

    ``r / scale`` is a float32 division (both operands float32, as in TFLite) and the
    rounding is half away from zero (TfLiteRound)."""
    info = np.iinfo(dtype)
    r = np.asarray(real, np.float32)
    scaled = r / np.float32(scale)  # float32 / float32 -> float32
    # Clip before the cast: huge or infinite values saturate (TFLite's int32 cast would be
    # undefined there).
    rounded = np.clip(round_half_away(scaled), -2.0**31, 2.0**31 - 1)
    q = rounded.astype(np.int64) + int(zero_point)
    return np.clip(q, info.min, info.max).astype(dtype)


def dequantize(q, scale: float, zero_point: int):
    """reference_ops::Dequantize: r = float32(scale * (q - zero_point)), product in
    double (scale is a double there)."""
    diff = np.asarray(q, np.int64) - int(zero_point)
    return (np.float64(scale) * diff).astype(np.float32)


def quantize_in_range(value: float, scale: float, zero_point: int) -> int:
    """zero_point + static_cast<int32>(TfLiteRound(value / scale)), float32 division
    (the ``quantize`` lambda of CalculateActivationRangeQuantized)."""
    return int(zero_point) + int(round_half_away(np.float32(value) / np.float32(scale)))


def activation_range(activation: int, scale: float, zero_point: int, dtype) -> tuple[int, int]:
    """CalculateActivationRangeQuantized (kernel_util.cc) for a fused activation code.

    NONE -> [qmin, qmax]; RELU -> [max(qmin, q(0)), qmax]; RELU6 -> [max(qmin, q(0)),
    min(qmax, q(6))]; RELU_N1_TO_1 -> [max(qmin, q(-1)), min(qmax, q(1))], where
    q(v) = zero_point + round(v / scale)."""
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    q = lambda v: quantize_in_range(v, scale, zero_point)  # noqa: E731
    if activation == 1:  # RELU
        return max(lo, q(0.0)), hi
    if activation == 3:  # RELU6
        return max(lo, q(0.0)), min(hi, q(6.0))
    if activation == 2:  # RELU_N1_TO_1
        return max(lo, q(-1.0)), min(hi, q(1.0))
    return lo, hi
