"""MAX_POOL_2D and AVERAGE_POOL_2D: float32, int8 / uint8 and 16x8 int16.

Matches tensorflow/lite/kernels/pooling.cc (Prepare: ComputePaddingHeightWidth with
dilation 1) and reference_ops::AveragePool / MaxPool
(tensorflow/lite/kernels/internal/reference/pooling.h). For each output pixel the
reference clips the window to the input:

    filter_x_start = max(0, -in_x_origin), filter_x_end = min(filter_w, in_w - in_x_origin)

so padded positions never take part:

* AVERAGE_POOL_2D divides the sum by the number of *valid* (non-padded) pixels in the
  window, not by filter_h * filter_w. The divisor map is computed once in prepare().
* MAX_POOL_2D starts from std::numeric_limits<float>::lowest() and takes
  std::max(acc, x), which keeps acc when x is NaN -- numpy's fmax does the same.
  Padding is filled with lowest(), which never wins.

The taps are summed in the reference's (filter_y, filter_x) order, so the average is
computed with the same float32 additions.

int8 / uint8: pools need equal input and output parameters (pooling.cc), so they work on
the raw q:

* AVERAGE_POOL_2D -- reference_integer_ops::AveragePool / reference_ops::AveragePool
  (tensorflow/lite/kernels/internal/reference/integer_ops/pooling.h, pooling.h): the sum
  of the window's valid (unpadded) pixels divided by their count c, rounded half away
  from zero with C integer division:
      out = (acc > 0 ? acc + c/2 : acc - c/2) / c
  then the fused clamp. The XNNPACK delegate leaves quantized average pools to TFLite,
  whose optimized kernel rounds the same way, so both kernel sets agree.
* MAX_POOL_2D -- the maximum over the valid pixels, then the fused clamp (TFLite's
  CalculateActivationRangeQuantized, or XNNPACK's for DEFAULT).

int16 (16x8) runs the same arithmetic (reference_integer_ops::AveragePool / MaxPool for
int16, both kernel sets: XNNPACK takes no int16), the sums in float64.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .. import native as native_backend
from edgelite.names import quoted
from ..parallel import row_ranges, run_slices, worth_splitting
from .base import Chosen, Kernel, OpContext, OutputSpec, temporary
from .common import native_ops, native_split
from .common.native_float_ops import clamp_bounds
from .common.fused import Clamp, activation_clamp, apply_clamp, clamp_inplace
from .opdef import OpDef, QuantRule
from .versions import int8_2_int16_in_out_3
from .common.requantize import QUANTIZED, activation_bounds, qparams, require_same_type
from .common.window import TapBuffer, pool_windows, tap_buffer, valid_counts

LOWEST_FLOAT32 = np.finfo(np.float32).min  # std::numeric_limits<float>::lowest()


@dataclass(frozen=True)
class PoolRecord:
    average: bool
    clamp: Clamp
    dims: tuple = ()  # (N, H, W, C)
    window: tuple = ()  # (KH, KW, SH, SW, pad_top, pad_left, OH, OW)
    split: tuple = (1, 1)  # (threads, tasks) of the native step's rows on the C pool
    # the numpy evals' (None where the native step runs: it needs neither)
    buffer: TapBuffer | None = None  # padded input in stride phases; taps: (N, OH, OW, C)
    divisor: np.ndarray | None = None  # AVERAGE: count of valid pixels per output value

    def _args(self, x, out) -> tuple:
        return (x, out, not self.average, self.dims, self.window, *clamp_bounds(self.clamp),
                *self.split)

    def _step(self, x, out):
        return native_backend.module.pool_f32_step(*self._args(x, out))

    def native_step(self, inputs, outputs):
        """The pool in C from the unpadded input (native/pool_f32.c: the reference's
        clipped windows, the numpy kernel's values) as one native step; None where an
        operand is not a plain float32 arena buffer."""
        x, out = inputs[0], outputs[0]
        if getattr(x, "dtype", None) != np.float32:
            return None
        return native_ops.plain_step((x, out), "pool_f32_step", *self._args(x, out))


def eval_native(rec: PoolRecord, inputs, outputs) -> None:
    """The native pool where its step cannot bind (operands not arena buffers)."""
    native_ops.run_contiguous(rec._step, inputs[0], outputs[0])


def _prepare(ctx: OpContext, is_average: bool):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, (np.float32,), "input")
    if x.rank != 4:
        raise ctx.shape_error(f"input shape {list(x.shape)} must be 4-D NHWC")
    n, h, w, c = x.shape
    wh, ww = pool_windows(ctx, h, w)
    out_shape = (n, wh.size_out, ww.size_out, c)
    rows = n * wh.size_out
    tasks = native_split.tasks(ctx.threads, rows * ww.size_out * c * wh.kernel * ww.kernel,
                               rows, native_split.SPLIT_ELEMENTS)
    record = PoolRecord(average=is_average, clamp=activation_clamp(ctx, np.float32),
                        dims=(n, h, w, c),
                        window=(wh.kernel, ww.kernel, wh.stride, ww.stride, wh.pad_before,
                                ww.pad_before, wh.size_out, ww.size_out),
                        split=(ctx.threads if tasks > 1 else 1, tasks))
    spec = (OutputSpec(out_shape, np.dtype(np.float32)),)
    if native_ops.has_step(ctx, "pool_f32_step"):
        return spec, Chosen(eval_native, record)
    divisor = None
    if is_average:
        counts = np.outer(valid_counts(wh), valid_counts(ww))
        counts = counts.astype(np.float32).reshape(1, wh.size_out, ww.size_out, 1)
        divisor = np.ascontiguousarray(np.broadcast_to(counts, out_shape))
    fill = 0.0 if is_average else LOWEST_FLOAT32
    return spec, replace(record, buffer=tap_buffer(ctx, n, wh, ww, c, np.float32, fill),
                         divisor=divisor)


def prepare_average(ctx: OpContext):
    return _prepare(ctx, is_average=True)


def prepare_max(ctx: OpContext):
    return _prepare(ctx, is_average=False)


def eval_average(rec: PoolRecord, inputs, outputs) -> None:
    out, taps = outputs[0], rec.buffer.taps
    rec.buffer.load(inputs[0])
    np.copyto(out, taps[0])
    for i in range(1, len(taps)):
        np.add(out, taps[i], out=out)
    np.divide(out, rec.divisor, out=out)
    apply_clamp(rec.clamp, out)


def eval_max(rec: PoolRecord, inputs, outputs) -> None:
    out, taps = outputs[0], rec.buffer.taps
    rec.buffer.load(inputs[0])
    out.fill(LOWEST_FLOAT32)
    for i in range(len(taps)):
        np.fmax(out, taps[i], out=out)
    apply_clamp(rec.clamp, out)


# --------------------------------------------------------------------------- int8 / uint8


@dataclass(frozen=True, kw_only=True)
class QPoolRecord:
    buffer: TapBuffer  # the padded input split into stride phases; taps are its views
    lo: int
    hi: int
    half: np.ndarray | None = None  # AVERAGE: c // 2 per output value (work dtype)
    counts: np.ndarray | None = None  # AVERAGE: c, the valid-pixel count per output value
    acc: np.ndarray | None = None  # AVERAGE: (N, OH, OW, C) scratch (work dtype)


def _prepare_quantized(ctx: OpContext, is_average: bool):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, QUANTIZED + (np.int16,), "input")
    require_same_type(ctx, x, ctx.outputs[0])
    if x.rank != 4:
        raise ctx.shape_error(f"input shape {list(x.shape)} must be 4-D NHWC")
    xq, out = qparams(ctx, x, "input"), qparams(ctx, ctx.outputs[0], "output")
    int16 = x.dtype == np.int16
    if (xq.scale, xq.zero_point) != (out.scale, out.zero_point):
        raise ctx.unsupported(
            f"input {quoted(x.name)} and output {quoted(ctx.outputs[0].name)} need equal "
            "quantization parameters (as in TFLite's pooling.cc)"
        )
    n, h, w, c = x.shape
    wh, ww = pool_windows(ctx, h, w)
    # XNNPACK takes quantized max pools (its clamp), not average pools, nor int16.
    xnnpack = not ctx.quant.reference and not is_average and not int16
    lo, hi = activation_bounds(ctx, out, x.dtype, xnnpack)
    out_shape = (n, wh.size_out, ww.size_out, c)
    native = native_average(ctx, x, wh, ww, lo, hi) if is_average else None
    if native is not None:
        return (OutputSpec(out_shape, x.dtype),), native
    if not is_average:  # the max of raw q values, in the input type; padding never wins
        buffer = tap_buffer(ctx, n, wh, ww, c, x.dtype, int(np.iinfo(x.dtype).min))
        return (OutputSpec(out_shape, x.dtype),), QPoolRecord(buffer=buffer, lo=lo, hi=hi)
    # Sums of at most KH*KW values of magnitude <= 255 are exact in float32; so is the
    # rounding below while c < 2^14 (the quotient is then far from the next integer
    # relative to float32's spacing), else float64 (always for int16).
    window = wh.kernel * ww.kernel
    work = np.float32 if window < 2**14 and not int16 else np.float64
    buffer = tap_buffer(ctx, n, wh, ww, c, work, 0)
    counts = np.outer(valid_counts(wh), valid_counts(ww)).reshape(1, wh.size_out,
                                                                    ww.size_out, 1)
    counts = np.ascontiguousarray(np.broadcast_to(counts, out_shape)).astype(work)
    half = np.floor(counts / 2).astype(work)
    record = QPoolRecord(buffer=buffer, half=half, counts=counts,
                         acc=temporary(ctx, out_shape, work), lo=lo, hi=hi)
    return (OutputSpec(out_shape, x.dtype),), record


@dataclass(frozen=True)
class NativeAverage:
    """native/pool.c's parameters: the window sums straight from the input (each window
    clipped to it, no padded copy); output rows (n, out_y) split over the threads."""

    flags: tuple  # (is_uint8, work_f64)
    dims: tuple  # (N, H, W, C)
    window: tuple  # (KH, KW, SH, SW, pad_top, pad_left, OH, OW)
    lo: int
    hi: int
    ranges: tuple  # [start, stop) of (n, out_y) rows per slice
    threads: int

    def native_step(self, inputs, outputs):
        """The run loop's native step (native/steps.c) where the rows run as one slice,
        with its own scratch (an int32 sum per channel); else None."""
        x, out = inputs[0], outputs[0]
        return native_ops.one_slice_step(
            self.ranges, (x, out), "avg_pool_step", x, out, self.flags, self.dims,
            self.window, self.lo, self.hi, *self.ranges[0], np.zeros(self.dims[3], np.int32))


def eval_native_average(rec: NativeAverage, inputs, outputs) -> None:
    fn, x, out = native_backend.module.avg_pool, inputs[0], outputs[0]
    args = [(x, out, rec.flags, rec.dims, rec.window, rec.lo, rec.hi, a, b)
            for a, b in rec.ranges]
    run_slices(rec.threads, fn, args)


def native_average(ctx: OpContext, x, wh, ww, lo: int, hi: int) -> Chosen | None:
    """The C kernel of an 8-bit AVERAGE_POOL_2D where the native backend runs, else None.
    It divides in eval_average_quantized's float type (float32 below 2^14 window pixels)
    and refuses windows with no valid pixel (SAME / VALID make none). MAX_POOL_2D has no
    C kernel: numpy's byte maxima over the tap planes measured as fast."""
    if not ctx.quant.native or x.dtype.itemsize != 1 or 0 in x.shape or \
            min(valid_counts(wh).min(), valid_counts(ww).min()) < 1:
        return None
    n, h, w, c = x.shape
    rows = n * wh.size_out
    parts = worth_splitting(ctx.threads, rows * ww.size_out * c)
    f64 = wh.kernel * ww.kernel >= 2**14
    return Chosen(eval_native_average, NativeAverage(
        (int(x.dtype == np.uint8), int(f64)), (n, h, w, c),
        (wh.kernel, ww.kernel, wh.stride, ww.stride, wh.pad_before, ww.pad_before,
         wh.size_out, ww.size_out), lo, hi, tuple(row_ranges(rows, parts)), ctx.threads))


def prepare_average_quantized(ctx: OpContext):
    return _prepare_quantized(ctx, is_average=True)


def prepare_max_quantized(ctx: OpContext):
    return _prepare_quantized(ctx, is_average=False)


def eval_average_quantized(rec: QPoolRecord, inputs, outputs) -> None:
    rec.buffer.load(inputs[0])
    acc, taps = rec.acc, rec.buffer.taps
    np.copyto(acc, taps[0])
    for i in range(1, len(taps)):
        np.add(acc, taps[i], out=acc)
    # (acc > 0 ? acc + c/2 : acc - c/2) / c with C's truncating division (acc == 0 gives
    # 0 either way); the float quotient lands on the same side of every integer.
    np.add(acc, np.copysign(rec.half, acc), out=acc)
    np.divide(acc, rec.counts, out=acc)
    np.trunc(acc, out=acc)
    clamp_inplace(acc, rec.lo, rec.hi)
    np.copyto(outputs[0], acc, casting="unsafe")


def eval_max_quantized(rec: QPoolRecord, inputs, outputs) -> None:
    rec.buffer.load(inputs[0])
    out, taps = outputs[0], rec.buffer.taps
    np.copyto(out, taps[0])
    for i in range(1, len(taps)):
        np.maximum(out, taps[i], out=out)
    clamp_inplace(out, out.dtype.type(rec.lo), out.dtype.type(rec.hi))


_AVERAGE_QUANTIZED = Kernel(prepare_average_quantized, eval_average_quantized)
_MAX_QUANTIZED = Kernel(prepare_max_quantized, eval_max_quantized)

OPS = (
    OpDef("AVERAGE_POOL_2D",
          float=Kernel(prepare_average, eval_average),
          integer=_AVERAGE_QUANTIZED, int16=_AVERAGE_QUANTIZED,  # one kernel serves both
          quant=QuantRule.SAME_AS_INPUT,
          fused_activation=True,
          per_sample=True,
          version=int8_2_int16_in_out_3),  # op_version.cc: 16x8 3, int8 2
    OpDef("MAX_POOL_2D",
          float=Kernel(prepare_max, eval_max),
          integer=_MAX_QUANTIZED, int16=_MAX_QUANTIZED,
          quant=QuantRule.SAME_AS_INPUT,
          fused_activation=True,
          per_sample=True,
          exact=True,
          version=int8_2_int16_in_out_3),
)
