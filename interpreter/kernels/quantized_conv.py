"""CONV_2D and DEPTHWISE_CONV_2D on int8 / uint8 tensors.

Matches tensorflow/lite/kernels/conv.cc and depthwise_conv.cc with
reference_integer_ops::ConvPerChannel / DepthwiseConvPerChannel (int8,
tensorflow/lite/kernels/internal/reference/integer_ops/conv.h, depthwise_conv.h) and
reference_ops::Conv / DepthwiseConv (uint8, reference/conv.h, depthwiseconv_uint8.h):

    acc[c] = bias[c] + sum (w - zp_w) * (x - zp_x)      (padding contributes nothing)
    out[c] = clamp(requant_c(acc[c]) + zp_out, act_min, act_max)

with ``requant_c`` chosen by the kernel set (quant_common.Requant):

* REFERENCE, and DEFAULT where XNNPACK does not take the op (uint8 depthwise with a
  filter quantized_dimension other than 0):
  MultiplyByQuantizedMultiplier with M_c from QuantizeMultiplier of
    int8:  double(s_x) * double(s_w[c]) / double(s_out)   (PopulateConvolutionQuantizationParams)
    uint8: double(float(s_x * s_w)) / double(s_out)       (GetQuantizedConvolutionMultipler)
  and the clamp of CalculateActivationRangeQuantized;
* DEFAULT otherwise (the XNNPACK delegate): rint(float32(acc) * float32(s_x * s_w[c] / s_out))
  with the float32 product taken as (s_x * s_w) / s_out, and XNNPACK's clamp.

int8 weights are symmetric (zero point 0, TFLite's quantization spec; per channel along
axis 0 for CONV_2D OHWI, axis 3 for DEPTHWISE_CONV_2D 1HWO, or per tensor); uint8
weights are per tensor with any zero point.

Speed: the sums are exact in floating point while they stay below 2^53 (2^24 for
float32), so CONV_2D runs im2col + one BLAS matmul in float64 -- or float32 when
K * 255 * 255 < 2^24 -- and DEPTHWISE_CONV_2D sums its taps in int32.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Kernel, OpContext, OutputSpec, TensorInfo, scratch
from .padding import padded_scratch, padding_option, patches_view, tap_view, window_1d
from .quant_common import (
    QUANTIZED,
    QParams,
    Requant,
    activation_bounds,
    channel_params,
    clamp_out,
    fixed_requant,
    fp32_requant,
    qparams,
    require_same_type,
)

FLOAT32_EXACT = 2**24  # integers below this add exactly in float32


@dataclass(frozen=True)
class _Biased:
    """requant(acc + bias): the bias is added to the exact accumulator (int64, or
    float64, where integers below 2^53 add exactly)."""

    requant: Requant
    bias: np.ndarray | None

    def __call__(self, acc: np.ndarray) -> np.ndarray:
        if self.bias is not None:
            acc = acc + self.bias
        return self.requant(acc)


@dataclass(frozen=True)
class QConvRecord:
    rows: int  # N * OH * OW
    out_channels: int
    groups: int
    weights: np.ndarray  # (groups, K, O/groups) of w - zp_w, in the work dtype
    interior: np.ndarray  # where x - zp_x goes inside the zero-padded scratch
    windows: np.ndarray | None  # (groups, N, OH, OW, KH, KW, Cg) view; None: pointwise
    cols: np.ndarray  # im2col matrix scratch (or the padded scratch itself, pointwise)
    acc: np.ndarray  # (groups, rows, O/groups) scratch, work dtype
    zp_x: int
    zp_out: int
    requant: _Biased
    lo: int
    hi: int


@dataclass(frozen=True)
class QDepthwiseRecord:
    interior: np.ndarray  # (N, H, W, C, M) int32 view: x - zp_x repeated M times
    taps: tuple[np.ndarray, ...]  # per tap: (N, OH, OW, C*M) view of the padded scratch
    weights: tuple[np.ndarray, ...]  # per tap: (C*M,) int32 w - zp_w
    acc: np.ndarray  # (N, OH, OW, C*M) int32
    product: np.ndarray  # same, one tap's products
    zp_x: int
    zp_out: int
    requant: _Biased
    lo: int
    hi: int


def _common(ctx: OpContext, what: str):
    ctx.check_arity(2, 3)
    x, f = ctx.input(0), ctx.input(1)
    bias = ctx.optional_input(2)
    ctx.require_dtype(x, QUANTIZED, "input")
    require_same_type(ctx, x, f)
    require_same_type(ctx, x, ctx.outputs[0])
    if x.rank != 4 or f.rank != 4:
        raise ctx.shape_error(
            f"input {list(x.shape)} and filter {list(f.shape)} must both be 4-D ({what})"
        )
    if bias is not None:
        ctx.require_dtype(bias, (np.int32,), "bias")
    filt = ctx.constant_input(1, "filter").astype(np.int64)
    bias_values = None
    if bias is not None:
        bias_values = ctx.constant_input(2, "bias").astype(np.int64).reshape(-1)
    return x, f, filt, bias_values


def _requant(ctx: OpContext, x: TensorInfo, xq: QParams, wscales: np.ndarray,
             out: QParams, xnnpack: bool) -> Requant:
    if xnnpack:
        # xnn_create_convolution2d_nhwc_qs8_qc8w: input_scale * kernel_scale / output_scale.
        return fp32_requant(np.float32(xq.scale) * wscales / np.float32(out.scale))
    if x.dtype == np.uint8:
        # GetQuantizedConvolutionMultipler: the input * filter product is a float.
        product = float(np.float32(xq.scale) * wscales[0])
        return fixed_requant([product / out.scale], ctx.quant)
    return fixed_requant([xq.scale * float(s) / out.scale for s in wscales], ctx.quant)


def _weight_params(ctx, x, f, channels, axis):
    scales, zps = channel_params(ctx, f, "filter", channels, axis)
    if x.dtype == np.int8 and np.any(zps != 0):
        raise ctx.unsupported(f"int8 filter '{f.name}' must be symmetric (zero point 0)")
    if x.dtype == np.uint8 and len(f.quantization.scale) != 1:
        raise ctx.unsupported(f"uint8 filter '{f.name}' must be quantized per tensor")
    return scales, zps


def _check_bias(ctx, bias_values, channels):
    if bias_values is not None and bias_values.size != channels:
        raise ctx.shape_error(f"bias holds {bias_values.size} values, expected {channels}")


def prepare_conv(ctx: OpContext):
    x, f, filt, bias_values = _common(ctx, "NHWC / OHWI")
    n, h, w, c = x.shape
    o, kh, kw, cg = f.shape
    if cg < 1 or c % cg != 0 or o % (c // cg) != 0:
        raise ctx.shape_error(
            f"input channels ({c}) must be a multiple of the filter's ({cg}), and output "
            f"channels ({o}) a multiple of the groups"
        )
    groups = c // cg
    _check_bias(ctx, bias_values, o)
    xq, out = qparams(ctx, x, "input"), qparams(ctx, ctx.outputs[0], "output")
    scales, zps = _weight_params(ctx, x, f, o, 0)
    xnnpack = not ctx.quant.reference
    requant = _requant(ctx, x, xq, scales, out, xnnpack)
    lo, hi = activation_bounds(ctx, out, x.dtype, xnnpack)

    pad = padding_option(ctx)
    wh = window_1d(ctx, "height", h, kh, int(ctx.option("stride_h", 1)),
                   int(ctx.option("dilation_h_factor", 1)), pad)
    ww = window_1d(ctx, "width", w, kw, int(ctx.option("stride_w", 1)),
                   int(ctx.option("dilation_w_factor", 1)), pad)
    rows, og, k = n * wh.size_out * ww.size_out, o // groups, kh * kw * cg
    wrange = 255 if x.dtype == np.uint8 else 128
    work = np.float32 if k * 255 * wrange < FLOAT32_EXACT else np.float64
    # Filter OHWI -> (groups, K = KH*KW*Cg, O/groups), the im2col column order.
    wf = (filt - zps.reshape(o, 1, 1, 1)).astype(work)
    weights = np.ascontiguousarray(wf.reshape(groups, og, k).transpose(0, 2, 1))
    padded, interior = padded_scratch(ctx, n, wh, ww, c, work, 0.0)
    unpadded = wh.pad_before + wh.pad_after + ww.pad_before + ww.pad_after == 0
    pointwise = kh == kw == 1 and wh.stride == ww.stride == 1 and groups == 1 and unpadded
    if pointwise:
        windows, cols = None, padded
    else:
        view = patches_view(padded, wh, ww)  # (N, OH, OW, KH, KW, C)
        windows = view.reshape(view.shape[:5] + (groups, cg)).transpose(5, 0, 1, 2, 3, 4, 6)
        cols = scratch(ctx, windows.shape, work)
    acc = scratch(ctx, (groups, rows, og), work)
    if bias_values is not None:
        bias_values = bias_values.reshape(1, o).astype(np.float64)
    record = QConvRecord(rows, o, groups, weights, interior, windows, cols, acc, xq.zero_point,
                         out.zero_point, _Biased(requant, bias_values), lo, hi)
    return (OutputSpec((n, wh.size_out, ww.size_out, o), x.dtype),), record


def eval_conv(rec: QConvRecord, inputs, outputs) -> None:
    np.subtract(inputs[0], rec.zp_x, out=rec.interior, dtype=rec.interior.dtype)
    if rec.windows is None:
        np.matmul(rec.cols.reshape(1, rec.rows, -1), rec.weights, out=rec.acc)
    else:
        np.copyto(rec.cols, rec.windows)
        np.matmul(rec.cols.reshape(rec.groups, rec.rows, -1), rec.weights, out=rec.acc)
    # (groups, rows, O/groups) -> (rows, O); the float sums are exact integers.
    acc = rec.acc.transpose(1, 0, 2).reshape(rec.rows, rec.out_channels)
    values = rec.requant(acc.astype(np.float64, copy=False))
    values += rec.zp_out
    clamp_out(values, rec.lo, rec.hi, outputs[0])


def prepare_depthwise(ctx: OpContext):
    x, f, filt, bias_values = _common(ctx, "NHWC / 1HWO")
    n, h, w, c = x.shape
    one, kh, kw, o = f.shape
    if one != 1 or c < 1 or o % c != 0:
        raise ctx.shape_error(
            f"filter shape {list(f.shape)} must be [1, KH, KW, O] with O a multiple of the "
            f"input channels ({c})"
        )
    multiplier = o // c  # like depthwise_conv.cc, derived from the shapes
    _check_bias(ctx, bias_values, o)
    xq, out = qparams(ctx, x, "input"), qparams(ctx, ctx.outputs[0], "output")
    scales, zps = _weight_params(ctx, x, f, o, 3)
    # The XNNPACK delegate takes int8 depthwise convolutions, and uint8 ones whose
    # (per-tensor) filter quantization names dimension 0 -- measured: with
    # quantized_dimension 3 it leaves them to TFLite's optimized kernel, whose
    # arithmetic is the reference one.
    xnnpack = not ctx.quant.reference and (
        x.dtype == np.int8 or f.quantization.quantized_dimension == 0)
    requant = _requant(ctx, x, xq, scales, out, xnnpack)
    lo, hi = activation_bounds(ctx, out, x.dtype, xnnpack)

    pad = padding_option(ctx)
    wh = window_1d(ctx, "height", h, kh, int(ctx.option("stride_h", 1)),
                   int(ctx.option("dilation_h_factor", 1)), pad)
    ww = window_1d(ctx, "width", w, kw, int(ctx.option("stride_w", 1)),
                   int(ctx.option("dilation_w_factor", 1)), pad)
    padded, interior = padded_scratch(ctx, n, wh, ww, o, np.int32, 0)
    wf = (filt - zps.reshape(1, 1, 1, o)).astype(np.int32)
    taps, weights = [], []
    for ky in range(kh):
        for kx in range(kw):
            taps.append(tap_view(padded, wh, ww, ky, kx))
            weights.append(np.ascontiguousarray(wf[0, ky, kx]))
    out_shape = (n, wh.size_out, ww.size_out, o)
    record = QDepthwiseRecord(
        interior.reshape(n, h, w, c, multiplier), tuple(taps), tuple(weights),
        scratch(ctx, out_shape, np.int32), scratch(ctx, out_shape, np.int32), xq.zero_point,
        out.zero_point, _Biased(requant, bias_values), lo, hi)
    return (OutputSpec(out_shape, x.dtype),), record


def eval_depthwise(rec: QDepthwiseRecord, inputs, outputs) -> None:
    # x - zp_x, each input channel repeated M times (channel c*M + m reads channel c).
    np.subtract(inputs[0][..., np.newaxis], rec.zp_x, out=rec.interior, dtype=np.int32)
    acc = rec.acc
    np.multiply(rec.taps[0], rec.weights[0], out=acc)
    for tap, weight in zip(rec.taps[1:], rec.weights[1:], strict=True):
        np.multiply(tap, weight, out=rec.product)
        np.add(acc, rec.product, out=acc)
    values = rec.requant(acc.astype(np.int64))
    values += rec.zp_out
    clamp_out(values, rec.lo, rec.hi, outputs[0])


CONV_2D = Kernel(prepare_conv, eval_conv)
DEPTHWISE_CONV_2D = Kernel(prepare_depthwise, eval_depthwise)
