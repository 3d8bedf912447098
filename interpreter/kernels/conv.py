"""CONV_2D: float32 (im2col + one BLAS matmul) and int8 / uint8 (exact integer sums on
float BLAS, then the kernel set's requantization).

Matches tensorflow/lite/kernels/conv.cc (Prepare: output size and padding via padding.h)
and reference_ops::Conv (tensorflow/lite/kernels/internal/reference/conv.h):

    out[n, y, x, o] = bias[o] + sum_{ky, kx, c} in[n, y*sh + ky*dh - pad_t, x*sw + kx*dw - pad_l, c]
                                               * filter[o, ky, kx, c]

with out-of-range input pixels reading as 0, then the fused activation clamp.

Layouts: input NHWC, filter OHWI (out_channels, KH, KW, in_channels / groups), bias [O].
Grouped convolution (in_channels = groups * filter in_channels) is supported like
reference_ops::Conv: output channel o reads input channels of group o // (O / groups).
The bias is optional here; LiteRT's float kernel insists on one.

float32 -- three strategies, chosen once in prepare(), each with its record and eval:

* pointwise: a 1x1, stride-1, unpadded conv is out[N*H*W, O] = in[N*H*W, C] @ W[C, O];
* im2col: every window of the zero-padded input is a strided view
  (N, OH, OW, KH, KW, C) of a scratch buffer; one copy lays the windows out as rows of
  the im2col matrix [N*OH*OW, KH*KW*C] and one matmul with the pre-transposed filter
  [KH*KW*C, O] writes the output;
* taps: when the im2col matrix would exceed IM2COL_MAX_BYTES, accumulate one matmul per
  kernel tap instead (in[N*OH*OW, C] under tap (ky, kx) @ W[ky, kx] -> [N*OH*OW, O]),
  which needs only input-sized scratch.

int8 / uint8 -- conv.cc with reference_integer_ops::ConvPerChannel (int8,
reference/integer_ops/conv.h) and reference_ops::Conv (uint8, reference/conv.h):

    acc[c] = bias[c] + sum (w - zp_w) * (x - zp_x)      (padding contributes nothing)
    out[c] = clamp(requant_c(acc[c]) + zp_out, act_min, act_max)

with ``requant_c`` chosen by the kernel set (requantize.Requant):

* REFERENCE: MultiplyByQuantizedMultiplier with M_c from QuantizeMultiplier of
    int8:  double(s_x) * double(s_w[c]) / double(s_out)   (PopulateConvolutionQuantizationParams)
    uint8: double(float(s_x * s_w)) / double(s_out)       (GetQuantizedConvolutionMultipler)
  and the clamp of CalculateActivationRangeQuantized;
* DEFAULT (the XNNPACK delegate): rint(float32(acc) * float32(s_x * s_w[c] / s_out))
  with the float32 product taken as (s_x * s_w) / s_out, and XNNPACK's clamp.

int8 weights are symmetric (zero point 0, TFLite's quantization spec; per channel along
axis 0, or per tensor); uint8 weights are per tensor with any zero point. The sums are
exact in floating point while every partial sum stays within 2^24 for float32, which
the filter and the input zero point bound at prepare() (accumulator): im2col + BLAS in
float32, in one product where the bound allows, else with the reduction split into
float32-exact ranges whose results are summed in float64. Where bias + sum may overflow
int32, the exact sum is wrapped to int32 like TFLite's accumulator; the requantization
then runs on the float accumulator (requantize.output_stage). The helpers shared with
DEPTHWISE_CONV_2D's integer path (operands, weight parameters, requantization) are here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.names import quoted
from ..parallel import output_slices, run_slices, worth_splitting
from .common.accumulator import AccumulatorPlan, plan_accumulator
from .base import Chosen, Kernel, OpContext, OutputSpec, TensorInfo, run_chosen, temporary
from .. import native as native_backend
from .common import native_conv_blas, native_float_ops
from .common.fused import Clamp, activation_clamp, apply_clamp
from .hybrid import conv as hybrid_conv
from .opdef import Affine, OpDef, QuantRule
from .versions import OpSignature, T
from .common.requantize import (QUANTIZED, OutputStage, QParams, Requant, activation_bounds,
                                channel_params, fixed_requant, fp32_requant, output_stage, qparams,
                                require_same_type)
from .int16.affine import CONV16
from .common.native_gemm import native_gemm
from .common.window import Window1D, conv_windows, padded_scratch, patches_view, tap_view

IM2COL_MAX_BYTES = 2**28  # 256 MiB


def _four_d(ctx: OpContext, x: TensorInfo, f: TensorInfo, layout: str) -> None:
    if x.rank != 4 or f.rank != 4:
        raise ctx.shape_error(
            f"input {list(x.shape)} and filter {list(f.shape)} must both be 4-D ({layout})"
        )


# --------------------------------------------------------------------------- float32


@dataclass(frozen=True, kw_only=True)
class ConvRecord:
    """What every float strategy keeps: the (rows, O) output, its bias and clamp."""

    rows: int  # N * OH * OW: rows of the 2-D output (and of the im2col matrix)
    out_channels: int
    clamp: Clamp
    bias: np.ndarray | None = None  # a constant bias tiled to (OW * O,)
    width: int = 0  # OW * O: the output as (N * OH, OW * O) rows for the bias add
    threads: int = 1
    slices: tuple = ()  # several threads: index tuples of (N, OH, ...) output row slices
    native_stage: tuple | None = None  # (on, lo, hi): bias + clamp in one C pass


@dataclass(frozen=True, kw_only=True)
class PointwiseRecord(ConvRecord):
    in_channels: int
    weights: np.ndarray  # (C, O)


@dataclass(frozen=True, kw_only=True)
class Im2colRecord(ConvRecord):
    groups: int
    weights: np.ndarray  # (groups, KH*KW*Cg, O/groups)
    interior: np.ndarray  # where the input is copied inside the padded scratch
    patches: np.ndarray  # (groups, N, OH, OW, KH, KW, Cg) view of the padded scratch
    cols: np.ndarray  # scratch shaped like patches
    work: np.ndarray | None  # groups > 1: (groups, rows, O/groups)


@dataclass(frozen=True, kw_only=True)
class TapsRecord(ConvRecord):
    in_channels: int
    weights: np.ndarray  # (KH*KW, C, O)
    interior: np.ndarray  # where the input is copied inside the padded scratch
    taps: tuple[np.ndarray, ...]  # per tap, its (N, OH, OW, C) view of the padded scratch
    cols: np.ndarray  # (N, OH, OW, C) scratch
    work: np.ndarray  # (rows, O) scratch


def float_operands(ctx: OpContext, filter_layout: str):
    """(input, filter, optional bias) of a float convolution, checked: float32, both 4-D."""
    ctx.check_arity(2, 3)
    x, f = ctx.input(0), ctx.input(1)
    bias = ctx.optional_input(2)
    ctx.require_dtype(x, (np.float32,), "input")
    ctx.require_dtype(f, (np.float32,), "filter")
    _four_d(ctx, x, f, f"NHWC / {filter_layout}")
    return x, f, bias


def prepare(ctx: OpContext):
    x, f, bias = float_operands(ctx, "OHWI")
    n, h, w, c = x.shape
    o, kh, kw, cg = f.shape
    if cg < 1 or c % cg != 0:
        raise ctx.shape_error(
            f"input channels ({c}) must be a multiple of the filter's input channels ({cg})"
        )
    groups = c // cg
    if o % groups != 0:
        raise ctx.shape_error(f"output channels ({o}) must be a multiple of groups ({groups})")
    if bias is not None:
        ctx.require_dtype(bias, (np.float32,), "bias")
        if bias.shape != (o,):
            raise ctx.shape_error(f"bias shape {list(bias.shape)} must be [{o}]")
    filt = ctx.constant_input(1, "filter").astype(np.float32)

    wh, ww = conv_windows(ctx, h, w, kh, kw)
    out_spec = (OutputSpec((n, wh.size_out, ww.size_out, o), np.dtype(np.float32)),)
    rows = n * wh.size_out * ww.size_out
    og = o // groups

    unpadded = wh.pad_before + wh.pad_after + ww.pad_before + ww.pad_after == 0
    # A constant bias is added as rows of OW * O values (numpy walks long rows, not O at
    # a time); a bias computed at run time is broadcast as it comes.
    tiled = None
    if bias is not None and bias.is_constant:
        tiled = np.tile(bias.data.astype(np.float32), ww.size_out)
    clamp = activation_clamp(ctx, np.float32)
    common = dict(rows=rows, out_channels=o, clamp=clamp, bias=tiled, width=ww.size_out * o,
                  native_stage=None if bias is not None and tiled is None
                  else native_float_ops.output_stage(ctx, clamp))
    native = _conv_blas(ctx, filt, bias, clamp, x.shape, o, wh, ww, unpadded) \
        if groups == 1 else None
    if native is not None:
        return out_spec, native
    split = {}
    # One image: one BLAS product on the invoking thread. Its rows split over the Python
    # pool measured 3-8 % faster on an idle 2-core machine and 10-15 % slower on a busy one
    # (MobileNetV2 224 float, docs/native-run-loop.md); whole images per thread still pay.
    parts = worth_splitting(ctx.threads, rows * o) if n > 1 else 1
    if parts > 1:
        split = dict(threads=ctx.threads, slices=tuple(output_slices(n, wh.size_out, parts)))
    if kh == kw == 1 and wh.stride == ww.stride == 1 and groups == 1 and unpadded:
        weights = np.ascontiguousarray(filt.reshape(o, c).T)
        return out_spec, Chosen(eval_pointwise, PointwiseRecord(
            in_channels=c, weights=weights, **common, **split))

    padded, interior = padded_scratch(ctx, n, wh, ww, c, np.float32, 0.0)
    im2col_bytes = rows * kh * kw * c * 4
    if im2col_bytes > IM2COL_MAX_BYTES and groups == 1:
        # Filter OHWI -> (KH*KW, C, O): one [C, O] matrix per tap.
        weights = np.ascontiguousarray(filt.reshape(o, kh * kw, c).transpose(1, 2, 0))
        taps = tuple(tap_view(padded, wh, ww, ky, kx) for ky in range(kh) for kx in range(kw))
        return out_spec, Chosen(eval_taps, TapsRecord(
            in_channels=c, weights=weights, interior=interior, taps=taps,
            cols=temporary(ctx, (n, wh.size_out, ww.size_out, c), np.float32),
            work=temporary(ctx, (rows, o), np.float32), **common))

    # Filter OHWI -> (groups, K = KH*KW*Cg, O/groups), matching the im2col column order.
    weights = np.ascontiguousarray(filt.reshape(groups, og, kh * kw * cg).transpose(0, 2, 1))
    windows = patches_view(padded, wh, ww)  # (N, OH, OW, KH, KW, C)
    # Split the channel axis into (groups, Cg) and move groups first.
    patches = windows.reshape(windows.shape[:5] + (groups, cg)).transpose(5, 0, 1, 2, 3, 4, 6)
    cols = temporary(ctx, patches.shape, np.float32)
    work = temporary(ctx, (groups, rows, og), np.float32) if groups > 1 else None
    return out_spec, Chosen(eval_im2col, Im2colRecord(
        groups=groups, weights=weights, interior=interior, patches=patches, cols=cols,
        work=work, **common, **(split if groups == 1 else {})))


def _conv_blas(ctx: OpContext, filt, bias, clamp, x_shape, o: int, wh, ww,
               unpadded: bool) -> Chosen | None:
    """The native step of a one-group float convolution (native_conv_blas: blocks of
    output pixels on the C pool, each on gemm_f32.c's packed tiles or numpy's sgemm), or
    None where the backend is off, neither can run, or the bias is computed at run time."""
    if not ctx.quant.native or (bias is not None and not bias.is_constant) \
            or not native_conv_blas.available():
        return None
    n, h, w, c = x_shape
    kh, kw = wh.kernel, ww.kernel
    k = kh * kw * c
    pointwise = kh == kw == 1 and wh.stride == ww.stride == 1 and unpadded
    block = native_backend.module.conv_blas_block()
    weights, packed = native_conv_blas.filter_matrix(filt.reshape(o, k))
    return Chosen(native_conv_blas.eval_conv_blas, native_conv_blas.ConvBlas(
        weights=weights, packed=packed,
        bias=None if bias is None else np.ascontiguousarray(bias.data, np.float32),
        scratch=None if pointwise else temporary(ctx, (ctx.threads, block, k), np.float32),
        dims=(n, h, w, c, o),
        window=(kh, kw, wh.stride, ww.stride, wh.dilation, ww.dilation, wh.pad_before,
                ww.pad_before, wh.size_out, ww.size_out),
        bounds=native_float_ops.clamp_bounds(clamp), threads=ctx.threads))


def eval_pointwise(rec: PointwiseRecord, inputs, outputs) -> None:
    if rec.slices:
        run_slices(rec.threads, _pointwise_rows, [(rec, inputs, outputs[0], index)
                                                  for index in rec.slices])
        return
    out2d = outputs[0].reshape(rec.rows, rec.out_channels)
    # The NHWC input already is the im2col matrix.
    np.matmul(inputs[0].reshape(rec.rows, rec.in_channels), rec.weights, out=out2d)
    _finish(rec, inputs, out2d)


def _pointwise_rows(rec: PointwiseRecord, inputs, out: np.ndarray, index: tuple) -> None:
    """Output rows ``index`` (a slice of the (N, OH) axes)."""
    out2d = out[index].reshape(-1, rec.out_channels)
    np.matmul(inputs[0][index].reshape(-1, rec.in_channels), rec.weights, out=out2d)
    _finish(rec, inputs, out2d)


def eval_im2col(rec: Im2colRecord, inputs, outputs) -> None:
    np.copyto(rec.interior, inputs[0])
    if rec.slices:  # one group, split by output rows over threads
        run_slices(rec.threads, _im2col_rows, [(rec, inputs, outputs[0], index)
                                               for index in rec.slices])
        return
    out2d = outputs[0].reshape(rec.rows, rec.out_channels)
    np.copyto(rec.cols, rec.patches)
    cols2d = rec.cols.reshape(rec.groups, rec.rows, -1)
    if rec.groups == 1:
        np.matmul(cols2d[0], rec.weights[0], out=out2d)
    else:
        np.matmul(cols2d, rec.weights, out=rec.work)
        # (groups, rows, O/groups) -> (rows, groups, O/groups) == (rows, O)
        np.copyto(out2d.reshape(rec.rows, rec.groups, -1), rec.work.transpose(1, 0, 2))
    _finish(rec, inputs, out2d)


def _im2col_rows(rec: Im2colRecord, inputs, out: np.ndarray, index: tuple) -> None:
    """Output rows ``index`` (a slice of the (N, OH) axes) of a one-group im2col."""
    out2d = out[index].reshape(-1, rec.out_channels)
    cols = rec.cols[0][index]  # (N', OH', OW, KH, KW, C) of the one group
    np.copyto(cols, rec.patches[0][index])
    np.matmul(cols.reshape(len(out2d), -1), rec.weights[0], out=out2d)
    _finish(rec, inputs, out2d)


def eval_taps(rec: TapsRecord, inputs, outputs) -> None:
    out2d = outputs[0].reshape(rec.rows, rec.out_channels)
    np.copyto(rec.interior, inputs[0])
    cols2d = rec.cols.reshape(rec.rows, rec.in_channels)
    out2d.fill(0.0)
    for tap, weight in zip(rec.taps, rec.weights, strict=True):
        np.copyto(rec.cols, tap)
        np.matmul(cols2d, weight, out=rec.work)
        np.add(out2d, rec.work, out=out2d)
    _finish(rec, inputs, out2d)


def _finish(rec: ConvRecord, inputs, out2d: np.ndarray) -> None:
    """Bias and fused activation on (rows, O) output rows."""
    if rec.native_stage is not None and out2d.flags.c_contiguous:
        native_float_ops.run_output_stage(out2d, rec.bias, rec.width, rec.native_stage)
        return
    if rec.bias is not None:
        rows = out2d.reshape(-1, rec.width)
        np.add(rows, rec.bias, out=rows)
    elif len(inputs) > 2 and inputs[2] is not None:
        np.add(out2d, inputs[2], out=out2d)
    apply_clamp(rec.clamp, out2d)


# --------------------------------------------------------------------------- int8 / uint8


@dataclass(frozen=True, kw_only=True)
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


def quantized_operands(ctx: OpContext, layout: str):
    """(input, filter, filter values as int16, int64 bias values or None) of an int8 /
    uint8 convolution, checked: input, filter and output of one type, both 4-D."""
    ctx.check_arity(2, 3)
    x, f = ctx.input(0), ctx.input(1)
    bias = ctx.optional_input(2)
    ctx.require_dtype(x, QUANTIZED, "input")
    require_same_type(ctx, x, f)
    require_same_type(ctx, x, ctx.outputs[0])
    _four_d(ctx, x, f, layout)
    if bias is not None:
        ctx.require_dtype(bias, (np.int32,), "bias")
    filt = ctx.constant_input(1, "filter").astype(np.int16)  # w - zp_w fits int16
    bias_values = None
    if bias is not None:
        bias_values = ctx.constant_input(2, "bias").astype(np.int64).reshape(-1)
    return x, f, filt, bias_values


def conv_requant(ctx: OpContext, x: TensorInfo, xq: QParams, wscales: np.ndarray,
                 out: QParams, xnnpack: bool) -> Requant:
    if xnnpack:
        # xnn_create_convolution2d_nhwc_qs8_qc8w: input_scale * kernel_scale / output_scale.
        return fp32_requant(np.float32(xq.scale) * wscales / np.float32(out.scale))
    if x.dtype == np.uint8:
        # GetQuantizedConvolutionMultipler: the input * filter product is a float.
        product = float(np.float32(xq.scale) * wscales[0])
        return fixed_requant([product / out.scale], ctx.quant)
    return fixed_requant([xq.scale * float(s) / out.scale for s in wscales], ctx.quant)


def weight_params(ctx: OpContext, x: TensorInfo, f: TensorInfo, channels: int, axis: int):
    """(scales, zero points) of the filter: int8 symmetric, uint8 per tensor."""
    scales, zps = channel_params(ctx, f, "filter", channels, axis)
    if x.dtype == np.int8 and np.any(zps != 0):
        raise ctx.unsupported(f"int8 filter {quoted(f.name)} must be symmetric (zero point 0)")
    if x.dtype == np.uint8 and len(f.quantization.scale) != 1:
        raise ctx.unsupported(f"uint8 filter {quoted(f.name)} must be quantized per tensor")
    return scales, zps


def check_bias(ctx: OpContext, bias_values: np.ndarray | None, channels: int) -> None:
    if bias_values is not None and bias_values.size != channels:
        raise ctx.shape_error(f"bias holds {bias_values.size} values, expected {channels}")


def prepare_quantized(ctx: OpContext):
    x, f, filt, bias_values = quantized_operands(ctx, "NHWC / OHWI")
    n, h, w, c = x.shape
    o, kh, kw, cg = f.shape
    if cg < 1 or c % cg != 0 or o % (c // cg) != 0:
        raise ctx.shape_error(
            f"input channels ({c}) must be a multiple of the filter's ({cg}), and output "
            f"channels ({o}) a multiple of the groups"
        )
    groups = c // cg
    check_bias(ctx, bias_values, o)
    xq, out = qparams(ctx, x, "input"), qparams(ctx, ctx.outputs[0], "output")
    scales, zps = weight_params(ctx, x, f, o, 0)
    xnnpack = not ctx.quant.reference
    requant = conv_requant(ctx, x, xq, scales, out, xnnpack)
    lo, hi = activation_bounds(ctx, out, x.dtype, xnnpack)

    wh, ww = conv_windows(ctx, h, w, kh, kw)
    rows, og, k = n * wh.size_out * ww.size_out, o // groups, kh * kw * cg
    # w - zp_w, OHWI (int8 filters are symmetric: no copy)
    centered = filt - zps.astype(np.int16).reshape(o, 1, 1, 1) if zps.any() else filt
    out_shape = (n, wh.size_out, ww.size_out, o)
    unpadded = wh.pad_before + wh.pad_after + ww.pad_before + ww.pad_after == 0
    pointwise = kh == kw == 1 and wh.stride == ww.stride == 1 and groups == 1 and unpadded
    native = None if groups > 1 else native_gemm(
        ctx, x.dtype, centered.reshape(o, k), bias_values, xq.zero_point, requant,
        out.zero_point, lo, hi, rows, None if pointwise else native_geometry(x.shape, wh, ww))
    if native is not None:
        return (OutputSpec(out_shape, x.dtype),), native
    plan = plan_accumulator(centered.reshape(o, k).T, x.dtype, xq.zero_point, bias_values,
                            float32_bias=requant.float32_bias)
    work = plan.gemm_dtype
    # Filter OHWI -> (groups, K = KH*KW*Cg, O/groups), the im2col column order.
    weights = np.ascontiguousarray(
        centered.astype(work).reshape(groups, og, k).transpose(0, 2, 1))
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
    parts = worth_splitting(ctx.threads, rows * o) if groups == 1 else 1
    slices = () if parts == 1 else tuple(
        (index, stage.rows(index, n, wh.size_out))
        for index in output_slices(n, wh.size_out, parts))
    record = QConvRecord(rows=rows, out_channels=o, groups=groups, plan=plan, weights=weights,
                         interior=interior, windows=windows, cols=cols, acc=acc, part=part,
                         acc2d=acc2d, zp_x=xq.zero_point, output=stage, threads=ctx.threads,
                         slices=slices)
    return (OutputSpec(out_shape, x.dtype),), record


def native_geometry(x_shape, wh: Window1D, ww: Window1D) -> tuple:
    """native/conv.c's im2col geometry (N, H, W, C, KH, KW, SH, SW, DH, DW, pad_top,
    pad_left, OH, OW)."""
    n, h, w, c = x_shape
    return (n, h, w, c, wh.kernel, ww.kernel, wh.stride, ww.stride, wh.dilation,
            ww.dilation, wh.pad_before, ww.pad_before, wh.size_out, ww.size_out)


def eval_quantized(rec: QConvRecord, inputs, outputs) -> None:
    np.subtract(inputs[0], rec.zp_x, out=rec.interior, dtype=rec.interior.dtype)
    if rec.slices:  # one group, output rows split over threads
        run_slices(rec.threads, _quantized_rows, [(rec, index, stage, outputs[0])
                                                  for index, stage in rec.slices])
        return
    if rec.windows is not None:
        np.copyto(rec.cols, rec.windows)  # im2col
    rec.plan.matmul(rec.cols.reshape(rec.groups, rec.rows, -1), rec.weights, rec.acc, rec.part)
    if rec.groups > 1:  # (groups, rows, O/groups) -> (rows, O)
        np.copyto(rec.acc2d.reshape(rec.rows, rec.groups, -1), rec.acc.transpose(1, 0, 2))
    rec.output(rec.acc2d, outputs[0])  # exact integer sums -> requantized output


def _quantized_rows(rec: QConvRecord, index: tuple, stage: OutputStage, out: np.ndarray) -> None:
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


def version(sig: OpSignature) -> int:
    """op_version.cc, CONV_2D, by (input, filter, output) types: 16x8 with a
    quantized_bias_type 8; grouped (the input's channels are not the filter's) 6; int16
    throughout 4 (op_version.cc reads output 1 there, a slip for output 0); int8 3;
    int8 with int4 filters 7; float with int8 filters (hybrid) 5 if per-channel (one scale
    per filter), else 2."""
    types = sig.types()
    if types == (T.INT16, T.INT8, T.INT16) and sig.option("quantized_bias_type"):
        return 8
    x, w = sig.input(0), sig.input(1)
    if x.rank == 4 and w.rank == 4 and x.shape[3] != w.shape[3]:
        return 6
    table = {(T.INT16, T.INT16, T.INT16): 4, (T.INT8, T.INT8, T.INT8): 3,
             (T.INT8, T.INT4, T.INT8): 7}
    if types in table:
        return table[types]
    if types == (T.FLOAT32, T.INT8, T.FLOAT32):
        return 5 if w.scales_along(0) else 2
    return 1


OPS = (
    OpDef("CONV_2D",
          float=Kernel(prepare, run_chosen),
          hybrid=hybrid_conv.CONV,
          integer=Kernel(prepare_quantized, eval_quantized),
          int16=CONV16,
          quant=QuantRule.OWN_RANGE,
          affine=Affine(data=0, weights=1, bias=2, out_axis=0, in_axis=3),
          fused_activation=True,
          per_sample=True,
          version=version),
)
