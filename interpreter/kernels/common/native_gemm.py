"""The native (C) kernel of int8 / uint8 FULLY_CONNECTED and CONV_2D: a packed integer
GEMM with the requantization fused into its output stage (native/gemm.c, native/conv.c).

The op's prepare() asks ``native_gemm`` once it has its centred weights, bias and
requantization; with the native backend on and the case covered (one group; a
requantization the C output stage implements) it gets a record to run instead of its
numpy one. The numpy kernels stay the readable reference: the C kernel computes

    acc[r, o] = wrap32(bias[o] + sum_k (w[o, k] - zp_w) * (x[r, k] - zp_x))

in wrapping int32 -- TFLite's accumulator, and exactly what the numpy kernels' exact
float sums give after accumulator.py's wrap (which they only need where bias + sum can
leave int32) -- and then the very per-value formulas of requantize.py's output stages
(native/requant.c), so outputs are identical on both backends, in every kernel set.

Prepared here, once: the weights packed into panels of 16 output channels (gemm.c's
layout), and ``init[o] = bias[o] - zp_x * sum_k (w[o, k] - zp_w)`` so that the kernel
multiplies the raw input (padding reads as zp_x: its column-sum term cancels it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ... import native as native_backend
from ..base import Chosen, OpContext, temporary
from . import native_split
from .native_ops import plain_step
from .requantize import (NATIVE_FP32, FixedRequant, Float64Requant, Fp32Requant, NativeStage,
                         Requant)

NR, MR = 16, 4  # native.h EL_GEMM_NR / EL_GEMM_MR
FIXED_PLANES = 4  # native.h EL_FIXED_PLANES
# Rows of A widened per block (int16): small enough to stay in L2 while every panel of
# the weights passes over it, large enough that a panel is reused over many tiles.
A_BLOCK_BYTES = 96 * 1024
MAX_BLOCK_ROWS = 64
# The best micro-kernel gemm.c may run (native.h el_isa): AVX2 where the CPU has it, else
# SSE2 on x86-64 or NEON on ARM (the same level: the architecture's baseline SIMD), else
# generic C; tests lower it to check the others.
GENERIC, SSE2, AVX2 = 0, 1, 2
ISA = AVX2
# Where only the generic C tile compiled (no SIMD kernel: neither x86-64 nor ARM with
# NEON), the numpy kernel runs: measured here, the generic tile sums ~2 G multiply-adds/s
# on one core, several times below float BLAS; SSE2 is about level with numpy, AVX2 2-5x
# faster. NEON (aarch64, 32-bit ARM built with NEON) is SSE2's level.
MIN_ISA = SSE2


@dataclass(frozen=True, eq=False)
class NativeGemm:
    """gemm.c's arguments, all prepared; ``grid``: the (row parts, panel parts) of the
    output the C pool runs as tasks (native_split), ``buffer`` one block buffer per thread."""

    x_uint8: int
    conv: tuple | None  # (N, H, W, C, KH, KW, SH, SW, DH, DW, pad_t, pad_l, OH, OW)
    zp_x: int
    panels: np.ndarray  # (O_pad / 16, K_pad / 2, 16, 2) int16: w - zp_w
    init: np.ndarray  # (O_pad,) int32
    k: int
    k_pad: int
    o: int
    block: int
    stage: NativeStage  # per-channel requantization, zero point and clamp
    rows: int
    grid: tuple  # (row_parts, panel_parts)
    buffer: np.ndarray  # threads * block * k_pad int16
    threads: int

    def run(self, x: np.ndarray, out: np.ndarray) -> None:
        x = np.ascontiguousarray(x)
        target = out if out.flags.c_contiguous else np.empty(out.shape, out.dtype)
        native_backend.module.gemm(*self._args(x, target))
        if target is not out:
            np.copyto(out, target)

    def _args(self, x, out) -> tuple:
        s = self.stage
        return (x, self.x_uint8, self.conv, self.zp_x, self.panels, self.init, self.k,
                self.k_pad, self.o, self.block, ISA, s.kind, s.multiplier, s.shift,
                s.planes, s.zp_out, s.lo, s.hi, out, self.x_uint8, 0, self.rows, 0,
                len(self.panels), self.buffer, self.threads, *self.grid)

    def native_step(self, inputs, outputs):
        """The run loop's step: the C GEMM bound to the arena's input and output, its tasks
        split over the C pool inside the step; None where an operand is not a plain
        buffer (the eval)."""
        x, out = inputs[0], outputs[0]
        return plain_step((x, out), "gemm_step", *self._args(x, out))


def eval_native(rec: NativeGemm, inputs, outputs) -> None:
    rec.run(inputs[0], outputs[0])


def stage_params(requant: Requant, o: int, zp_out: int, lo: int, hi: int):
    """The C tile output stage's per-channel parameters (no bias: it is in ``init``), or
    None for a requantization it does not implement."""
    if isinstance(requant, Fp32Requant):
        mult = np.ascontiguousarray(
            np.broadcast_to(np.asarray(requant.multiplier, np.float32).reshape(-1), (o,)))
        return NativeStage(NATIVE_FP32, None, mult, None, o, zp_out, lo, hi, False)
    if isinstance(requant, (FixedRequant, Float64Requant)):
        return with_planes(NativeStage.exact(requant, None, o, zp_out, lo, hi, False))
    return None


def with_planes(stage: NativeStage) -> NativeStage:
    """A fixed-point stage with the AVX2 / NEON tile stages' parameters prepared once
    (native.h el_fixed_planes: per 16 channels the int32 multipliers, shifts and rounding
    masks), so that a tile only loads them; other stages, and fixed-point ones outside the
    vector stages' range (they run requant.c's per-value code), as they are."""
    if stage.shift is None:
        return stage
    planes = np.zeros(-(-stage.width // NR) * NR * FIXED_PLANES, np.int32)
    if not native_backend.module.fixed_planes(stage.kind, stage.multiplier, stage.shift,
                                              stage.width, planes):
        return stage
    return replace(stage, planes=planes)


def pack_panels(centered: np.ndarray) -> tuple[np.ndarray, int]:
    """(O, K) integer weights -> gemm.c's panels (O_pad / 16, K_pad / 2, 16, 2) int16, K_pad."""
    o, k = centered.shape
    o_pad, k_pad = -(-o // NR) * NR, k + k % 2
    panels = np.zeros((o_pad // NR, k_pad // 2, NR, 2), np.int16)
    # Written in place through the view view[p, i, kk, j] = w[16 p + i, 2 kk + j] (no
    # padded (O_pad, K_pad) copy: prepare's peak memory is a few copies of the largest
    # layer's weights): the whole panels of 16 channels, then the last, partial one; an
    # odd K's last column pairs with the zero of K_pad.
    view = panels.transpose(0, 2, 1, 3)
    full, half = o // NR, k // 2
    pairs = centered[:, :2 * half].reshape(o, half, 2)
    view[:full, :, :half] = pairs[:full * NR].reshape(full, NR, half, 2)
    view[full:, :o - full * NR, :half] = pairs[full * NR:]
    if k % 2:
        last = centered[:, k - 1]
        view[:full, :, half, 0] = last[:full * NR].reshape(full, NR)
        view[full:, :o - full * NR, half, 0] = last[full * NR:]
    return panels, k_pad


def initial_sums(centered: np.ndarray, bias: np.ndarray | None, zp_x: int) -> np.ndarray:
    """init[o] = bias[o] - zp_x * sum_k centered[o, k], wrapped to int32, padded to 16."""
    o = centered.shape[0]
    values = -zp_x * centered.sum(axis=1, dtype=np.int64)
    if bias is not None:
        values = values + np.asarray(bias, np.int64).reshape(-1)
    init = np.zeros(-(-o // NR) * NR, np.int32)
    init[:o] = ((values + 2**31) % 2**32 - 2**31).astype(np.int32)
    return init


def split(rows: int, panels: int, threads: int, macs: int) -> tuple[int, int]:
    """The (row parts, panel parts) grid of tasks of a (rows, panels) output: along the
    rows, or -- where there are fewer rows than channels (a late layer, a FULLY_CONNECTED)
    -- along the panels, so that each thread reads its own part of the weights rather than
    all of them. (1, 1): not split (native_split.tasks)."""
    if rows < panels * NR:
        parts = native_split.tasks(threads, macs, panels)
        if parts > 1:
            return (1, parts)
    return (native_split.tasks(threads, macs, -(-rows // MR)), 1)


def native_gemm(ctx: OpContext, x_dtype, centered: np.ndarray, bias: np.ndarray | None,
                zp_x: int, requant: Requant, zp_out: int, lo: int, hi: int, rows: int,
                conv: tuple | None = None) -> Chosen | None:
    """The native kernel for ``out[r] = stage(bias + (w - zp_w) @ (x[r] - zp_x))`` with
    ``centered``: (O, K) w - zp_w, ``rows`` output rows of O values; ``conv``: the
    CONV_2D geometry whose im2col rows are A (None: the input holds the rows). None
    where the backend is off or the requantization is not the C stage's."""
    if not ctx.quant.native or native_backend.module.gemm_isa() < MIN_ISA:
        return None
    o, k = centered.shape
    stage = stage_params(requant, o, zp_out, lo, hi)
    if stage is None or rows < 1:
        return None
    panels, k_pad = pack_panels(centered)
    block = max(MR, min(MAX_BLOCK_ROWS, A_BLOCK_BYTES // (2 * k_pad)) // MR * MR)
    grid = split(rows, len(panels), ctx.threads, rows * o * k)
    threads = ctx.threads if grid != (1, 1) else 1
    record = NativeGemm(
        x_uint8=int(np.dtype(x_dtype) == np.uint8), conv=conv, zp_x=int(zp_x), panels=panels,
        init=initial_sums(centered, bias, zp_x), k=k, k_pad=k_pad, o=o, block=block,
        stage=stage, rows=rows, grid=grid,
        buffer=temporary(ctx, (threads * block * k_pad,), np.int16), threads=threads)
    return Chosen(eval_native, record)
