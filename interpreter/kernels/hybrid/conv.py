"""CONV_2D and DEPTHWISE_CONV_2D, dynamic-range (hybrid): float32 input NHWC, int8
filter (OHWI / 1HWO; per tensor or per output channel, zero point 0), float32 bias and
output.

Each image of the batch is quantized as one row (hybrid/), the windows of q - o (the
zero-padded border contributes nothing, as the kernels skip it) are summed exactly with
the filter, and the accumulator is scaled back:

* CONV_2D, REFERENCE: per-tensor filters take conv.cc EvalHybrid (symmetric input,
  optimized_ops::HybridConv: ``acc * (s_r * s_w) + bias``); per-channel filters
  EvalHybridPerChannel (asymmetric input, HybridConvPerChannel:
  ``(acc * s_w[c]) * s_r + bias``). DEFAULT: XNNPACK's dynamically quantized
  convolution (qd8 per image, FMA); an ungrouped 1x1 stride-1 convolution XNNPACK runs as a fully
  connected layer, each pixel quantized as its own row. A grouped convolution (filter
  input channels C / G: RegNet, ResNeXt) sums each group's windows with its own
  filters (reference_ops::HybridConvPerChannel's `groups`); the quantization and scaling
  are those of the ungrouped convolution.
* DEPTHWISE_CONV_2D (per-channel filters only, as depthwise_conv.cc requires):
  asymmetric input, DepthwiseConvHybridPerChannel's ``acc * (s_w[c] * s_r) + bias``
  for both kernel sets: XNNPACK does not take it, and the optimized builtin kernel
  rounds in an order that varies with the shape and the border (mostly
  ``(acc * s_w[c]) * s_r``), so DEFAULT outputs are LiteRT's reference ones -- within
  LiteRT's own spread between its two kernel sets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..base import Kernel, OpContext, OutputSpec, temporary
from . import (HYBRID, HybridOutput, InputQuant, Order, hybrid_output, input_quant, quantize_rows,
               require_int8_weights, weight_scales)
from ..common.window import conv_windows, padded_scratch, patches_view


@dataclass(frozen=True, kw_only=True)
class HybridConvRecord:
    quant: InputQuant
    x_q: np.ndarray  # (N, H*W*C) float64 scratch: q - o per image (per pixel: (N*H*W, C))
    interior: np.ndarray  # where q - o goes inside the zero-padded scratch
    windows: np.ndarray  # (N, OH, OW, KH, KW, C) view of the padded scratch
    weights: np.ndarray  # conv: (KH*KW*C, O), grouped (G, KH*KW*C/G, O/G); depthwise:
    depthwise: bool      # (KH, KW, C, M), float64
    output: HybridOutput
    groups: int = 1


def _operands(ctx: OpContext, layout: str):
    ctx.check_arity(2, 3)
    x, f = ctx.input(0), ctx.input(1)
    if x.rank != 4 or f.rank != 4:
        raise ctx.shape_error(
            f"input {list(x.shape)} and filter {list(f.shape)} must both be 4-D ({layout})")
    return x, f, require_int8_weights(ctx, f, "filter")


def _record(ctx: OpContext, x, f, kh: int, kw: int, weights: np.ndarray, depthwise: bool,
            quant: InputQuant, output: HybridOutput, groups: int = 1):
    n, h, w, c = x.shape
    wh, ww = conv_windows(ctx, h, w, kh, kw)
    rows = n
    if quant is InputQuant.XNNPACK and kh == kw == 1 and wh.stride == ww.stride == 1 \
            and groups == 1:
        rows = n * h * w  # XNNPACK's fully connected: one row per pixel
    padded, interior = padded_scratch(ctx, n, wh, ww, c, np.float64, 0.0)
    out_shape = (n, wh.size_out, ww.size_out, output.channel_scale.size)
    x_q = temporary(ctx, (rows, h * w * c * n // rows), np.float64)
    record = HybridConvRecord(quant=quant, x_q=x_q,
                              interior=interior, windows=patches_view(padded, wh, ww),
                              weights=weights, depthwise=depthwise, output=output,
                              groups=groups)
    return (OutputSpec(out_shape, np.dtype(np.float32)),), record


def prepare_conv(ctx: OpContext):
    x, f, filt = _operands(ctx, "NHWC / OHWI")
    o, kh, kw, cg = f.shape
    groups = x.shape[3] // cg if cg else 0
    if cg < 1 or groups * cg != x.shape[3] or o % groups:
        raise ctx.shape_error(
            f"filter input channels {cg} must divide the input channels {x.shape[3]} into "
            f"groups that divide the {o} filters")
    scales = weight_scales(ctx, f, o, 0)
    per_channel = len(f.quantization.scale) > 1
    if groups > 1 and not per_channel:
        # conv.cc's Prepare takes a grouped hybrid filter per channel only (one scale per
        # filter), so a per-tensor one loads nowhere
        raise ctx.unsupported(f"a grouped {HYBRID} convolution needs one filter scale per "
                              f"output channel ({o}), as LiteRT's conv.cc requires")
    xnnpack = not ctx.quant.reference
    if xnnpack:
        order = Order.FMA
    else:
        order = Order.CHANNEL_FIRST if per_channel else Order.SCALE_FIRST
    output = hybrid_output(ctx, order, scales, ctx.optional_input(2))
    weights = np.ascontiguousarray(
        filt.reshape(groups, o // groups, kh * kw * cg).transpose(0, 2, 1))
    return _record(ctx, x, f, kh, kw, weights[0] if groups == 1 else weights, False,
                   input_quant(ctx, xnnpack, per_channel), output, groups)


def prepare_depthwise(ctx: OpContext):
    x, f, filt = _operands(ctx, "NHWC / 1HWO")
    one, kh, kw, o = f.shape
    c = x.shape[3]
    if one != 1 or c < 1 or o % c != 0:
        raise ctx.shape_error(
            f"filter shape {list(f.shape)} must be [1, KH, KW, O] with O a multiple of the "
            f"input channels ({c})")
    if len(f.quantization.scale) != o:
        # depthwise_conv.cc reads one scale per output channel; given one per tensor
        # (which its Prepare lets through with quantized_dimension 0) it reads past the
        # end of the scale array (measured: garbage outputs), so there is nothing to match.
        raise ctx.unsupported(
            f"{HYBRID} depthwise filters must be quantized per channel ({o} scales on "
            f"dimension 3); LiteRT's kernel misreads a per-tensor one")
    scales = weight_scales(ctx, f, o, 3)
    output = hybrid_output(ctx, Order.SCALE_FIRST, scales, ctx.optional_input(2))
    weights = filt.reshape(kh, kw, c, o // c)
    return _record(ctx, x, f, kh, kw, weights, True, InputQuant.ASYMMETRIC, output)


def eval(rec: HybridConvRecord, inputs, outputs) -> None:
    x = inputs[0]
    row_scale = quantize_rows(x.reshape(rec.x_q.shape), rec.quant, rec.x_q)
    rec.interior[...] = rec.x_q.reshape(x.shape)
    out = outputs[0]
    if rec.depthwise:  # out[..., c*M + m] = sum_taps window[..., c] * w[ky, kx, c, m]
        acc = np.einsum("nhwijc,ijcm->nhwcm", rec.windows, rec.weights).reshape(out.shape)
    elif rec.groups > 1:  # each group's windows with its filters, groups side by side
        g, k, _ = rec.weights.shape
        win = rec.windows.reshape(-1, *rec.windows.shape[3:5], g, k // np.prod(
            rec.windows.shape[3:5]))
        acc = np.matmul(win.transpose(3, 0, 1, 2, 4).reshape(g, -1, k), rec.weights)
        acc = acc.transpose(1, 0, 2)
    else:
        win = rec.windows
        acc = win.reshape(-1, np.prod(win.shape[3:])) @ rec.weights
    if row_scale.size != out.shape[0]:  # one per pixel
        row_scale = row_scale.reshape(out.shape[:3] + (1,))
    else:
        row_scale = row_scale.reshape(-1, 1, 1, 1)
    rec.output(acc.reshape(out.shape), row_scale, out)


CONV = Kernel(prepare_conv, eval)
DEPTHWISE = Kernel(prepare_depthwise, eval)
