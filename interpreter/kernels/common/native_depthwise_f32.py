"""The native (C) kernel of float32 DEPTHWISE_CONV_2D (native/depthwise_f32.c): one pass
from the input to the clamped output, channels innermost.

The numpy kernel (depthwise_conv.py) stays the readable reference. The C kernel sums each
output value in the numpy kernel's order (taps in (ky, kx) order, each product rounded to
float32, then the bias, then the clamp), so both backends give the same floats. Taps in
the padding are skipped, like TFLite's reference kernel (reference_ops::DepthwiseConv).

Chosen where the backend is on and the bias is constant or absent (a bias computed at run
time keeps the numpy kernel). The op is a native step (docs/native-run-loop.md); with several
threads the step splits its output rows (n, out_y) over the C pool (native/threadpool.c):
each value is still one thread's sum in the same order, so the outputs do not change.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import native as native_backend
from ..base import Chosen, OpContext
from . import native_split
from .fused import Clamp
from .native_float_ops import clamp_bounds, eval_native
from .native_ops import plain_step
from .window import Window1D


@dataclass(frozen=True, eq=False)
class NativeDepthwiseF32:
    """depthwise_f32.c's arguments, all prepared; ``tasks``: the parts its (n, out_y) rows
    are split into over the C pool (native_split)."""

    dims: tuple  # (N, H, W, C, M)
    window: tuple  # (KH, KW, SH, SW, DH, DW, pad_top, pad_left, OH, OW)
    weights: np.ndarray  # (KH * KW, O) float32
    bias: np.ndarray | None  # (O,) float32
    clamp: tuple  # (on, lo, hi)
    tasks: int
    threads: int

    def _args(self, x, out) -> tuple:
        return ((x, self.dims, self.window, self.weights, self.bias) + self.clamp
                + (out, self.threads, self.tasks))

    def run(self, x: np.ndarray, out: np.ndarray) -> None:
        """The op on any arrays (the eval): its step bound to them, run once."""
        x = np.ascontiguousarray(x, np.float32)
        target = out if out.flags.c_contiguous else np.empty(out.shape, out.dtype)
        native_backend.module.depthwise_f32_step(*self._args(x, target))()
        if target is not out:
            np.copyto(out, target)

    def native_step(self, inputs, outputs):
        """The run loop's step: the C kernel bound to the arena's input and output, its
        rows split over the C pool inside the step; else None (the eval)."""
        x, out = inputs[0], outputs[0]
        if getattr(x, "dtype", None) != np.float32:
            return None
        return plain_step((x, out), "depthwise_f32_step", *self._args(x, out))


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
    tasks = native_split.tasks(ctx.threads, rows * ww.size_out * o * kh * kw, rows)
    record = NativeDepthwiseF32(
        dims=(n, h, w, c, multiplier),
        window=(kh, kw, wh.stride, ww.stride, wh.dilation, ww.dilation, wh.pad_before,
                ww.pad_before, wh.size_out, ww.size_out),
        weights=np.ascontiguousarray(filt.reshape(kh * kw, o), np.float32),
        bias=None if bias is None else np.ascontiguousarray(bias, np.float32),
        clamp=clamp_bounds(clamp), tasks=tasks, threads=ctx.threads if tasks > 1 else 1)
    return Chosen(eval_native, record)
