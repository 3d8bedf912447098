"""SOFTMAX over the last dimension with beta, float32 and int8 / uint8; LOG_SOFTMAX, float32
(at the end).

Matches tensorflow/lite/kernels/activations.cc (SoftmaxPrepare / SoftmaxFloat) and
reference_ops::Softmax (tensorflow/lite/kernels/internal/reference/softmax.h); per row:

    max = max_c x[c]                         (subtracted for numerical stability)
    e[c] = exp((x[c] - max) * beta)
    out[c] = e[c] / sum_c e[c]

beta comes from SoftmaxOptions; like TFLite's ParseSoftmax, an absent options table
leaves beta at its schema default 0.0.

int8 / uint8 (output scale 1/256, zero point -128 for int8 and 0 for uint8, as TFLite's
quantization spec fixes them). The two LiteRT kernel sets compute it differently (activations.cc SoftmaxPrepare; the
XNNPACK delegate does not take quantized softmax):

* REFERENCE -- reference_ops::Softmax (tensorflow/lite/kernels/internal/reference/
  softmax.h), gemmlowp fixed point. With (m, l) = PreprocessSoftmaxScaling(beta, s_in, 5)
  (M = min(beta * s_in * 2^26, 2^31 - 1) > 1, QuantizeMultiplierGreaterThanOne) and
  diff_min = -CalculateInputRadius(5, l), per row:
      d = q - max(row)                              (<= 0)
      z = MBQM_greater_than_one(d, m, l)            (Q5.26: beta * s_in * d)
      e = exp_on_negative_values(z)                 (Q0.31, gemmlowp)
      S = sum of Rescale<12>(e) over d >= diff_min  (Q12.19)
      r = one_over_one_plus_x(S normalised)         (GetReciprocal, Q0.31)
      out = RoundingDivideByPOT(SRDHM(r, e), bits_over_unit + 23) + qmin
  and qmin where d < diff_min.
* DEFAULT -- optimized_ops::Softmax with a float table (PopulateSoftmaxLookupTable):
      table[255 - v] = expf(-s_in * beta * v), v = 0..255
      S = sum of table[255 - max + q] (float32, in order)
      p = table[...] * (1 / (S * 1/256))          (float32)
      out = int(p + 0.5) for uint8, round_half_away(p) - 128 for int8
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import libm
from .. import native as native_backend
from .. import quant_math as qm
from ..parallel import row_ranges, run_slices, worth_splitting
from edgelite.errors import ModelFormatError
from .base import Chosen, Kernel, OpContext, OutputSpec, num_elements, run_chosen, scratch
from .common import native_ops
from .common.lut import unary_quantized
from .common.native_float_ops import native_softmax_f32
from .opdef import PROBABILITY_OUTPUT, OpDef, QuantRule
from .common.requantize import QUANTIZED, qparams, require_same_type
from .int16.softmax import softmax16
from .versions import INT8_2, INT8_2_INT16_3


@dataclass(frozen=True)
class SoftmaxRecord:
    rows: int
    depth: int  # size of the last dimension
    beta: np.float32
    row_max: np.ndarray  # (rows, 1) scratch
    row_sum: np.ndarray  # (rows, 1) scratch


def softmax_beta(ctx: OpContext) -> np.float32:
    """SoftmaxOptions.beta, refused unless finite: NaN would make every output NaN, and
    an infinite beta gives inf - inf = NaN for the row maximum (TFLite does not check)."""
    beta = np.float32(ctx.option("beta", 0.0))
    if not np.isfinite(beta):
        raise ModelFormatError(f"{ctx.describe()}: beta is {float(beta)}; SOFTMAX needs a "
                               "finite beta")
    return beta


def prepare(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, (np.float32,), "input")
    if x.rank < 1:
        raise ctx.shape_error("input must have at least one dimension")
    depth = x.shape[-1]
    if depth == 0:
        raise ctx.shape_error(f"cannot take a softmax over an empty last dimension {list(x.shape)}")
    rows = num_elements(x.shape[:-1])
    beta = softmax_beta(ctx)
    native = native_softmax_f32(ctx, rows, depth, beta)  # one C pass per row
    record = SoftmaxRecord(rows, depth, beta, scratch(ctx, (rows, 1), np.float32),
                           scratch(ctx, (rows, 1), np.float32))
    return (OutputSpec(x.shape, x.dtype),), native or Chosen(eval, record)


def eval(rec: SoftmaxRecord, inputs, outputs) -> None:
    x = inputs[0].reshape(rec.rows, rec.depth)
    out = outputs[0].reshape(rec.rows, rec.depth)
    np.maximum.reduce(x, axis=1, keepdims=True, out=rec.row_max)  # np.max, no wrapper
    np.subtract(x, rec.row_max, out=out)
    np.multiply(out, rec.beta, out=out)
    np.exp(out, out=out)
    np.add.reduce(out, axis=1, keepdims=True, out=rec.row_sum)  # np.sum, no wrapper
    np.divide(out, rec.row_sum, out=out)


# --------------------------------------------------------------------------- gemmlowp
#
# int8 / uint8 reference softmax: gemmlowp's fixed-point exp and reciprocal.

SCALED_DIFF_INTEGER_BITS = 5
ACCUMULATION_INTEGER_BITS = 12


def _fx_mul(a, b):
    """FixedPoint multiply: SaturatingRoundingDoublingHighMul of the raw values."""
    return qm.saturating_rounding_doubling_high_mul(a, b)


def _wrap(x):
    return qm.wrap_int32(x)


def exp_on_interval_between_negative_one_quarter_and_0_excl(a):
    """gemmlowp: exp(a) for a in [-1/4, 0), Q0.31 in and out (Taylor series around -1/8)."""
    constant_term = 1895147668  # exp(-1/8)
    constant_1_over_3 = 715827883
    x = _wrap(a + (1 << 28))  # a + 1/8
    x2 = _fx_mul(x, x)
    x3 = _fx_mul(x2, x)
    x4 = _fx_mul(x2, x2)
    x4_over_4 = qm.rounding_divide_by_pot(x4, 2)
    poly = qm.rounding_divide_by_pot(
        _wrap(_fx_mul(_wrap(x4_over_4 + x3), constant_1_over_3) + x2), 1)
    return _wrap(constant_term + _fx_mul(constant_term, _wrap(x + poly)))


_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
           (2, 39332535), (3, 720401), (4, 242))  # exp(-2^k) in Q0.31


def exp_on_negative_values(a, integer_bits: int = SCALED_DIFF_INTEGER_BITS):
    """gemmlowp exp_on_negative_values for a Q(integer_bits).(31 - integer_bits) input
    a <= 0; result Q0.31."""
    fractional_bits = 31 - integer_bits
    one_quarter = 1 << (fractional_bits - 2)
    mask = one_quarter - 1
    a_mod_quarter_minus_one_quarter = (a & mask) - one_quarter
    result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        qm.saturating_rounding_multiply_by_pot(a_mod_quarter_minus_one_quarter, integer_bits))
    remainder = a_mod_quarter_minus_one_quarter - a
    for exponent, multiplier in _BARREL:
        if integer_bits > exponent:
            bit = (remainder & (1 << (fractional_bits + exponent))) != 0
            result = np.where(bit, _fx_mul(result, multiplier), result)
    # (integer_bits > 5 would add a clamp below -32; the softmax uses exactly 5.)
    return np.where(a == 0, qm.INT32_MAX, result)


def one_over_one_plus_x_for_x_in_0_1(a):
    """gemmlowp: 1 / (1 + a) for a in [0, 1), Q0.31 in and out (Newton-Raphson)."""
    s = a.astype(np.int64) + qm.INT32_MAX  # RoundingHalfSum(a, One)
    half_denominator = np.where(s >= 0, (s + 1) // 2, -((-s + 1) // 2))
    x = _wrap(1515870810 + _fx_mul(half_denominator, -1010580540))  # 48/17 - 32/17 * d (Q2.29)
    for _ in range(3):
        half_denominator_times_x = _fx_mul(half_denominator, x)
        one_minus = _wrap((1 << 29) - half_denominator_times_x)
        x = _wrap(x + qm.saturating_rounding_multiply_by_pot(_fx_mul(x, one_minus), 2))
    return qm.saturating_rounding_multiply_by_pot(x, 1)  # ExactMulByPot<-1> then Rescale<0>


def get_reciprocal(x, x_integer_digits: int):
    """TFLite GetReciprocal: (1 / x as Q0.31 scaled to [0.5, 1), num_bits_over_unit)."""
    x = np.asarray(x, np.int64)
    # CountLeadingZeros(uint32 x) = 32 - bit_length(x); frexp gives bit_length exactly.
    bit_length = np.frexp(x.astype(np.float64))[1].astype(np.int64)
    headroom_plus_one = 32 - bit_length
    num_bits_over_unit = x_integer_digits - headroom_plus_one
    shifted = ((x << headroom_plus_one) & 0xFFFFFFFF) - (1 << 31)
    return one_over_one_plus_x_for_x_in_0_1(_wrap(shifted)), num_bits_over_unit


# --------------------------------------------------------------------------- int8 / uint8


@dataclass(frozen=True, kw_only=True)
class QSoftmaxRecord:
    rows: int
    depth: int
    qmin: int


@dataclass(frozen=True, kw_only=True)
class ReferenceSoftmaxRecord(QSoftmaxRecord):
    """reference_ops::Softmax, gemmlowp fixed point."""

    multiplier: int
    left_shift: int
    diff_min: int
    rounding: qm.Rounding


@dataclass(frozen=True, kw_only=True)
class TableSoftmaxRecord(QSoftmaxRecord):
    """optimized_ops::Softmax with its float table."""

    table: np.ndarray  # (256,) float32: table[255 - v] = expf(-s*beta*v)
    out_scale: np.float32
    row_max: np.ndarray  # (rows, 1) int32 scratch
    index: np.ndarray  # (rows, depth) int32 scratch: table index per value
    exps: np.ndarray  # (rows, depth) float32 scratch
    sums: np.ndarray  # (rows, depth) float32 scratch: running sums


def prepare_quantized(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, QUANTIZED, "input")
    require_same_type(ctx, x, ctx.outputs[0])
    if x.rank < 1 or x.shape[-1] == 0:
        raise ctx.shape_error(f"cannot take a softmax over the last dimension of {list(x.shape)}")
    xq, out = qparams(ctx, x, "input"), qparams(ctx, ctx.outputs[0], "output")
    qmin = int(np.iinfo(x.dtype).min)
    if out.zero_point != qmin or not math.isclose(out.scale, 1 / 256, rel_tol=1e-3):
        raise ctx.unsupported(
            f"quantized SOFTMAX needs output scale 1/256 and zero point {qmin}, got "
            f"{out.scale} / {out.zero_point}"
        )
    beta = float(softmax_beta(ctx))
    depth, rows = x.shape[-1], num_elements(x.shape[:-1])
    spec = (OutputSpec(x.shape, x.dtype),)
    if ctx.quant.reference:
        # PreprocessSoftmaxScaling (quantization_util.cc).
        max_real = 2.0**31 - 1.0 if ctx.quant.rounding is qm.Rounding.DOUBLE else 2.0**30 - 1.0
        real = min(beta * xq.scale * float(1 << (31 - SCALED_DIFF_INTEGER_BITS)), max_real)
        if not real > 1.0:
            raise ctx.unsupported(f"beta * input scale ({beta} * {xq.scale}) is too small")
        m, shift = qm.quantize_multiplier_greater_than_one(real, ctx.quant.rounding)
        # CalculateInputRadius(5, shift): floor((2^5 - 1) * 2^26 / 2^shift).
        radius = math.floor((2**SCALED_DIFF_INTEGER_BITS - 1)
                            * 2.0**(31 - SCALED_DIFF_INTEGER_BITS) / 2.0**shift)
        return spec, Chosen(eval_reference, ReferenceSoftmaxRecord(
            rows=rows, depth=depth, qmin=qmin, multiplier=m, left_shift=shift,
            diff_min=-radius, rounding=ctx.quant.rounding))
    # PopulateSoftmaxLookupTable (optimized_ops.h): scale = -input_scale * beta (float).
    scale = np.float32(-np.float32(xq.scale) * np.float32(beta))
    v = np.arange(256, dtype=np.float32)
    table = np.empty(256, np.float32)
    table[255 - np.arange(256)] = libm.expf(scale * v)
    if ctx.quant.native:  # the same float32 steps in C, row by row
        return spec, Chosen(eval_native_table, NativeTableSoftmax(
            x.dtype == np.uint8, rows, depth, table, float(np.float32(out.scale)), qmin,
            tuple(row_ranges(rows, worth_splitting(ctx.threads, rows * depth))), ctx.threads))
    work = (rows, depth)
    return spec, Chosen(eval_table, TableSoftmaxRecord(
        rows=rows, depth=depth, qmin=qmin, table=table, out_scale=np.float32(out.scale),
        row_max=scratch(ctx, (rows, 1), np.int32), index=scratch(ctx, work, np.int32),
        exps=scratch(ctx, work, np.float32), sums=scratch(ctx, work, np.float32)))


def eval_reference(rec: ReferenceSoftmaxRecord, inputs, outputs) -> None:
    x = inputs[0].reshape(rec.rows, rec.depth).astype(np.int64)
    diff = x - x.max(axis=1, keepdims=True)
    valid = diff >= rec.diff_min
    scaled = qm.multiply_by_quantized_multiplier_greater_than_one(
        diff, rec.multiplier, rec.left_shift, rec.rounding)
    exps = exp_on_negative_values(scaled)
    terms = np.where(valid, qm.rounding_divide_by_pot(exps, ACCUMULATION_INTEGER_BITS), 0)
    total = _wrap(terms.sum(axis=1, keepdims=True))
    reciprocal, bits_over_unit = get_reciprocal(total, ACCUMULATION_INTEGER_BITS)
    values = qm.rounding_divide_by_pot(_fx_mul(reciprocal, exps), bits_over_unit + 31 - 8)
    values = np.where(valid, values + rec.qmin, rec.qmin)
    info = np.iinfo(outputs[0].dtype)
    np.clip(values, info.min, info.max, out=values)
    np.copyto(outputs[0], values.reshape(outputs[0].shape), casting="unsafe")


def eval_table(rec: TableSoftmaxRecord, inputs, outputs) -> None:
    x = inputs[0].reshape(rec.rows, rec.depth)
    out = outputs[0].reshape(rec.rows, rec.depth)
    index, exps = rec.index, rec.exps
    np.maximum.reduce(x, axis=1, keepdims=True, out=rec.row_max)
    np.subtract(x, rec.row_max, out=index)  # table_offset[input]: 255 - max + q
    np.add(index, 255, out=index)
    rec.table.take(index, out=exps)
    # float32 sum in the kernel's order: add.accumulate adds strictly left to right,
    # unlike np.sum's pairwise summation.
    np.add.accumulate(exps, axis=1, out=rec.sums)
    inverse = np.float32(1.0) / (rec.sums[:, -1:] * rec.out_scale)
    np.multiply(exps, inverse, out=exps)
    # QuantizeSoftmaxOutput: uint8 static_cast<int>(p + 0.5f); int8 TfLiteRound(p) - 128,
    # both floor(p + 0.5f) in float32 for p >= 0. p <= 256: clamp to the type's range.
    np.add(exps, np.float32(0.5), out=exps)
    np.floor(exps, out=exps)
    np.minimum(exps, np.float32(255), out=exps)
    np.add(exps, rec.qmin, out=out, casting="unsafe")


@dataclass(frozen=True)
class NativeTableSoftmax:
    """eval_table's arithmetic in C (native/softmax.c), rows split over the threads."""

    is_uint8: bool
    rows: int
    depth: int
    table: np.ndarray  # (256,) float32, as TableSoftmaxRecord's
    out_scale: float  # a float32 value
    qmin: int
    ranges: tuple  # [start, stop) rows per slice
    threads: int

    def native_step(self, inputs, outputs):
        """The run loop's native step (native/steps.c) where the rows run as one slice,
        with its own scratch (a row of float32 exponentials); else None."""
        x, out = inputs[0], outputs[0]
        return native_ops.one_slice_step(
            self.ranges, (x, out), "softmax_step", x, out, int(self.is_uint8), self.depth,
            self.table, self.out_scale, self.qmin, *self.ranges[0],
            np.zeros(self.depth, np.float32))


def eval_native_table(rec: NativeTableSoftmax, inputs, outputs) -> None:
    args = [(inputs[0], outputs[0], int(rec.is_uint8), rec.depth, rec.table, rec.out_scale,
             rec.qmin, a, b) for a, b in rec.ranges]
    run_slices(rec.threads, native_backend.module.softmax, args)


# --------------------------------------------------------------------------- LOG_SOFTMAX
#
# tensorflow/lite/kernels/internal/reference/log_softmax.h (float), per row:
#     max = max_c x[c];  log_sum = log(sum_c exp(x[c] - max));  out[c] = x[c] - max - log_sum
# (LogSoftmaxOptions is empty: no beta.)


@dataclass(frozen=True)
class LogSoftmaxRecord:
    rows: int
    depth: int
    row_max: np.ndarray  # (rows, 1) scratch
    row_sum: np.ndarray  # (rows, 1) scratch
    work: np.ndarray  # (rows, depth) scratch for the exponentials


def prepare_log_softmax(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, (np.float32,), "input")
    if x.rank < 1 or x.shape[-1] == 0:
        raise ctx.shape_error(f"needs a non-empty last dimension, input is {list(x.shape)}")
    rows, depth = num_elements(x.shape[:-1]), x.shape[-1]
    record = LogSoftmaxRecord(rows, depth, scratch(ctx, (rows, 1), np.float32),
                              scratch(ctx, (rows, 1), np.float32),
                              scratch(ctx, (rows, depth), np.float32))
    return (OutputSpec(x.shape, x.dtype),), record


def eval_log_softmax(rec: LogSoftmaxRecord, inputs, outputs) -> None:
    x = inputs[0].reshape(rec.rows, rec.depth)
    out = outputs[0].reshape(rec.rows, rec.depth)
    np.max(x, axis=1, keepdims=True, out=rec.row_max)
    np.subtract(x, rec.row_max, out=out)
    np.exp(out, out=rec.work)
    np.sum(rec.work, axis=1, keepdims=True, out=rec.row_sum)
    np.log(rec.row_sum, out=rec.row_sum)
    np.subtract(out, rec.row_sum, out=out)


# --------------------------------------------------------------------- LOG_SOFTMAX, int8 / uint8
#
# activations.cc LogSoftmaxPrepare / reference_integer_ops::LogSoftmax (int8) and
# reference_ops::LogSoftmax (uint8), the same gemmlowp arithmetic; the output is fixed at
# scale 16/256 and zero point qmax (127 / 255). Per row, d = q - max(row):
#
#     M, shift = QuantizeMultiplierGreaterThanOne(min(s_in 2^26, 2^31 - 1))
#     diff_min = -floor(31 * 2^26 / 2^shift)                       CalculateInputRadius
#     R, r = QuantizeMultiplierSmallerThanOneExp(2^(31 - shift) / M)
#     sum = sum over d >= diff_min of RDBPOT(exp_on_negative_values(MBQM(d, M, shift)), 12)
#     L = log_x_for_x_greater_than_or_equal_to_1<5>(sum as Q12.19)              Q5.26
#     cut = max(diff_min - 1, MBQM(L + INT32_MIN, R, r))
#     out = d > cut ? clamp(RDBPOT(MBQM(d, M, shift) - L, 22) + qmax) : qmin

LOG_2, SQRT_SQRT_HALF, SQRT_HALF = 1488522236, 1805811301, 1518500250  # Q0.31
LOG_ALPHA_N, LOG_ALPHA_D, LOG_ALPHA_I, LOG_ALPHA_F = 117049297, 127690142, 1057819769, 638450708


def _clz32(x):
    """CountLeadingZeros of uint32 values (int64 in, 32 for 0)."""
    x = np.asarray(x, np.int64) & 0xFFFFFFFF
    return 32 - np.frexp(x.astype(np.float64))[1].astype(np.int64)


def _sat_shift_left(x, exponent):
    """SaturatingRoundingMultiplyByPOTParam for exponents >= 0 (per element)."""
    x = np.asarray(x, np.int64)
    exponent = np.asarray(exponent, np.int64)
    threshold = np.left_shift(np.int64(1), 31 - exponent) - 1
    out = _wrap(np.left_shift(x, exponent))
    out = np.where(x > threshold, qm.INT32_MAX, out)
    return np.where((x < -threshold) & (exponent > 0), qm.INT32_MIN, out)


def _saturate(x):
    return np.clip(x, qm.INT32_MIN, qm.INT32_MAX)


def log_x_ge_1(x, input_integer_bits: int, output_integer_bits: int):
    """TFLite's log_x_for_x_greater_than_or_equal_to_1_impl (internal/common.h): log(x)
    of a Q(input_integer_bits) raw value x >= 1, as Q(output_integer_bits)."""
    accum_bits = output_integer_bits + 1
    shifted_quarter = int(qm.rounding_divide_by_pot(np.int64(1 << 29), accum_bits))
    z_a = np.asarray(x, np.int64)
    headroom_a = _clz32(z_a)
    r_a = _sat_shift_left(_fx_mul(_sat_shift_left(z_a, headroom_a - 1), SQRT_HALF), 1)
    pow_a = _saturate(_sat_shift_left(input_integer_bits - headroom_a, 31 - accum_bits)
                      + shifted_quarter)
    z_b = _fx_mul(z_a, SQRT_HALF)
    headroom_b = _clz32(z_b) - 1
    r_b = _sat_shift_left(z_a, headroom_b)
    pow_b = _saturate(_sat_shift_left(input_integer_bits - headroom_b, 31 - accum_bits)
                      - shifted_quarter)
    r = np.minimum(r_a, r_b)
    z_pow_2_adj = np.maximum(pow_a, pow_b)
    total = r + SQRT_SQRT_HALF  # RoundingHalfSum: (a + b + sign) / 2, truncated
    p = np.where(total >= 0, (total + 1) // 2, -((-total + 1) // 2))
    q = _wrap(2 * _wrap(r - SQRT_SQRT_HALF))
    common_sq = _fx_mul(q, q)
    num = _wrap(_fx_mul(q, r) + _fx_mul(_fx_mul(q, common_sq), LOG_ALPHA_N))
    denom_minus_one = _wrap(
        _fx_mul(p, _wrap(LOG_ALPHA_I + q + _fx_mul(LOG_ALPHA_D, common_sq)))
        + _fx_mul(LOG_ALPHA_F, q))
    recip_denom = one_over_one_plus_x_for_x_in_0_1(denom_minus_one)
    num_scaled = qm.rounding_divide_by_pot(num, accum_bits)
    result = _wrap(_fx_mul(z_pow_2_adj, LOG_2) + _fx_mul(num_scaled, recip_denom))
    return qm.saturating_rounding_multiply_by_pot(result, accum_bits - output_integer_bits)


@dataclass(frozen=True, kw_only=True)
class QLogSoftmaxRecord(QSoftmaxRecord):
    qmax: int
    multiplier: int
    left_shift: int
    reverse_multiplier: int
    reverse_shift: int
    diff_min: int
    rounding: qm.Rounding


def prepare_log_softmax_quantized(ctx: OpContext):
    x, xq, out = unary_quantized(ctx, QUANTIZED)
    if x.rank < 1 or x.shape[-1] == 0:
        raise ctx.shape_error(f"needs a non-empty last dimension, input is {list(x.shape)}")
    info = np.iinfo(x.dtype)
    if out.zero_point != info.max or np.float32(out.scale) != np.float32(16 / 256):
        raise ctx.unsupported(f"quantized LOG_SOFTMAX needs output scale 16/256 and zero point "
                              f"{info.max}, got {out.scale} / {out.zero_point}")
    rounding = ctx.quant.rounding
    max_real = 2.0**31 - 1.0 if rounding is qm.Rounding.DOUBLE else 2.0**30 - 1.0
    real = min(xq.scale * float(1 << (31 - SCALED_DIFF_INTEGER_BITS)), max_real)
    if not real > 1.0:
        raise ctx.unsupported(f"input scale {xq.scale} is too small")
    m, shift = qm.quantize_multiplier_greater_than_one(real, rounding)
    reverse = qm.quantize_multiplier_smaller_than_one_exp(float(1 << (31 - shift)) / m, rounding)
    radius = math.floor((2**SCALED_DIFF_INTEGER_BITS - 1)
                        * 2.0**(31 - SCALED_DIFF_INTEGER_BITS) / 2.0**shift)
    record = QLogSoftmaxRecord(
        rows=num_elements(x.shape[:-1]), depth=x.shape[-1], qmin=int(info.min),
        qmax=int(info.max), multiplier=m, left_shift=shift, reverse_multiplier=reverse[0],
        reverse_shift=reverse[1], diff_min=-radius, rounding=rounding)
    return (OutputSpec(x.shape, x.dtype),), record


def eval_log_softmax_quantized(rec: QLogSoftmaxRecord, inputs, outputs) -> None:
    x = inputs[0].reshape(rec.rows, rec.depth).astype(np.int64)
    diff = x - x.max(axis=1, keepdims=True)
    scaled = qm.multiply_by_quantized_multiplier(diff, rec.multiplier, rec.left_shift,
                                                 rec.rounding)
    exps = exp_on_negative_values(scaled)
    terms = np.where(diff >= rec.diff_min,
                     qm.rounding_divide_by_pot(exps, ACCUMULATION_INTEGER_BITS), 0)
    total = _wrap(terms.sum(axis=1, keepdims=True))
    log_sum = log_x_ge_1(total, ACCUMULATION_INTEGER_BITS, SCALED_DIFF_INTEGER_BITS)
    cut = np.maximum(rec.diff_min - 1, qm.multiply_by_quantized_multiplier(
        _wrap(log_sum + qm.INT32_MIN), rec.reverse_multiplier, rec.reverse_shift,
        rec.rounding))
    values = qm.rounding_divide_by_pot(_wrap(scaled - log_sum), 31 - 5 - 4) + rec.qmax
    values = np.where(diff > cut, np.clip(values, rec.qmin, rec.qmax), rec.qmin)
    np.copyto(outputs[0], values.reshape(outputs[0].shape), casting="unsafe")


LOG_SOFTMAX_OUTPUT = {np.int8: (16 / 256, 127), np.uint8: (16 / 256, 255)}


OPS = (
    OpDef("SOFTMAX",
          float=Kernel(prepare, run_chosen),
          integer=Kernel(prepare_quantized, run_chosen),
          int16=softmax16(softmax_beta),
          quant=QuantRule.FIXED_OUTPUT,
          fixed_output=PROBABILITY_OUTPUT,
          per_sample=True, last_axis=True,
          version=INT8_2_INT16_3),  # op_version.cc: int16 3, int8 2
    OpDef("LOG_SOFTMAX", float=Kernel(prepare_log_softmax, eval_log_softmax),
          integer=Kernel(prepare_log_softmax_quantized, eval_log_softmax_quantized),
          quant=QuantRule.FIXED_OUTPUT, fixed_output=LOG_SOFTMAX_OUTPUT, per_sample=True,
          last_axis=True, version=INT8_2),  # op_version.cc: int8 2
)
