"""DEPTHWISE_CONV_2D, float32: a sum over kernel taps.

Matches tensorflow/lite/kernels/depthwise_conv.cc (Prepare) and reference_ops::DepthwiseConv
(tensorflow/lite/kernels/internal/reference/depthwiseconv_float.h):

    out[n, y, x, c*M + m] = bias[c*M + m] + sum_{ky, kx}
        in[n, y*sh + ky*dh - pad_t, x*sw + kx*dw - pad_l, c] * filter[0, ky, kx, c*M + m]

Layouts: input NHWC, filter 1HWO with O = C * M (M = depth multiplier), bias [O].

Strategy (``TapSum``, shared with the int8 / uint8 kernel): the input is copied into a
zero-padded buffer, split into stride phases (padding.TapBuffer), with every input
channel repeated M times so that channel c*M + m holds input channel c. The pixels under
tap (ky, kx) are then a stride-1 view (N, OH, OW, C*M) of that buffer, and the tap
contributes view * filter[0, ky, kx, :]: KH*KW vectorized multiply-adds per invoke. The
filter row of each tap is stored tiled to (OW, C*M), so every operand of those multiply-
adds walks OW*C*M contiguous values at a time rather than C*M. With the native backend and
a constant bias (or none) the op is one C kernel instead (common/native_depthwise_f32.py:
the same sums in the same order, the same floats).

int8 / uint8 -- depthwise_conv.cc with reference_integer_ops::DepthwiseConvPerChannel
(int8, reference/integer_ops/depthwise_conv.h) and reference_ops::DepthwiseConv (uint8,
reference/depthwiseconv_uint8.h): the integer arithmetic of conv.py's integer path
(acc = bias + sum (w - zp_w) * (x - zp_x), then the kernel set's requantization and
clamp), with int8 weights per channel along axis 3 or per tensor. The XNNPACK delegate
(DEFAULT) takes int8 depthwise convolutions and uint8 ones whose filter quantization
names dimension 0; the others stay with TFLite's optimized kernel, whose arithmetic is
the reference one. The taps are summed by the same TapSum over x - zp_x and w - zp_w, in
float32 where every partial sum is exact there, else in float64 (accumulator). With the
native backend the whole op is one C kernel instead (common/native_depthwise.py: int32
taps, the output stage fused, identical outputs).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..parallel import output_slices, run_slices, worth_splitting
from .common.accumulator import AccumulatorPlan, plan_accumulator
from .base import Kernel, OpContext, OutputSpec, num_elements, temporary
from .conv import check_bias, conv_requant, float_operands, quantized_operands, weight_params
from .common.native_depthwise import native_depthwise
from .common.native_depthwise_f32 import native_depthwise_f32
from .common.fused import Clamp, activation_clamp, apply_clamp
from .hybrid import conv as hybrid_conv
from .opdef import Affine, OpDef, QuantRule
from .versions import OpSignature, T
from .common.requantize import OutputStage, activation_bounds, output_stage, qparams
from .int16.affine import DEPTHWISE16
from .common.window import (TapBuffer, Window1D, conv_windows, padded_scratch, patches_view,
                            tap_buffer)


# Ops with up to this many products (output values x kernel taps) take the small-tensor
# path (one multiply over all windows, one reduction) instead of KH*KW multiply-adds:
# fewer numpy calls where each call costs more than its arithmetic.
SMALL_PRODUCTS = 9 * 2**13
SMALL_OUTPUT = 2**13  # outputs up to this size get a constant bias tiled over all of them


@dataclass(frozen=True)
class TapSum:
    """out = sum over taps of tap_view * weight[tap], in the buffer's dtype.

    Large outputs: per tap, one multiply into ``product`` and one add, on stride-1 views
    with (OW, C*M) rows. Small outputs (``windows`` set): one multiply of the
    (KH, KW, N, OH, OW, C*M) window view by the filter into ``product``, then one sum
    over its first axis (taps in order, whole contiguous slabs at a time)."""

    buffer: TapBuffer
    weights: tuple[np.ndarray, ...]  # per tap (OW, C*M); small: one, shaped like windows
    product: np.ndarray  # scratch: one tap's products, or all windows' (small)
    windows: np.ndarray | None = None  # small path: (KH, KW, N, OH, OW, C*M) window view

    def rows(self, index: tuple) -> "TapSum":
        """The same sum restricted to output rows ``index`` (an (N, OH) slice); the
        buffer is shared, so load() once before running the slices."""
        return replace(self, buffer=replace(self.buffer, taps=tuple(
            t[index] for t in self.buffer.taps)), product=self.product[index])

    def __call__(self, out: np.ndarray) -> None:
        taps, weights, product = self.buffer.taps, self.weights, self.product
        if self.windows is not None:
            np.multiply(self.windows, weights[0], out=product)
            taps_first = product.reshape(len(product) * product.shape[1], -1)
            np.add.reduce(taps_first, axis=0, out=out.reshape(-1))
            return
        np.multiply(taps[0], weights[0], out=out)
        for i in range(1, len(taps)):
            np.multiply(taps[i], weights[i], out=product)
            np.add(out, product, out=out)


def tap_sum(ctx: OpContext, n: int, wh: Window1D, ww: Window1D, channels: int,
            multiplier: int, filt: np.ndarray, dtype) -> TapSum:
    """``filt``: the (KH, KW, C*M) filter values in ``dtype``."""
    width = channels * multiplier
    out_shape = (n, wh.size_out, ww.size_out, width)
    if num_elements(out_shape) * wh.kernel * ww.kernel <= SMALL_PRODUCTS:
        padded, interior = padded_scratch(ctx, n, wh, ww, width, dtype, 0)
        if multiplier > 1:
            interior = interior.reshape(interior.shape[:3] + (channels, multiplier))
        buffer = TapBuffer(((interior, (slice(None),)),), (), multiplier)
        windows = patches_view(padded, wh, ww).transpose(3, 4, 0, 1, 2, 5)
        weights = np.ascontiguousarray(
            np.broadcast_to(filt[:, :, None, None, None, :], windows.shape))
        return TapSum(buffer, (weights,), temporary(ctx, windows.shape, dtype), windows)
    buffer = tap_buffer(ctx, n, wh, ww, channels, dtype, 0, multiplier)
    weights = tuple(np.ascontiguousarray(np.broadcast_to(filt[ky, kx], (ww.size_out, width)))
                    for ky in range(wh.kernel) for kx in range(ww.kernel))
    return TapSum(buffer, weights, temporary(ctx, out_shape, dtype))


@dataclass(frozen=True)
class DepthwiseRecord:
    taps: TapSum
    bias: np.ndarray | None  # constant bias tiled to (OW, O); None: read the input (if any)
    clamp: Clamp
    threads: int = 1
    slices: tuple = ()  # several threads: (output row index, TapSum of those rows) pairs


def prepare(ctx: OpContext):
    x, f, bias = float_operands(ctx, "1HWO")
    n, h, w, c = x.shape
    one, kh, kw, o = f.shape
    if one != 1:
        raise ctx.shape_error(f"filter shape {list(f.shape)} must be [1, KH, KW, O]")
    if c < 1 or o % c != 0:
        raise ctx.shape_error(
            f"filter output channels ({o}) must be a multiple of input channels ({c})"
        )
    # The depth_multiplier option is redundant: LiteRT's depthwise_conv.cc derives the
    # multiplier from the shapes (O / C) and ignores the option, even 0 or a wrong value.
    multiplier = o // c
    if bias is not None:
        ctx.require_dtype(bias, (np.float32,), "bias")
        if bias.shape != (o,):
            raise ctx.shape_error(f"bias shape {list(bias.shape)} must be [{o}]")
    filt = ctx.constant_input(1, "filter").astype(np.float32)

    wh, ww = conv_windows(ctx, h, w, kh, kw)
    clamp = activation_clamp(ctx, np.float32)
    out_shape = (n, wh.size_out, ww.size_out, o)
    if bias is None or bias.is_constant:  # the C kernel (a constant bias or none)
        native = native_depthwise_f32(ctx, x.shape, filt[0], multiplier, wh, ww,
                                      None if bias is None else bias.data, clamp)
        if native is not None:
            return (OutputSpec(out_shape, np.dtype(np.float32)),), native
    taps = tap_sum(ctx, n, wh, ww, c, multiplier, filt[0], np.float32)
    tiled_bias = None
    if bias is not None and bias.is_constant:
        out_shape = (n, wh.size_out, ww.size_out, o)
        shape = out_shape if num_elements(out_shape) <= SMALL_OUTPUT else (ww.size_out, o)
        tiled_bias = np.ascontiguousarray(
            np.broadcast_to(bias.data.astype(np.float32), shape))
    record = DepthwiseRecord(taps=taps, bias=tiled_bias, clamp=clamp, threads=ctx.threads,
                             slices=split_rows(taps, ctx.threads, out_shape))
    return (OutputSpec(out_shape, np.dtype(np.float32)),), record


def split_rows(taps: TapSum, threads: int, out_shape: tuple) -> tuple:
    """(index, TapSum of those rows) per slice when the op is worth splitting, else ()."""
    parts = worth_splitting(threads, num_elements(out_shape))
    if parts == 1 or taps.windows is not None:
        return ()
    return tuple((index, taps.rows(index))
                 for index in output_slices(out_shape[0], out_shape[1], parts))


def eval(rec: DepthwiseRecord, inputs, outputs) -> None:
    out = outputs[0]
    rec.taps.buffer.load(inputs[0])
    if rec.slices:
        run_slices(rec.threads, _eval_rows, [(rec, taps, inputs, out[index])
                                             for index, taps in rec.slices])
    else:
        _eval_rows(rec, rec.taps, inputs, out)


def _eval_rows(rec: DepthwiseRecord, taps: TapSum, inputs, out: np.ndarray) -> None:
    taps(out)
    if rec.bias is not None:
        np.add(out, rec.bias, out=out)
    elif len(inputs) > 2 and inputs[2] is not None:
        np.add(out, inputs[2], out=out)
    apply_clamp(rec.clamp, out)


# --------------------------------------------------------------------------- int8 / uint8


@dataclass(frozen=True, kw_only=True)
class QDepthwiseRecord:
    plan: AccumulatorPlan  # float32 or float64 taps, and whether acc + bias wraps
    taps: TapSum  # the float tap sum over x - zp_x and w - zp_w (exact integers)
    acc: np.ndarray  # (N, OH, OW, C*M) scratch, work dtype
    zp_x: int
    output: OutputStage
    threads: int = 1
    slices: tuple = ()  # several threads: (index, TapSum, OutputStage) per row slice


def prepare_quantized(ctx: OpContext):
    x, f, filt, bias_values = quantized_operands(ctx, "NHWC / 1HWO")
    n, h, w, c = x.shape
    one, kh, kw, o = f.shape
    if one != 1 or c < 1 or o % c != 0:
        raise ctx.shape_error(
            f"filter shape {list(f.shape)} must be [1, KH, KW, O] with O a multiple of the "
            f"input channels ({c})"
        )
    multiplier = o // c  # like depthwise_conv.cc, derived from the shapes
    check_bias(ctx, bias_values, o)
    xq, out = qparams(ctx, x, "input"), qparams(ctx, ctx.outputs[0], "output")
    scales, zps = weight_params(ctx, x, f, o, 3)
    # The XNNPACK delegate takes int8 depthwise convolutions, and uint8 ones whose
    # (per-tensor) filter quantization names dimension 0 -- measured: with
    # quantized_dimension 3 it leaves them to TFLite's optimized kernel, whose
    # arithmetic is the reference one.
    xnnpack = not ctx.quant.reference and (
        x.dtype == np.int8 or f.quantization.quantized_dimension == 0)
    requant = conv_requant(ctx, x, xq, scales, out, xnnpack)
    lo, hi = activation_bounds(ctx, out, x.dtype, xnnpack)

    wh, ww = conv_windows(ctx, h, w, kh, kw)
    centered = (filt - zps.astype(np.int16).reshape(1, 1, 1, o))[0]  # (KH, KW, O): w - zp_w
    out_shape = (n, wh.size_out, ww.size_out, o)
    native = native_depthwise(ctx, x.shape, x.dtype, centered, multiplier, wh, ww,
                              bias_values, xq.zero_point, requant, out.zero_point, lo, hi)
    if native is not None:  # the C kernel: integer taps, the output stage fused
        return (OutputSpec(out_shape, x.dtype),), native
    # The taps are not split: float64 where float32 is not exact (a kernel over 500 taps
    # at the worst weights), and where the stage needs a float64 accumulator anyway.
    plan = plan_accumulator(centered.reshape(-1, o), x.dtype, xq.zero_point, bias_values,
                            float32_bias=requant.float32_bias, split=False)
    work = plan.acc_dtype  # float32 only when the taps are exact in float32 and it suffices
    acc = temporary(ctx, out_shape, work)
    stage = output_stage(ctx, requant, bias_values, out.zero_point, lo, hi, acc.size, o, plan,
                         repeat=ww.size_out)
    taps = tap_sum(ctx, n, wh, ww, c, multiplier, centered.astype(work), work)
    slices = tuple((index, part, stage.rows(index, n, wh.size_out))
                   for index, part in split_rows(taps, ctx.threads, out_shape))
    record = QDepthwiseRecord(plan=plan, taps=taps, acc=acc, zp_x=xq.zero_point, output=stage,
                              threads=ctx.threads, slices=slices)
    return (OutputSpec(out_shape, x.dtype),), record


def eval_quantized(rec: QDepthwiseRecord, inputs, outputs) -> None:
    rec.taps.buffer.load(inputs[0], rec.zp_x)  # x - zp_x, channels repeated M times
    if rec.slices:
        run_slices(rec.threads, _quantized_rows, [
            (taps, stage, rec.acc[index], outputs[0][index])
            for index, taps, stage in rec.slices])
        return
    rec.taps(rec.acc)
    rec.output(rec.acc, outputs[0])


def _quantized_rows(taps: TapSum, stage: OutputStage, acc: np.ndarray,
                    out: np.ndarray) -> None:
    taps(acc)
    stage(acc, out)


def version(sig: OpSignature) -> int:
    """op_version.cc, DEPTHWISE_CONV_2D, by (input, filter, output) types: int16
    throughout 5 (op_version.cc reads output 1, as for CONV_2D); float with int8 filters
    (hybrid) 6 if per-channel (one scale per output channel, filter dim 3), else 4; int8 3;
    int8 with int4 filters 7; otherwise 2 for a dilation other than 1."""
    table = {(T.INT16, T.INT16, T.INT16): 5, (T.INT8, T.INT8, T.INT8): 3,
             (T.INT8, T.INT4, T.INT8): 7}
    types = sig.types()
    if types == (T.FLOAT32, T.INT8, T.FLOAT32):
        return 6 if sig.input(1).scales_along(3) else 4
    if types in table:
        return table[types]
    dilated = sig.option("dilation_w_factor", 1) != 1 or sig.option("dilation_h_factor", 1) != 1
    return 2 if dilated else 1


OPS = (
    OpDef("DEPTHWISE_CONV_2D",
          float=Kernel(prepare, eval),
          hybrid=hybrid_conv.DEPTHWISE,
          integer=Kernel(prepare_quantized, eval_quantized),
          int16=DEPTHWISE16,
          quant=QuantRule.OWN_RANGE,
          affine=Affine(data=0, weights=1, bias=2, out_axis=3, in_axis=3),
          fused_activation=True,
          per_sample=True,
          version=version),
)
