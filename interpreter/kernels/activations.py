"""RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1, LOGISTIC, TANH, LEAKY_RELU, ELU, HARD_SWISH,
GELU: float32, and int8 / uint8 (ELU int8 only). PRELU, which broadcasts a second
input, lives in binary.py.

float32 matches tensorflow/lite/kernels/activations.cc with the reference kernels:

* RELU / RELU6 / RELU_N1_TO_1 clamp to [0, inf) / [0, 6] / [-1, 1]; NaN stays NaN
  (``val < lower ? lower : val`` is false for NaN, like np.maximum / np.clip).
* TANH is std::tanh.
* LOGISTIC is reference_ops::Logistic (tensorflow/lite/kernels/internal/reference/
  logistic.h), which uses two cut-offs taken from Eigen's scalar_logistic_op:

      x > 16.619047164916992188  ->  1.0   (1 / (1 + e^-x) already rounds to 1 in float32)
      x < -9                     ->  e^x   (1 / (1 + e^-x) = e^x / (1 + e^x) ~ e^x there)
      otherwise                  ->  1 / (1 + e^-x)

With the native backend on, float32 LOGISTIC, TANH, ELU, HARD_SWISH and GELU run as one
C pass each (common/native_float_ops.py, native/transcend_f32.c); the numpy kernels below
stay the reference, and docs/native-float.md records how far each is from LiteRT's.

int8 / uint8: each op maps one 8-bit value to one 8-bit value, so prepare() evaluates
the exact LiteRT arithmetic on all 256 inputs once and invoke() is a single table lookup
(requantize.make_lut: TFLite's LUTPopulate order, indexed by the input's bits read as
uint8, so an int8 tensor is looked up through a uint8 view).

RELU / RELU6 / RELU_N1_TO_1 / RELU_0_TO_1 -- activations.cc QuantizedReluX with
optimized_ops::ReluX (both kernel sets; XNNPACK leaves them to TFLite):
    q' = clamp(MBQM(q - z_in, M) + z_out, lo, hi),   M = float(s_in / s_out)
    lo = max(qmin, z_out + roundf(act_min / s_out)), hi likewise (qmax for RELU)

LOGISTIC / TANH (output scale 1/256 and zero point -128 / 0 for LOGISTIC, 1/128 and 0 /
128 for TANH, as the TFLite quantization spec fixes them; any output parameters work):

* REFERENCE -- activations.cc builds the table with LUTPopulate
  (tensorflow/lite/kernels/internal/common.h) for both reference and optimized kernels:
      x = float(s_in * (q - z_in))
      y = 1 / (1 + expf(-x))   or   tanhf(x)            (float32)
      out = clamp(int(round_half_away(y * float(1 / s_out)) + z_out))
* DEFAULT -- the XNNPACK delegate takes the op; its table comes from XNNPACK's
  reference unary operators (src/reference/unary-elementwise.cc, reference-utils.h):
      x = (float(q) - float(z_in)) * s_in
      y = e / (1 + e), e = exp(double(x)) (|x| <= 100)   or   tanhf(x)
      out = clamp(round_half_away(y * float(1 / s_out) + z_out))

HARD_SWISH -- reference_ops::HardSwish (reference/hard_swish.h) with the int16
fixed-point parameters of activations.cc HardSwishPrepare; XNNPACK does not take
quantized HARD_SWISH and TFLite's optimized kernel computes the same values, so both
kernel sets agree.

LEAKY_RELU:

* REFERENCE -- reference_ops::QuantizeLeakyRelu:
      d = q - z_in
      out = clamp(z_out + MBQM(d, M_identity if d >= 0 else M_alpha))
  with M_identity = s_in / s_out and M_alpha = s_in * alpha / s_out (float32 products).
* DEFAULT -- XNNPACK's qs8/qu8 lrelu (xnn_init_qs8_lrelu_scalar_params): 8-bit
  fractional multipliers p = rint(256 * s_in / s_out), n = rint(256 * s_in / s_out * alpha)
      out = clamp(((d * (p if d >= 0 else n) + 128) >> 8) + z_out)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import libm
from .. import quant_math as qm
from .base import Chosen, Kernel, OpContext, OutputSpec, run_chosen, scratch
from .common.fused import RELU, RELU6, RELU_N1_TO_1, Clamp, apply_clamp
from .common.lut import table_kernel
from .common.quantized_activations import elu_table, gelu_table
from .opdef import PROBABILITY_OUTPUT, TANH_OUTPUT, OpDef, QuantRule
from .common.requantize import QUANTIZED, QParams, lut_kernel, make_lut, qparams, require_same_type
from .int16.unary import LOGISTIC16, TANH16, lut16_kernel
from .common.native_float_ops import native_unary_f32
from .versions import INT8_2_INT16_3, T, by_input_type, int8_2_int16_in_out_3

LOGISTIC_UPPER = np.float32(16.619047164916992188)
LOGISTIC_LOWER = np.float32(-9.0)


def _check_unary(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, (np.float32,), "input")
    return (OutputSpec(x.shape, x.dtype),)


# --------------------------------------------------------------------------- ReLU family


@dataclass(frozen=True)
class ClampRecord:
    clamp: Clamp


def _relu_prepare(low: float, high: float | None):
    def prepare(ctx: OpContext):
        return _check_unary(ctx), ClampRecord((np.float32(low),
                                               None if high is None else np.float32(high)))

    return prepare


def eval_clamp(rec: ClampRecord, inputs, outputs) -> None:
    np.copyto(outputs[0], inputs[0])
    apply_clamp(rec.clamp, outputs[0])




# --------------------------------------------------------------------------- TANH


def prepare_tanh(ctx: OpContext):
    specs = _check_unary(ctx)
    return specs, native_unary_f32(ctx, "tanh_f32", specs[0].shape) or Chosen(eval_tanh, None)


def eval_tanh(rec, inputs, outputs) -> None:
    np.tanh(inputs[0], out=outputs[0])




# --------------------------------------------------------------------------- LOGISTIC


@dataclass(frozen=True)
class LogisticRecord:
    mask: np.ndarray  # bool scratch with the tensor's shape


def prepare_logistic(ctx: OpContext):
    specs = _check_unary(ctx)
    native = native_unary_f32(ctx, "logistic_f32", specs[0].shape)  # one C pass
    return specs, native or Chosen(eval_logistic,
                                   LogisticRecord(scratch(ctx, specs[0].shape, np.bool_)))


def eval_logistic(rec: LogisticRecord, inputs, outputs) -> None:
    x, out, mask = inputs[0], outputs[0], rec.mask
    # Middle branch on clamped inputs (so exp never overflows): 1 / (1 + e^-x).
    np.clip(x, LOGISTIC_LOWER, LOGISTIC_UPPER, out=out)
    np.negative(out, out=out)
    np.exp(out, out=out)
    np.add(out, np.float32(1.0), out=out)
    np.reciprocal(out, out=out)
    # Upper branch: exactly 1.
    np.greater(x, LOGISTIC_UPPER, out=mask)
    np.copyto(out, np.float32(1.0), where=mask)
    # Lower branch: e^x.
    np.less(x, LOGISTIC_LOWER, out=mask)
    np.exp(x, out=out, where=mask)




# --------------------------------------------------------------------------- LEAKY_RELU, ELU
#
# tensorflow/lite/kernels/internal/reference/leaky_relu.h: ``x > 0 ? x : x * alpha``
# (LeakyReluOptions.alpha). reference/elu.h: ``x < 0 ? expm1(x) : x``.


@dataclass(frozen=True)
class MaskedRecord:
    mask: np.ndarray  # bool scratch with the tensor's shape
    alpha: np.float32 = np.float32(0.0)


def prepare_leaky_relu(ctx: OpContext):
    specs = _check_unary(ctx)
    alpha = np.float32(ctx.option("alpha", 0.0))
    return specs, MaskedRecord(scratch(ctx, specs[0].shape, np.bool_), alpha)


def eval_leaky_relu(rec: MaskedRecord, inputs, outputs) -> None:
    x, out = inputs[0], outputs[0]
    np.multiply(x, rec.alpha, out=out)
    np.greater(x, 0, out=rec.mask)
    np.copyto(out, x, where=rec.mask)


def prepare_elu(ctx: OpContext):
    specs = _check_unary(ctx)
    native = native_unary_f32(ctx, "elu_f32", specs[0].shape)  # one C pass
    return specs, native or Chosen(eval_elu, MaskedRecord(scratch(ctx, specs[0].shape,
                                                                  np.bool_)))


def eval_elu(rec: MaskedRecord, inputs, outputs) -> None:
    x, out = inputs[0], outputs[0]
    np.copyto(out, x)
    np.less(x, 0, out=rec.mask)
    np.expm1(x, out=out, where=rec.mask)




# --------------------------------------------------------------------------- HARD_SWISH
#
# tensorflow/lite/kernels/internal/reference/hard_swish.h (float):
#     x * std::min(6, std::max(0, x + 3)) / 6
# evaluated left to right in float32: (x * relu6(x + 3)) / 6.


def prepare_hard_swish(ctx: OpContext):
    specs = _check_unary(ctx)
    native = native_unary_f32(ctx, "hard_swish_f32", specs[0].shape)  # one C pass
    return specs, native or Chosen(eval_hard_swish, None)


def eval_hard_swish(rec, inputs, outputs) -> None:
    x, out = inputs[0], outputs[0]
    np.add(x, np.float32(3.0), out=out)
    np.clip(out, np.float32(0.0), np.float32(6.0), out=out)
    np.multiply(x, out, out=out)
    np.divide(out, np.float32(6.0), out=out)




# --------------------------------------------------------------------------- GELU
#
# tensorflow/lite/kernels/internal/reference/gelu.h (GeluOptions.approximate):
#     exact:        0.5 * x * erfc(-x / sqrt(2))     (erfc avoids cancellation for x << 0)
#     approximate:  0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
# numpy has no erfc: libm.erfc (Numerical Recipes' erfcc, about one float32 ulp).

SQRT_2_OVER_PI = np.float32(np.sqrt(2.0 / np.pi))  # M_2_SQRTPI * M_SQRT1_2


def prepare_gelu(ctx: OpContext):
    specs = _check_unary(ctx)
    approximate = bool(ctx.option("approximate", False))
    native = native_unary_f32(ctx, "gelu_tanh_f32" if approximate else "gelu_erfc_f32",
                              specs[0].shape)  # one C pass
    return specs, native or Chosen(eval_gelu_tanh if approximate else eval_gelu_erfc, None)


def eval_gelu_tanh(rec, inputs, outputs) -> None:
    x, out = inputs[0], outputs[0]
    np.multiply(x, x, out=out)
    np.multiply(out, x, out=out)
    np.multiply(out, np.float32(0.044715), out=out)
    np.add(out, x, out=out)
    np.multiply(out, SQRT_2_OVER_PI, out=out)
    np.tanh(out, out=out)
    np.add(out, np.float32(1.0), out=out)
    np.multiply(out, x, out=out)
    np.multiply(out, np.float32(0.5), out=out)


def eval_gelu_erfc(rec, inputs, outputs) -> None:
    x64 = inputs[0].astype(np.float64)
    np.copyto(outputs[0], 0.5 * x64 * libm.erfc(x64 * -np.sqrt(0.5)), casting="same_kind")


# --------------------------------------------------------------------------- int8 / uint8


def _unary_quantized(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, QUANTIZED, "input")
    require_same_type(ctx, x, ctx.outputs[0])
    return x, qparams(ctx, x, "input"), qparams(ctx, ctx.outputs[0], "output")


# ----------------------------------------------------------------- RELU family, int8 / uint8


def relu_values(dtype, xq: QParams, out: QParams, act_min: float, act_max: float | None,
                rounding: qm.Rounding):
    """QuantizedReluX (activations.cc) as a function of int64 inputs q, for int8 / uint8 /
    int16 ``dtype``."""
    info = np.iinfo(dtype)
    m, shift = qm.quantize_multiplier(float(np.float32(xq.scale) / np.float32(out.scale)),
                                      rounding)
    inverse_bound = lambda v: out.zero_point + int(  # noqa: E731
        qm.round_half_away(np.float32(v) / np.float32(out.scale)))
    lo = max(int(info.min), inverse_bound(act_min))
    hi = int(info.max) if act_max is None else min(int(info.max), inverse_bound(act_max))

    def values(q):
        v = qm.multiply_by_quantized_multiplier(q - xq.zero_point, m, shift,
                                                rounding) + out.zero_point
        return np.clip(v, lo, hi)

    return values


def micro_relu6_values(dtype, xq: QParams):
    """TFLM's RELU6 (micro/kernels/activations_common.cc Relu6Prepare, activations.cc
    Relu6Quantized): the input codes clamped to [zp_in, six] and copied, with
    ``six = FloatToQuantizedType(6.0f, s_in, zp_in)`` = clamp(round_half_away(6f / s_in)
    + zp_in) -- in the *input's* quantization, never rescaled to the output's (TFLM takes
    the two as equal, as converters write them). LiteRT's QuantizedReluX rescales."""
    info = np.iinfo(dtype)
    six = int(qm.round_half_away(np.float32(6.0) / np.float32(xq.scale))) + xq.zero_point
    six = min(max(six, int(info.min)), int(info.max))
    return lambda q: np.clip(q, xq.zero_point, six)


def relu_values_for(ctx: OpContext, dtype, xq: QParams, out: QParams, act_min: float,
                    act_max: float | None):
    """The kernel set's QuantizedReluX: TFLM's RELU6 differs (micro_relu6_values); RELU is
    TFLM's CalculateReluOpData, the same as LiteRT's."""
    if ctx.quant.micro and (act_min, act_max) == (0.0, 6.0):
        return micro_relu6_values(dtype, xq)
    return relu_values(dtype, xq, out, act_min, act_max, ctx.quant.rounding)


def _relu_prepare_quantized(act_min: float, act_max: float | None):
    def prepare(ctx: OpContext):
        x, xq, out = _unary_quantized(ctx)
        values = relu_values_for(ctx, x.dtype, xq, out, act_min, act_max)
        return (OutputSpec(x.shape, x.dtype),), lut_kernel(ctx, make_lut(x.dtype, values))

    return prepare


# -------------------------------------------------------------- LOGISTIC / TANH, int8 / uint8


def _tflite_float_lut(q, xq: QParams, out: QParams, fn) -> np.ndarray:
    """LUTPopulateInt8: every step in float32."""
    x = np.float32(xq.scale) * (q - xq.zero_point).astype(np.float32)
    y = fn(x)
    inverse = np.float32(1.0) / np.float32(out.scale)
    rescaled = qm.round_half_away(y * inverse).astype(np.float32)
    return (rescaled + np.float32(out.zero_point)).astype(np.int64)


def _xnn_float_lut(q, xq: QParams, out: QParams, fn) -> np.ndarray:
    """XNNPACK's reference unary op: dequantize, op, quantize (round half away)."""
    x = (q.astype(np.float32) - np.float32(xq.zero_point)) * np.float32(xq.scale)
    y = fn(x)
    inverse = np.float32(1.0) / np.float32(out.scale)
    v = (y * inverse + np.float32(out.zero_point)).astype(np.float32)
    v = np.where(np.isnan(v), np.float32(0.0), v)
    return np.clip(qm.round_half_away(v), -2.0**31, 2.0**31 - 1).astype(np.int64)


def _tflite_sigmoid(x: np.ndarray) -> np.ndarray:
    # 1.0f / (1.0f + std::exp(-value)), float32 throughout.
    with np.errstate(over="ignore"):
        return (np.float32(1.0) / (np.float32(1.0) + libm.expf(-x))).astype(np.float32)


def _xnn_sigmoid(x: np.ndarray) -> np.ndarray:
    # SigmoidOp: 1 above 100, 0 below -100, else e / (1 + e) with e = exp(double(x)).
    mid = np.clip(x.astype(np.float64), -100.0, 100.0)
    e = libm.exp(mid)
    y = (e / (1.0 + e)).astype(np.float32)
    return np.where(x > 100, np.float32(1.0), np.where(x < -100, np.float32(0.0), y))


def _make_lut_prepare(tflite_fn, xnn_fn):
    def prepare(ctx: OpContext):
        x, xq, out = _unary_quantized(ctx)
        builder = _tflite_float_lut if ctx.quant.reference else _xnn_float_lut
        fn = tflite_fn if ctx.quant.reference else xnn_fn
        lut = make_lut(x.dtype, lambda q: builder(q, xq, out, fn))
        return (OutputSpec(x.shape, x.dtype),), lut_kernel(ctx, lut)

    return prepare


# ------------------------------------------------------------------ HARD_SWISH, int8 / uint8


def _srdhm16(a, b):
    """gemmlowp SaturatingRoundingDoublingHighMul on int16: round(a * b / 2^15)."""
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 14, 1 - (1 << 14))
    s = ab + nudge
    out = np.where(s < 0, -((-s) >> 15), s >> 15)
    return np.where((a == -32768) & (b == -32768), 32767, out)


def _sdhm16(a, b):
    """TFLite's SaturatingDoublingHighMul (int16, truncating): a * b / 2^15."""
    ab = a * b
    out = np.where(ab < 0, -((-ab) >> 15), ab >> 15)
    return np.where((a == -32768) & (b == -32768), 32767, out)


def _sat_left_shift16(x, amount: int):
    return np.clip(x << amount, -32768, 32767)


def _downscale_to_int16(m: int) -> int:
    """DownScaleInt32ToInt16Multiplier: round the Q31 mantissa to Q15."""
    if m >= qm.INT32_MAX - (1 << 15):
        return 32767
    return (m + (1 << 15)) >> 16


def hard_swish_values(q, xq: QParams, out: QParams, rounding: qm.Rounding) -> np.ndarray:
    """reference_ops::HardSwish for int64 inputs ``q`` (every intermediate is int16)."""
    hires = np.float32(np.float32(1.0 / 128.0) * np.float32(xq.scale))
    out_mult, out_exp = qm.quantize_multiplier(float(hires / np.float32(out.scale)), rounding)
    relu_mult, relu_exp = qm.quantize_multiplier(
        float(hires / np.float32(np.float32(3.0) / np.float32(32768.0))), rounding)
    out_mult16, relu_mult16 = _downscale_to_int16(out_mult), _downscale_to_int16(relu_mult)
    value = q - xq.zero_point
    hires_value = value * 128  # on the "hires" input scale s_in / 128
    preshift_out = _srdhm16(hires_value, out_mult16)
    # The "relu-ish" factor: x rescaled so that 3.0 -> 32768, saturating, then to [0, 1].
    reluish = hires_value
    if relu_exp > 0:
        reluish = _sat_left_shift16(reluish, relu_exp - 1)
    reluish = _srdhm16(reluish, relu_mult16)
    if relu_exp > 0:
        reluish = _sat_left_shift16(reluish, 1)
    if relu_exp < 0:
        reluish = qm.rounding_divide_by_pot(reluish, -relu_exp)
    reluish = (reluish + (1 << 15)) >> 1
    preshift = _sdhm16(reluish, preshift_out)
    return qm.rounding_divide_by_pot(preshift, -out_exp) + out.zero_point


def prepare_hard_swish_quantized(ctx: OpContext):
    x, xq, out = _unary_quantized(ctx)
    hires = np.float32(np.float32(1.0 / 128.0) * np.float32(xq.scale))
    if hires / np.float32(out.scale) >= 1.0:
        # HardSwishPrepare: TF_LITE_ENSURE(output_multiplier_exponent <= 0).
        raise ctx.unsupported(
            f"output scale {out.scale} is too small for input scale {xq.scale} "
            "(TFLite needs s_in / 128 < s_out)"
        )
    lut = make_lut(x.dtype, lambda q: hard_swish_values(q, xq, out, ctx.quant.rounding))
    return (OutputSpec(x.shape, x.dtype),), lut_kernel(ctx, lut)


# ------------------------------------------------------------------ LEAKY_RELU, int8 / uint8


def _xnn_lrelu_multipliers(xq: QParams, out: QParams, alpha: float):
    """xnn_init_qs8_lrelu_scalar_params, or None where XNNPACK refuses the scales."""
    positive = np.float32(xq.scale) / np.float32(out.scale)
    negative = np.float32(positive * np.float32(alpha))
    if not (2.0**-8 <= positive <= 2.0**7 and -float.fromhex("0x1.FFFCp+6") <= negative <= 2.0**7
            and abs(negative) >= 2.0**-8):
        return None
    p = int(np.rint(np.float32(256.0) * positive))
    n = int(np.rint(np.float32(256.0) * negative))
    return p, n


def leaky_relu_values(xq: QParams, out: QParams, alpha: float, rounding: qm.Rounding):
    """reference_ops::QuantizeLeakyRelu as a function of int64 inputs q."""
    # activations.cc LeakyReluPrepare: float products, then QuantizeMultiplier.
    m_id = qm.quantize_multiplier(float(np.float32(xq.scale) / np.float32(out.scale)),
                                  rounding)
    m_alpha = qm.quantize_multiplier(
        float(np.float32(np.float32(xq.scale) * np.float32(alpha)) / np.float32(out.scale)),
        rounding)

    def values(q):
        d = q - xq.zero_point
        pos = qm.multiply_by_quantized_multiplier(d, *m_id, rounding)
        neg = qm.multiply_by_quantized_multiplier(d, *m_alpha, rounding)
        return np.where(d >= 0, pos, neg) + out.zero_point

    return values


def prepare_leaky_relu_quantized(ctx: OpContext):
    x, xq, out = _unary_quantized(ctx)
    alpha = float(np.float32(ctx.option("alpha", 0.0)))
    xnn = None if ctx.quant.reference else _xnn_lrelu_multipliers(xq, out, alpha)
    if xnn is not None:
        p, n = xnn

        def values(q):
            d = q - xq.zero_point
            return ((d * np.where(d >= 0, p, n) + 128) >> 8) + out.zero_point
    else:
        values = leaky_relu_values(xq, out, alpha, ctx.quant.rounding)

    lut = make_lut(x.dtype, values)
    return (OutputSpec(x.shape, x.dtype),), lut_kernel(ctx, lut)


# --------------------------------------------------------------------------- records


def _relu16(low: float, high: float | None) -> Kernel:
    return lut16_kernel(lambda ctx, xq, out: relu_values_for(ctx, np.int16, xq, out, low,
                                                             high))


def _leaky_relu16(ctx: OpContext, xq: QParams, out: QParams):
    alpha = float(np.float32(ctx.option("alpha", 0.0)))
    return leaky_relu_values(xq, out, alpha, ctx.quant.rounding)


def _relu(name: str, low: float, high: float | None, int16: bool = False, **facts) -> OpDef:
    integer = Kernel(_relu_prepare_quantized(low, high), run_chosen)
    return OpDef(name,
                 float=Kernel(_relu_prepare(low, high), eval_clamp),
                 integer=integer,
                 int16=_relu16(low, high) if int16 else None,
                 quant=QuantRule.OWN_RANGE,
                 per_sample=True,
                 **facts)


# Versions (op_version.cc): RELU 3 for int16 input, 2 for int8 / uint8; RELU6 3 for int16,
# 2 for int8 (uint8 stays 1); LOGISTIC and TANH 3 when int16 in and out, 2 for int8 input;
# LEAKY_RELU 2 for int16; GELU 2 for int8 / uint8. RELU_N1_TO_1, RELU_0_TO_1, HARD_SWISH
# and ELU have no case there: 1.
OPS = (
    _relu("RELU", 0.0, None, int16=True, exact=True, activation=RELU,
          version=by_input_type({T.INT16: 3, T.INT8: 2, T.UINT8: 2})),
    _relu("RELU6", 0.0, 6.0, int16=True, exact=True, activation=RELU6, version=INT8_2_INT16_3),
    _relu("RELU_N1_TO_1", -1.0, 1.0, activation=RELU_N1_TO_1),
    _relu("RELU_0_TO_1", 0.0, 1.0),
    OpDef("LOGISTIC",
          float=Kernel(prepare_logistic, run_chosen),
          integer=Kernel(_make_lut_prepare(_tflite_sigmoid, _xnn_sigmoid), run_chosen),
          int16=LOGISTIC16,
          quant=QuantRule.FIXED_OUTPUT,
          fixed_output=PROBABILITY_OUTPUT,
          per_sample=True,
          version=int8_2_int16_in_out_3),
    OpDef("TANH",
          float=Kernel(prepare_tanh, run_chosen),
          integer=Kernel(_make_lut_prepare(libm.tanhf, libm.tanhf), run_chosen),
          int16=TANH16,
          quant=QuantRule.FIXED_OUTPUT,
          fixed_output=TANH_OUTPUT,
          per_sample=True,
          version=int8_2_int16_in_out_3),
    OpDef("HARD_SWISH",
          float=Kernel(prepare_hard_swish, run_chosen),
          integer=Kernel(prepare_hard_swish_quantized, run_chosen),
          quant=QuantRule.OWN_RANGE,
          per_sample=True),
    OpDef("LEAKY_RELU",
          float=Kernel(prepare_leaky_relu, eval_leaky_relu),
          integer=Kernel(prepare_leaky_relu_quantized, run_chosen),
          int16=lut16_kernel(_leaky_relu16),
          quant=QuantRule.OWN_RANGE,
          per_sample=True,
          version=by_input_type({T.INT16: 2})),
    OpDef("ELU", float=Kernel(prepare_elu, run_chosen),
          integer=table_kernel((np.int8,), elu_table),
          quant=QuantRule.OWN_RANGE, uint8=False,  # int8 only in LiteRT
          per_sample=True),
    OpDef("GELU", float=Kernel(prepare_gelu, run_chosen),
          integer=table_kernel(QUANTIZED, gelu_table),
          int16=table_kernel((np.int16,), gelu_table),
          quant=QuantRule.OWN_RANGE, per_sample=True,
          version=by_input_type({T.INT8: 2, T.UINT8: 2})),
)
