"""The native (C) kernel of float32 DEPTHWISE_CONV_2D (native/depthwise_f32.c): one pass
from the input to the clamped output, channels innermost.

The numpy kernel (depthwise_conv.py) stays the readable reference. The C kernel sums each
output value in the numpy kernel's order (taps in (ky, kx) order, each product rounded to
float32, then the bias, then the clamp), so both backends give the same floats. Taps in
the padding are skipped, like TFLite's reference kernel (reference_ops::DepthwiseConv).

Chosen where the backend is on and the bias is constant or absent (a bias computed at run
time keeps the numpy kernel). With one slice the op is a native step
(docs/native-run-loop.md); with more, the output rows (n, out_y) are split over the pool.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import native as native_backend
from ...parallel import row_ranges, worth_splitting
from ..base import Chosen, OpContext
from .fused import Clamp
from .native_float_ops import SlicedKernel, clamp_bounds, eval_native
from .window import Window1D

MACS_PER_VALUE = 8  # multiply-adds counted as one output value by worth_splitting


@dataclass(frozen=True, eq=False)
class NativeDepthwiseF32(SlicedKernel):
    """depthwise_f32.c's arguments, all prepared; ``ranges``: the (n, out_y) rows of each
    slice."""

    dims: tuple  # (N, H, W, C, M)
    window: tuple  # (KH, KW, SH, SW, DH, DW, pad_top, pad_left, OH, OW)
    weights: np.ndarray  # (KH * KW, O) float32
    bias: np.ndarray | None  # (O,) float32
    clamp: tuple  # (on, lo, hi)
    ranges: tuple
    threads: int
    kernel: str = "depthwise_f32"

    def _args(self, x, out) -> tuple:
        return (x, self.dims, self.window, self.weights, self.bias) + self.clamp + (out,)


def native_depthwise_f32(ctx: OpContext, x_shape: tuple, filt: np.ndarray, multiplier: int,
                         wh: Window1D, ww: Window1D, bias: np.ndarray | None,
                         clamp: Clamp) -> Chosen | None:
    """The native kernel for an (N, H, W, C) input and ``filt`` (KH, KW, C * M) float32, or
    None where the backend is off. ``bias``: the constant (O,) bias or None (no bias)."""
    if not ctx.quant.native or not hasattr(native_backend.module, "depthwise_f32"):
        return None
    n, h, w, c = x_shape
    kh, kw, o = filt.shape
    rows = n * wh.size_out
    parts = worth_splitting(ctx.threads, rows * ww.size_out * o * kh * kw // MACS_PER_VALUE)
    record = NativeDepthwiseF32(
        dims=(n, h, w, c, multiplier),
        window=(kh, kw, wh.stride, ww.stride, wh.dilation, ww.dilation, wh.pad_before,
                ww.pad_before, wh.size_out, ww.size_out),
        weights=np.ascontiguousarray(filt.reshape(kh * kw, o), np.float32),
        bias=None if bias is None else np.ascontiguousarray(bias, np.float32),
        clamp=clamp_bounds(clamp), ranges=tuple(tuple(r) for r in row_ranges(rows, parts)),
        threads=ctx.threads)
    return Chosen(eval_native, record)
