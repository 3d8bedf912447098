"""DEPTHWISE_CONV_2D, float32: a sum over kernel taps.

Matches tensorflow/lite/kernels/depthwise_conv.cc (Prepare) and reference_ops::DepthwiseConv
(tensorflow/lite/kernels/internal/reference/depthwiseconv_float.h):

    out[n, y, x, c*M + m] = bias[c*M + m] + sum_{ky, kx}
        in[n, y*sh + ky*dh - pad_t, x*sw + kx*dw - pad_l, c] * filter[0, ky, kx, c*M + m]

Layouts: input NHWC, filter 1HWO with O = C * M (M = depth multiplier), bias [O].

Strategy: the input is copied into a zero-padded scratch buffer with every input channel
repeated M times, so that channel c*M + m of the scratch holds input channel c. For each
of the KH*KW taps the pixels under that tap are then a fixed strided view
(N, OH, OW, C*M) of the scratch, and the tap contributes view * filter[0, ky, kx, :]:
KH*KW vectorized multiply-adds per invoke, each running along the contiguous channels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import OpContext, OutputSpec, scratch
from .fused import Clamp, activation_clamp, apply_clamp
from .padding import padded_scratch, padding_option, tap_view, window_1d


@dataclass(frozen=True)
class DepthwiseRecord:
    interior: np.ndarray  # (N, H, W, C, M) view of the padded scratch: input goes here
    taps: tuple[np.ndarray, ...]  # per tap (ky, kx): (N, OH, OW, C*M) view of the scratch
    weights: tuple[np.ndarray, ...]  # per tap: (C*M,) filter values
    product: np.ndarray  # (N, OH, OW, C*M) scratch for one tap's products
    clamp: Clamp


def prepare(ctx: OpContext):
    ctx.check_arity(2, 3)
    x, f = ctx.input(0), ctx.input(1)
    bias = ctx.optional_input(2)
    ctx.require_dtype(x, (np.float32,), "input")
    ctx.require_dtype(f, (np.float32,), "filter")
    if x.rank != 4 or f.rank != 4:
        raise ctx.shape_error(
            f"input {list(x.shape)} and filter {list(f.shape)} must both be 4-D (NHWC / 1HWO)"
        )
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

    pad = padding_option(ctx)
    wh = window_1d(ctx, "height", h, kh, int(ctx.option("stride_h", 1)),
                   int(ctx.option("dilation_h_factor", 1)), pad)
    ww = window_1d(ctx, "width", w, kw, int(ctx.option("stride_w", 1)),
                   int(ctx.option("dilation_w_factor", 1)), pad)
    clamp = activation_clamp(ctx, np.float32)

    padded, interior = padded_scratch(ctx, n, wh, ww, o, np.float32, 0.0)
    taps, weights = [], []
    for ky in range(kh):
        for kx in range(kw):
            taps.append(tap_view(padded, wh, ww, ky, kx))
            weights.append(np.ascontiguousarray(filt[0, ky, kx]))
    out_shape = (n, wh.size_out, ww.size_out, o)
    record = DepthwiseRecord(interior.reshape(n, h, w, c, multiplier), tuple(taps),
                             tuple(weights), scratch(ctx, out_shape, np.float32), clamp)
    return (OutputSpec(out_shape, np.dtype(np.float32)),), record


def eval(rec: DepthwiseRecord, inputs, outputs) -> None:
    np.copyto(rec.interior, inputs[0][..., np.newaxis])  # repeat each channel M times
    out = outputs[0]
    np.multiply(rec.taps[0], rec.weights[0], out=out)
    for tap, weight in zip(rec.taps[1:], rec.weights[1:], strict=True):
        np.multiply(tap, weight, out=rec.product)
        np.add(out, rec.product, out=out)
    bias = inputs[2] if len(inputs) > 2 else None
    if bias is not None:
        np.add(out, bias, out=out)
    apply_clamp(rec.clamp, out)
