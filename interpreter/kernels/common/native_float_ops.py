"""Native (C) kernels of float32 element-wise ops: LOGISTIC, TANH, EXP, ELU, GELU and
HARD_SWISH of any size and SOFTMAX's rows (native/transcend_f32.c, on the vectorized e^x of
native/vexp.h), and the bias + fused activation stage of the float convolutions
(``output_stage``, native/activations_f32.c).

One vectorized pass over the tensor instead of the numpy kernel's several (the numpy
kernels in activations.py / unary.py stay the readable reference). The C kernels take the
reference kernels' branches and cut-offs and stay within 1-2 ulp of LiteRT's reference
kernels (std::exp / std::tanh / std::expm1; HARD_SWISH exact), no further from them than
LiteRT's default kernels are;
docs/native-float.md has the measured spreads. With one slice the op is a native step
(docs/native-run-loop.md); with more threads the values are split over the pool.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import native as native_backend
from ...parallel import row_ranges, run_slices, worth_splitting
from ..base import Chosen, OpContext, num_elements
from .fused import Clamp
from . import native_split
from .native_ops import plain_step


def clamp_bounds(clamp: Clamp) -> tuple:
    """A fused activation's clamp as the C kernels take it: (on, lo, hi)."""
    if clamp is None:
        return (False, 0.0, 0.0)
    lo, hi = clamp
    return (True, float(lo), np.inf if hi is None else float(hi))


def output_stage(ctx: OpContext, clamp: Clamp) -> tuple | None:
    """bias_act_f32's (on, lo, hi) where the backend is on, else None: the float
    convolutions' bias + activation in one C pass (conv.py's _finish)."""
    if not ctx.quant.native or not hasattr(native_backend.module, "bias_act_f32"):
        return None
    return clamp_bounds(clamp)


def run_output_stage(out2d: np.ndarray, bias: np.ndarray | None, width: int,
                     bounds: tuple) -> None:
    """out2d (C-contiguous float32) = clamp(out2d + bias tiled over rows of ``width``)."""
    native_backend.module.bias_act_f32(out2d, bias, width, *bounds)


class SlicedKernel:
    """What the float C kernels' records share: ``kernel`` names the module function
    (``kernel``_step: its native step), ``_args(x, out)`` its arguments before a slice's
    (begin, end) of ``ranges``, split over ``threads`` by the Python pool (the eval); the
    native step splits its work into ``tasks`` on the C pool instead."""

    kernel: str
    ranges: tuple
    threads: int
    tasks: int

    def _args(self, x: np.ndarray, out: np.ndarray) -> tuple:
        raise NotImplementedError

    def run(self, x: np.ndarray, out: np.ndarray) -> None:
        x = np.ascontiguousarray(x, np.float32)
        target = out if out.flags.c_contiguous else np.empty(out.shape, out.dtype)
        run_slices(self.threads, getattr(native_backend.module, self.kernel),
                   [self._args(x, target) + r for r in self.ranges])
        if target is not out:
            np.copyto(out, target)

    def native_step(self, inputs, outputs):
        """The run loop's step: the C kernel bound to the arena's input and output, its
        values (rows) in ``tasks`` parts over the C pool; None (the eval) where an operand
        is not a plain float32 arena buffer."""
        x, out = inputs[0], outputs[0]
        if getattr(x, "dtype", None) != np.float32:
            return None
        return plain_step((x, out), self.kernel + "_step", *self._args(x, out), self.threads,
                          self.tasks)


@dataclass(frozen=True, eq=False)
class NativeUnaryF32(SlicedKernel):
    """A float32 element-wise C kernel over flat value ranges."""

    kernel: str
    ranges: tuple
    threads: int
    tasks: int

    def _args(self, x, out) -> tuple:
        return (x, out)


@dataclass(frozen=True, eq=False)
class NativeSoftmaxF32(SlicedKernel):
    """float32 SOFTMAX in C over row ranges of ``depth`` values."""

    kernel: str
    ranges: tuple
    threads: int
    tasks: int
    depth: int
    beta: float

    def _args(self, x, out) -> tuple:
        return (x, out, self.depth, self.beta)


def eval_native(rec: SlicedKernel, inputs, outputs) -> None:
    rec.run(inputs[0], outputs[0])


def _ranges(ctx: OpContext, rows: int, count: int) -> tuple:
    return tuple(tuple(r) for r in row_ranges(rows, worth_splitting(ctx.threads, count)))


def _available(ctx: OpContext, name: str) -> bool:
    """The backend is on and the extension has the kernel ``name``."""
    return ctx.quant.native and hasattr(native_backend.module, name)


def native_unary_f32(ctx: OpContext, name: str, shape: tuple) -> Chosen | None:
    """The C kernel ``name`` for a float32 tensor of ``shape``, or None where the backend is
    off (or the extension predates the kernel)."""
    if not _available(ctx, name):
        return None
    count = num_elements(shape)
    # HARD_SWISH is a few float operations a value; the others evaluate e^x
    threshold = native_split.SPLIT_ELEMENTS if name == "hard_swish_f32" \
        else native_split.SPLIT_TRANSCENDENTAL
    tasks = native_split.tasks(ctx.threads, count, count // 64, threshold)
    return Chosen(eval_native, NativeUnaryF32(name, _ranges(ctx, count, count), ctx.threads,
                                              tasks))


def native_softmax_f32(ctx: OpContext, rows: int, depth: int, beta: float) -> Chosen | None:
    """The C SOFTMAX over ``rows`` float32 rows of ``depth`` values, or None (as above)."""
    if not _available(ctx, "softmax_f32"):
        return None
    tasks = native_split.tasks(ctx.threads, rows * depth, rows,
                               native_split.SPLIT_TRANSCENDENTAL)
    return Chosen(eval_native, NativeSoftmaxF32("softmax_f32", _ranges(ctx, rows, rows * depth),
                                                ctx.threads, tasks, depth, float(beta)))
