"""TRANSPOSE_CONV, dynamic-range (hybrid): float32 input NHWC, int8 constant weights OHWI
(per tensor or per output channel along axis 0, zero point 0), float32 bias and output.

Each image of the batch is quantized as one row (hybrid/), and then:

* REFERENCE, and DEFAULT where XNNPACK declines the node: transpose_conv.cc EvalHybrid
  (one kernel for both builtin sets) quantizes asymmetrically
  (tensor_utils::AsymmetricQuantizeFloats) and reference_ops::HybridTransposeConv
  (reference/transpose_conv.h) scatters every product straight into the float32 output:

      out[n, y*sh + ky - pad_t, x*sw + kx - pad_l, c] +=
          float32((q - o)[n, y, x, i] * w[c, ky, kx, i]) * s_w[c] * s_n   (float32, in order)

  looping over y, x, i, ky, kx, c; then bias, then the clamp. Every output sums its
  terms in the order of its input pixels (y, x), i.e. of its taps (ky, kx) descending,
  each pixel's channels i ascending: edgelite adds the terms in that order, one
  (ky, kx, i) at a time over the whole output, so the float32 sums round as LiteRT's.
* DEFAULT: the XNNPACK delegate (VisitTransposeConvNode) takes the node as its
  dynamically quantized deconvolution -- XNNPACK's qd8 per image, the exact integer
  sum of (q - o) * w scaled by ``fma(acc * s_n, s_w[c], bias)`` as its other qd8
  operators (hybrid/) -- unless its CalculateTransposeConvPaddings declines: SAME
  padding with a stride larger than the kernel (VALID output sizes always fit).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..base import Chosen, OpContext, OutputSpec, scratch
from ..common.fused import Clamp, activation_clamp, apply_clamp
from . import HybridOutput, InputQuant, Order, quantize_rows, require_int8_weights, weight_scales
from ..common.transpose_scatter import geometry, scatter, scatter_record
from ..common.window import SAME, padding_option

F32 = np.float32


@dataclass(frozen=True)
class ReferenceRecord:
    """reference_ops::HybridTransposeConv: float32 terms scattered in LiteRT's order."""

    x_q: np.ndarray  # (N, H*W*C) float64 scratch: q - o per image
    x32: np.ndarray  # (N, H, W, C) float32 scratch: the same values
    weights: np.ndarray  # (KH, KW, C, O) float32 (exact int8 values)
    scales: np.ndarray  # (O,) float32 s_w
    scatter: object  # transpose_scatter.TransposeConvRecord in float32 (canvas, tap views)
    bias: np.ndarray | None  # (O,) float32
    clamp: Clamp


@dataclass(frozen=True)
class XnnpackRecord:
    """XNNPACK's qd8 deconvolution: exact integer sums, then the FMA output stage."""

    x_q: np.ndarray  # (N, H*W*C) float64 scratch: q - o per image
    scatter: object  # transpose_scatter.TransposeConvRecord in float64 through the weights
    output: HybridOutput


def xnnpack_takes(ctx: OpContext, w_shape, strides) -> bool:
    """Whether the XNNPACK delegate runs the node (CalculateTransposeConvPaddings)."""
    _, kh, kw, _ = w_shape
    return padding_option(ctx) != SAME or (kh >= strides[0] and kw >= strides[1])


def prepare(ctx: OpContext):
    g = geometry(ctx)
    w = ctx.input(1)
    filt = require_int8_weights(ctx, w, "weights")  # OHWI
    o = g.w_shape[0]
    scales = weight_scales(ctx, w, o, 0)
    bias = ctx.optional_input(3)
    values = None
    if bias is not None:
        ctx.require_dtype(bias, (F32,), "bias")
        values = ctx.constant_input(3, "bias").astype(F32).reshape(-1)
    clamp = activation_clamp(ctx, F32)
    n = g.x_shape[0]
    x_q = scratch(ctx, (n, int(np.prod(g.x_shape[1:]))), np.float64)
    specs = (OutputSpec(g.out_shape, np.dtype(F32)),)
    if not ctx.quant.reference and xnnpack_takes(ctx, g.w_shape, g.strides):
        output = HybridOutput(Order.FMA, scales, values, clamp)
        record = XnnpackRecord(x_q, scatter_record(ctx, g, filt, np.float64, None), output)
        return specs, Chosen(eval_xnnpack, record)
    record = ReferenceRecord(
        x_q=x_q, x32=scratch(ctx, g.x_shape, F32),
        weights=np.ascontiguousarray(filt.astype(F32).transpose(1, 2, 3, 0)), scales=scales,
        scatter=scatter_record(ctx, g, filt, F32, None), bias=values, clamp=clamp)
    return specs, Chosen(eval_reference, record)


def eval_reference(rec: ReferenceRecord, inputs, outputs) -> None:
    x = inputs[2]
    row_scale = quantize_rows(x.reshape(rec.x_q.shape), InputQuant.ASYMMETRIC, rec.x_q)
    np.copyto(rec.x32, rec.x_q.reshape(x.shape), casting="unsafe")  # exact: |q - o| <= 255
    s_n = row_scale.reshape(-1, 1, 1, 1)
    sc = rec.scatter
    sc.canvas.fill(0.0)
    channels = rec.weights.shape[2]
    for view, ky, kx in reversed(sc.taps):  # taps (ky, kx) descending = input pixels ascending
        term = sc.cols[:, :, :, ky, kx, :]  # (N, H, W, O) scratch
        for i in range(channels):
            # float32((q - o) * w) * s_w[c] * s_n, left to right in float32
            np.multiply(rec.x32[..., i, None], rec.weights[ky, kx, i], out=term)
            np.multiply(term, rec.scales, out=term)
            np.multiply(term, s_n, out=term)
            np.add(view, term, out=view)
    out = outputs[0]
    np.copyto(out, sc.window)
    if rec.bias is not None:
        np.add(out, rec.bias, out=out)
    apply_clamp(rec.clamp, out)


def eval_xnnpack(rec: XnnpackRecord, inputs, outputs) -> None:
    x = inputs[2]
    row_scale = quantize_rows(x.reshape(rec.x_q.shape), InputQuant.XNNPACK, rec.x_q)
    scatter(rec.scatter, rec.x_q.reshape(x.shape))
    rec.output(rec.scatter.window, row_scale.reshape(-1, 1, 1, 1), outputs[0])
