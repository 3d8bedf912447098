"""The native (C) kernel of int8 / uint8 DEPTHWISE_CONV_2D: integer taps with the
requantization fused per tile (native/depthwise.c), one pass from the int8 / uint8 input
to the int8 / uint8 output.

The numpy kernel (depthwise_conv.py) stays the readable reference; the C kernel computes

    acc[n, y, x, o] = wrap32(bias[o] + sum_taps (w[tap, o] - zp_w) * (x[.., o // M] - zp_x))

in wrapping int32 -- TFLite's accumulator, and what the numpy kernel's exact float sums give
after accumulator.py's wrap -- then the per-value formulas of requantize.py's output stages
(the tile stage gemm.c fuses, requant.c's code), so outputs are identical on both backends
in every kernel set.

Prepared here, once: the weights in depthwise.c's pair-interleaved AVX2 order, and
``init[o] = bias[o] - zp_x * sum_taps (w[tap, o] - zp_w)`` so that the kernel multiplies the
raw input (padding reads as zp_x: init's term cancels it). The op is a native step
(docs/native-run-loop.md): the run loop calls the C kernel without Python; with several
threads the step splits its output rows (n, out_y) over the C pool (native/threadpool.c).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import native as native_backend
from ..base import Chosen, OpContext, temporary
from . import native_gemm, native_split
from .native_gemm import initial_sums, stage_params
from .native_ops import plain_step
from .requantize import NativeStage, Requant
from .window import Window1D

BLOCK = 16  # output channels per block (depthwise.c)
# Where channel i's weights sit in a block's 32 values of a tap pair for the SIMD tiles
# (depthwise.c): the AVX2 vpunpck{l,h}wd order (channels 0-3, 8-11, then 4-7, 12-15).
_CHUNK = (0, 2, 1, 3)
SLOT = np.array([_CHUNK[i // 4] * 8 + (i % 4) * 2 for i in range(BLOCK)])


def arrange_weights(centered: np.ndarray) -> np.ndarray:
    """(KH, KW, O) w - zp_w -> depthwise.c's (O_pad / 16, pairs, 32) int16: per block of 16
    channels and pair of taps (2j, 2j + 1), the two taps' weights side by side in SLOT order;
    an odd last tap pairs with zeros, channels past O are zeros."""
    kh, kw, o = centered.shape
    taps = centered.reshape(kh * kw, o)
    pairs, blocks = -(-len(taps) // 2), -(-o // BLOCK)
    padded = np.zeros((2 * pairs, blocks * BLOCK), np.int16)
    padded[:len(taps), :o] = taps
    # (pairs, 2, blocks, 16) -> (blocks, pairs, 16, 2): channel i's (a, b) at SLOT[i]
    by_channel = padded.reshape(pairs, 2, blocks, BLOCK).transpose(2, 0, 3, 1)
    packed = np.zeros((blocks, pairs, 2 * BLOCK), np.int16)
    packed[:, :, SLOT] = by_channel[..., 0]
    packed[:, :, SLOT + 1] = by_channel[..., 1]
    return packed


def channel_order(centered: np.ndarray, o_pad: int) -> np.ndarray:
    """(KH, KW, O) w - zp_w -> (KH * KW, O_pad) int16, zeros past O."""
    kh, kw, o = centered.shape
    out = np.zeros((kh * kw, o_pad), np.int16)
    out[:, :o] = centered.reshape(kh * kw, o)
    return out


@dataclass(frozen=True, eq=False)
class NativeDepthwise:
    """depthwise.c's arguments, all prepared; ``tasks``: the parts its (n, out_y) rows are
    split into over the C pool (native_split), ``scratch``: each thread's line buffers,
    ``stride`` bytes apart."""

    x_uint8: int
    dims: tuple  # (N, H, W, C, M)
    window: tuple  # (KH, KW, SH, SW, DH, DW, pad_top, pad_left, OH, OW)
    line_w: int
    zp_x: int
    weights: np.ndarray  # arrange_weights: the SIMD tiles'
    weights_c: np.ndarray  # (KH * KW, O_pad) in channel order: the portable C tile's
    init: np.ndarray
    o_pad: int
    isa: int
    stage: NativeStage
    tasks: int
    scratch: np.ndarray  # threads * stride bytes
    threads: int

    def _args(self, x, out, scratch) -> tuple:
        s = self.stage
        return (x, self.x_uint8, self.dims, self.window, self.line_w, self.zp_x, self.weights,
                self.weights_c, self.init, self.o_pad, self.isa, s.kind, s.multiplier,
                s.shift, s.planes, s.zp_out, s.lo, s.hi, out, self.x_uint8, scratch)

    def _step_args(self, x, out) -> tuple:
        return self._args(x, out, self.scratch) + (self.threads, self.tasks)

    def run(self, x: np.ndarray, out: np.ndarray) -> None:
        """The op on any arrays (the eval): its step bound to them, run once."""
        x = np.ascontiguousarray(x)
        target = out if out.flags.c_contiguous else np.empty(out.shape, out.dtype)
        native_backend.module.depthwise_step(*self._step_args(x, target))()
        if target is not out:
            np.copyto(out, target)

    def native_step(self, inputs, outputs):
        """The run loop's step: the C kernel bound to the arena's input and output, its
        rows split over the C pool inside the step; None where an operand is not a plain
        buffer (the eval)."""
        x, out = inputs[0], outputs[0]
        return plain_step((x, out), "depthwise_step", *self._step_args(x, out))


def eval_native(rec: NativeDepthwise, inputs, outputs) -> None:
    rec.run(inputs[0], outputs[0])


def native_depthwise(ctx: OpContext, x_shape: tuple, x_dtype, centered: np.ndarray,
                     multiplier: int, wh: Window1D, ww: Window1D, bias: np.ndarray | None,
                     zp_x: int, requant: Requant, zp_out: int, lo: int,
                     hi: int) -> Chosen | None:
    """The native kernel for the depthwise convolution of an (N, H, W, C) input with
    ``centered`` (KH, KW, C * M) w - zp_w, or None where the backend is off or the
    requantization is not the C stage's. Unlike the GEMM (native_gemm.MIN_ISA) it is
    chosen without a SIMD tile too: the portable C tile, vectorized by the compiler, beats
    the numpy kernel (MobileNetV2 int8's 17 layers, here: 8.5 ms against numpy's 15.6;
    SSE2 6.1, AVX2 2.3)."""
    if not ctx.quant.native:
        return None
    n, h, w, c = x_shape
    kh, kw, o = centered.shape
    stage = stage_params(requant, o, zp_out, lo, hi)
    if stage is None:
        return None
    o_pad = -(-o // BLOCK) * BLOCK
    # every position a tap reads: x = -pad_left .. (OW - 1) * SW + (KW - 1) * DW - pad_left
    line_w = (ww.size_out - 1) * ww.stride + (kw - 1) * ww.dilation + 1
    rows = n * wh.size_out
    tasks = native_split.tasks(ctx.threads, rows * ww.size_out * o * kh * kw, rows)
    threads = ctx.threads if tasks > 1 else 1
    nbytes = native_backend.module.depthwise_scratch(kh, kh * kw, line_w, o_pad)
    stride = -(-nbytes // 64) * 64  # module.c: each thread's scratch starts 64-aligned
    record = NativeDepthwise(
        x_uint8=int(np.dtype(x_dtype) == np.uint8), dims=(n, h, w, c, multiplier),
        window=(kh, kw, wh.stride, ww.stride, wh.dilation, ww.dilation, wh.pad_before,
                ww.pad_before, wh.size_out, ww.size_out),
        line_w=line_w, zp_x=int(zp_x), weights=arrange_weights(centered),
        weights_c=channel_order(centered, o_pad),
        init=initial_sums(centered.reshape(kh * kw, o).T, bias, zp_x), o_pad=o_pad,
        isa=native_gemm.ISA, stage=stage, tasks=tasks,
        scratch=temporary(ctx, ((threads - 1) * stride + nbytes,), np.uint8), threads=threads)
    return Chosen(eval_native, record)
