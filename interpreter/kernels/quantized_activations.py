"""LOGISTIC, TANH, HARD_SWISH and LEAKY_RELU on int8 / uint8 tensors, as lookup tables.

Each op maps one 8-bit value to one 8-bit value, so prepare() evaluates the exact
LiteRT arithmetic on all 256 inputs once and invoke() is a single table lookup. The
table is stored in TFLite's LUTPopulate order -- indexed by the input's bits read as
uint8 -- so an int8 tensor is looked up through a uint8 view.

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
from .base import Kernel, OpContext, OutputSpec
from .requantize import QParams, QUANTIZED, qparams, require_same_type


@dataclass(frozen=True)
class LutRecord:
    lut: np.ndarray  # (256,) output values, indexed by the input bits as uint8


def apply_lut(rec: LutRecord, inputs, outputs) -> None:
    rec.lut.take(inputs[0].view(np.uint8), out=outputs[0].view(rec.lut.dtype))


def make_lut(dtype, values_for, out_dtype=None) -> np.ndarray:
    """Table of ``values_for(q)`` (int64, any range; clamped to ``out_dtype``, default
    ``dtype``) over every q of ``dtype``, laid out so that ``lut[q.view(uint8)]`` is the
    entry of q."""
    out_dtype = np.dtype(dtype if out_dtype is None else out_dtype)
    info, out_info = np.iinfo(dtype), np.iinfo(out_dtype)
    q = np.arange(info.min, info.max + 1, dtype=np.int64)
    out = np.clip(np.asarray(values_for(q), np.int64), out_info.min, out_info.max)
    lut = np.empty(256, out_dtype)
    lut[q.astype(dtype).view(np.uint8)] = out.astype(out_dtype)
    return lut


def _unary(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, QUANTIZED, "input")
    require_same_type(ctx, x, ctx.outputs[0])
    return x, qparams(ctx, x, "input"), qparams(ctx, ctx.outputs[0], "output")


# --------------------------------------------------------------------------- RELU family


def _make_relu_prepare(act_min: float, act_max: float | None):
    def prepare(ctx: OpContext):
        x, xq, out = _unary(ctx)
        info = np.iinfo(x.dtype)
        m, shift = qm.quantize_multiplier(float(np.float32(xq.scale) / np.float32(out.scale)),
                                          ctx.quant.rounding)
        inverse_bound = lambda v: out.zero_point + int(  # noqa: E731
            qm.round_half_away(np.float32(v) / np.float32(out.scale)))
        lo = max(int(info.min), inverse_bound(act_min))
        hi = int(info.max) if act_max is None else min(int(info.max), inverse_bound(act_max))

        def values(q):
            v = qm.multiply_by_quantized_multiplier(q - xq.zero_point, m, shift,
                                                    ctx.quant.rounding) + out.zero_point
            return np.clip(v, lo, hi)

        return (OutputSpec(x.shape, x.dtype),), LutRecord(make_lut(x.dtype, values))

    return prepare


RELU = Kernel(_make_relu_prepare(0.0, None), apply_lut)
RELU6 = Kernel(_make_relu_prepare(0.0, 6.0), apply_lut)
RELU_N1_TO_1 = Kernel(_make_relu_prepare(-1.0, 1.0), apply_lut)
RELU_0_TO_1 = Kernel(_make_relu_prepare(0.0, 1.0), apply_lut)


# --------------------------------------------------------------------------- LOGISTIC / TANH


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
        x, xq, out = _unary(ctx)
        builder = _tflite_float_lut if ctx.quant.reference else _xnn_float_lut
        fn = tflite_fn if ctx.quant.reference else xnn_fn
        lut = make_lut(x.dtype, lambda q: builder(q, xq, out, fn))
        return (OutputSpec(x.shape, x.dtype),), LutRecord(lut)

    return prepare


LOGISTIC = Kernel(_make_lut_prepare(_tflite_sigmoid, _xnn_sigmoid), apply_lut)
TANH = Kernel(_make_lut_prepare(libm.tanhf, libm.tanhf), apply_lut)


# --------------------------------------------------------------------------- HARD_SWISH


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


def prepare_hard_swish(ctx: OpContext):
    x, xq, out = _unary(ctx)
    hires = np.float32(np.float32(1.0 / 128.0) * np.float32(xq.scale))
    if hires / np.float32(out.scale) >= 1.0:
        # HardSwishPrepare: TF_LITE_ENSURE(output_multiplier_exponent <= 0).
        raise ctx.unsupported(
            f"output scale {out.scale} is too small for input scale {xq.scale} "
            "(TFLite needs s_in / 128 < s_out)"
        )
    lut = make_lut(x.dtype, lambda q: hard_swish_values(q, xq, out, ctx.quant.rounding))
    return (OutputSpec(x.shape, x.dtype),), LutRecord(lut)


HARD_SWISH = Kernel(prepare_hard_swish, apply_lut)


# --------------------------------------------------------------------------- LEAKY_RELU


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


def prepare_leaky_relu(ctx: OpContext):
    x, xq, out = _unary(ctx)
    alpha = float(np.float32(ctx.option("alpha", 0.0)))
    xnn = None if ctx.quant.reference else _xnn_lrelu_multipliers(xq, out, alpha)
    if xnn is not None:
        p, n = xnn

        def values(q):
            d = q - xq.zero_point
            return ((d * np.where(d >= 0, p, n) + 128) >> 8) + out.zero_point
    else:
        rounding = ctx.quant.rounding
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

    lut = make_lut(x.dtype, values)
    return (OutputSpec(x.shape, x.dtype),), LutRecord(lut)


LEAKY_RELU = Kernel(prepare_leaky_relu, apply_lut)
