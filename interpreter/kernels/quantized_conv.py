"""CONV_2D and DEPTHWISE_CONV_2D on int8 / uint8 tensors.

Matches tensorflow/lite/kernels/conv.cc and depthwise_conv.cc with
reference_integer_ops::ConvPerChannel / DepthwiseConvPerChannel (int8,
tensorflow/lite/kernels/internal/reference/integer_ops/conv.h, depthwise_conv.h) and
reference_ops::Conv / DepthwiseConv (uint8, reference/conv.h, depthwiseconv_uint8.h):

    acc[c] = bias[c] + sum (w - zp_w) * (x - zp_x)      (padding contributes nothing)
    out[c] = clamp(requant_c(acc[c]) + zp_out, act_min, act_max)

with ``requant_c`` chosen by the kernel set (requantize.Requant):

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

Speed: the sums are exact in floating point while every partial sum stays within 2^24
for float32 (2^53 for float64), which the filter and the input zero point bound at
prepare() (accumulator). CONV_2D runs im2col + BLAS in float32: one product where
the bound allows, else the reduction split into float32-exact ranges whose results are
summed in float64. DEPTHWISE_CONV_2D sums its taps in float32, or in float64 where
float32 is not exact. Where bias + sum may overflow int32, the exact sum is wrapped to
int32 like TFLite's accumulator; the requantization then runs on the float accumulator
(requantize.OutputStage).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Kernel, OpContext, OutputSpec, TensorInfo, temporary
from ..parallel import output_slices, run_slices, worth_splitting
from .depthwise_conv import TapSum, split_rows, tap_sum
from .accumulator import AccumulatorPlan, plan_accumulator
from .depthwise_conv import geometry as depthwise_geometry
from .window import padded_scratch, padding_option, patches_view, window_1d
from .requantize import (
    QUANTIZED,
    QParams,
    Requant,
    OutputStage,
    activation_bounds,
    channel_params,
    fixed_requant,
    fp32_requant,
    output_stage,
    qparams,
    require_same_type,
)
from ..names import quoted


@dataclass(frozen=True)
class QConvRecord:
    rows: int  # N * OH * OW
    out_channels: int
    groups: int
    plan: AccumulatorPlan  # float32 / float32 chunks, and whether acc + bias wraps
    weights: np.ndarray  # (groups, K, O/groups) of w - zp_w, in the GEMM dtype
    interior: np.ndarray  # where x - zp_x goes inside the zero-padded scratch
    windows: np.ndarray | None  # (groups, N, OH, OW, KH, KW, Cg) view; None: pointwise
    cols: np.ndarray  # im2col matrix scratch (or the padded scratch itself, pointwise)
    acc: np.ndarray  # (groups, rows, O/groups) scratch, plan.acc_dtype
    part: np.ndarray | None  # like acc in the GEMM dtype, if plan.needs_part
    acc2d: np.ndarray  # (rows, O): acc itself (groups == 1) or a scratch for the transpose
    zp_x: int
    output: OutputStage
    threads: int = 1
    slices: tuple = ()  # several threads (one group): (index, OutputStage) per row slice


@dataclass(frozen=True)
class QDepthwiseRecord:
    plan: AccumulatorPlan  # float32 or float64 taps, and whether acc + bias wraps
    taps: TapSum  # the float tap sum over x - zp_x and w - zp_w (exact integers)
    acc: np.ndarray  # (N, OH, OW, C*M) scratch, work dtype
    zp_x: int
    output: OutputStage
    threads: int = 1
    slices: tuple = ()  # several threads: (index, TapSum, OutputStage) per row slice


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
    filt = ctx.constant_input(1, "filter").astype(np.int16)  # w - zp_w fits int16
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
        raise ctx.unsupported(f"int8 filter {quoted(f.name)} must be symmetric (zero point 0)")
    if x.dtype == np.uint8 and len(f.quantization.scale) != 1:
        raise ctx.unsupported(f"uint8 filter {quoted(f.name)} must be quantized per tensor")
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
    centered = filt - zps.astype(np.int16).reshape(o, 1, 1, 1)  # w - zp_w, OHWI
    plan = plan_accumulator(centered.reshape(o, k).T, x.dtype, xq.zero_point, bias_values,
                            float32_bias=requant.kind == "fp32")
    work = plan.gemm_dtype
    # Filter OHWI -> (groups, K = KH*KW*Cg, O/groups), the im2col column order.
    weights = np.ascontiguousarray(
        centered.astype(work).reshape(groups, og, k).transpose(0, 2, 1))
    unpadded = wh.pad_before + wh.pad_after + ww.pad_before + ww.pad_after == 0
    pointwise = kh == kw == 1 and wh.stride == ww.stride == 1 and groups == 1 and unpadded
    if pointwise:  # x - zp_x itself is the im2col matrix
        windows = None
        cols = interior = temporary(ctx, (n, h, w, c), work)
    else:  # a zero border that must persist: private memory
        padded, interior = padded_scratch(ctx, n, wh, ww, c, work, 0.0)
        view = patches_view(padded, wh, ww)  # (N, OH, OW, KH, KW, C)
        windows = view.reshape(view.shape[:5] + (groups, cg)).transpose(5, 0, 1, 2, 3, 4, 6)
        cols = temporary(ctx, windows.shape, work)
    acc = temporary(ctx, (groups, rows, og), plan.acc_dtype)
    part = temporary(ctx, (groups, rows, og), work) if plan.needs_part else None
    acc2d = acc.reshape(rows, o) if groups == 1 else temporary(ctx, (rows, o), plan.acc_dtype)
    stage = output_stage(ctx, requant, bias_values, out.zero_point, lo, hi, rows * o, o, plan,
                         repeat=ww.size_out)
    out_shape = (n, wh.size_out, ww.size_out, o)
    parts = worth_splitting(ctx.threads, rows * o) if groups == 1 else 1
    slices = () if parts == 1 else tuple(
        (index, stage.rows(index, n, wh.size_out))
        for index in output_slices(n, wh.size_out, parts))
    record = QConvRecord(rows, o, groups, plan, weights, interior, windows, cols, acc, part,
                         acc2d, xq.zero_point, stage, ctx.threads, slices)
    return (OutputSpec(out_shape, x.dtype),), record


def eval_conv(rec: QConvRecord, inputs, outputs) -> None:
    np.subtract(inputs[0], rec.zp_x, out=rec.interior, dtype=rec.interior.dtype)
    if rec.slices:  # one group, output rows split over threads
        run_slices(rec.threads, _conv_rows, [(rec, index, stage, outputs[0])
                                             for index, stage in rec.slices])
        return
    if rec.windows is not None:
        np.copyto(rec.cols, rec.windows)  # im2col
    rec.plan.matmul(rec.cols.reshape(rec.groups, rec.rows, -1), rec.weights, rec.acc, rec.part)
    if rec.groups > 1:  # (groups, rows, O/groups) -> (rows, O)
        np.copyto(rec.acc2d.reshape(rec.rows, rec.groups, -1), rec.acc.transpose(1, 0, 2))
    rec.output(rec.acc2d, outputs[0])  # exact integer sums -> requantized output


def _conv_rows(rec: QConvRecord, index: tuple, stage: OutputStage, out: np.ndarray) -> None:
    """Output rows ``index`` (an (N, OH) slice) of a one-group convolution."""
    if rec.windows is None:  # pointwise: x - zp_x is the im2col matrix
        cols = rec.cols[index]
    else:
        cols = rec.cols[0][index]
        np.copyto(cols, rec.windows[0][index])
    acc = rec.acc.reshape(out.shape)[index].reshape(-1, rec.out_channels)
    part = None if rec.part is None else \
        rec.part.reshape(out.shape)[index].reshape(-1, rec.out_channels)
    rec.plan.matmul(cols.reshape(len(acc), -1), rec.weights[0], acc, part)
    stage(acc, out[index])


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

    wh, ww = depthwise_geometry(ctx, h, w, kh, kw)
    centered = (filt - zps.astype(np.int16).reshape(1, 1, 1, o))[0]  # (KH, KW, O): w - zp_w
    # The taps are not split: float64 where float32 is not exact (a kernel over 500 taps
    # at the worst weights), and where the stage needs a float64 accumulator anyway.
    plan = plan_accumulator(centered.reshape(-1, o), x.dtype, xq.zero_point, bias_values,
                            float32_bias=requant.kind == "fp32", split=False)
    work = plan.acc_dtype  # float32 only when the taps are exact in float32 and it suffices
    taps = tap_sum(ctx, n, wh, ww, c, multiplier, centered.astype(work), work)
    out_shape = (n, wh.size_out, ww.size_out, o)
    acc = temporary(ctx, out_shape, work)
    stage = output_stage(ctx, requant, bias_values, out.zero_point, lo, hi, acc.size, o, plan,
                         repeat=ww.size_out)
    slices = tuple((index, part, stage.rows(index, n, wh.size_out))
                   for index, part in split_rows(taps, ctx.threads, out_shape))
    record = QDepthwiseRecord(plan, taps, acc, xq.zero_point, stage, ctx.threads, slices)
    return (OutputSpec(out_shape, x.dtype),), record


def eval_depthwise(rec: QDepthwiseRecord, inputs, outputs) -> None:
    rec.taps.buffer.load(inputs[0], rec.zp_x)  # x - zp_x, channels repeated M times
    if rec.slices:
        run_slices(rec.threads, _depthwise_rows, [
            (taps, stage, rec.acc[index], outputs[0][index])
            for index, taps, stage in rec.slices])
        return
    rec.taps(rec.acc)
    rec.output(rec.acc, outputs[0])


def _depthwise_rows(taps: TapSum, stage: OutputStage, acc: np.ndarray,
                    out: np.ndarray) -> None:
    taps(acc)
    stage(acc, out)


CONV_2D = Kernel(prepare_conv, eval_conv)
DEPTHWISE_CONV_2D = Kernel(prepare_depthwise, eval_depthwise)
