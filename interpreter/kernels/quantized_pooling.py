"""AVERAGE_POOL_2D, MAX_POOL_2D and MEAN on int8 / uint8 tensors.

Pools need equal input and output parameters (pooling.cc), so they work on the raw q:

* AVERAGE_POOL_2D -- reference_integer_ops::AveragePool / reference_ops::AveragePool
  (tensorflow/lite/kernels/internal/reference/integer_ops/pooling.h, pooling.h): the sum
  of the window's valid (unpadded) pixels divided by their count c, rounded half away
  from zero with C integer division:
      out = (acc > 0 ? acc + c/2 : acc - c/2) / c
  then the fused clamp. The XNNPACK delegate leaves quantized average pools to TFLite,
  whose optimized kernel rounds the same way, so both kernel sets agree.
* MAX_POOL_2D -- the maximum over the valid pixels, then the fused clamp (TFLite's
  CalculateActivationRangeQuantized, or XNNPACK's for DEFAULT).

MEAN over constant axes:

* REFERENCE -- reference_ops::QuantizedMeanOrSum (reference/reduce.h): with
  (m, shift) = QuantizeMultiplier(s_in / s_out) and n the number of reduced elements,
      k = min(floor(log2 n), 32, 31 + shift)
      m' = (m << k) / n, shift' = shift - k           (integer division)
      out = clamp(MBQM(sum(q) - n * z_in, m', shift') + z_out)
* DEFAULT -- the XNNPACK delegate (xnn_create_reduce_nd / update_params_mean_qs8):
      scale = float32(s_in / s_out) * float32(1 / n)
      out = clamp(rint(float32(sum(q) - n * z_in) * scale) + z_out)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import quant_math as qm
from .base import Kernel, OpContext, OutputSpec, temporary
from .fused import clamp_inplace
from .window import TapBuffer, Window1D, padding_option, tap_buffer, window_1d
from .requantize import QUANTIZED, activation_bounds, clamp_out, qparams, require_same_type
from .reduce import resolve_axes
from ..names import quoted


@dataclass(frozen=True)
class QPoolRecord:
    buffer: TapBuffer  # the padded input split into stride phases; taps are its views
    half: np.ndarray | None  # AVERAGE: c // 2 per output value (work dtype)
    counts: np.ndarray | None  # AVERAGE: c, the valid-pixel count per output value
    acc: np.ndarray | None  # AVERAGE: (N, OH, OW, C) scratch (work dtype)
    lo: int
    hi: int


def _valid_counts(win: Window1D) -> np.ndarray:
    origin = np.arange(win.size_out) * win.stride - win.pad_before
    return np.maximum(np.minimum(win.kernel, win.size_in - origin) - np.maximum(0, -origin), 0)


def _prepare_pool(ctx: OpContext, is_average: bool):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, QUANTIZED, "input")
    require_same_type(ctx, x, ctx.outputs[0])
    if x.rank != 4:
        raise ctx.shape_error(f"input shape {list(x.shape)} must be 4-D NHWC")
    xq, out = qparams(ctx, x, "input"), qparams(ctx, ctx.outputs[0], "output")
    if (xq.scale, xq.zero_point) != (out.scale, out.zero_point):
        raise ctx.unsupported(
            f"input {quoted(x.name)} and output {quoted(ctx.outputs[0].name)} need equal "
            "quantization parameters (as in TFLite's pooling.cc)"
        )
    n, h, w, c = x.shape
    pad = padding_option(ctx)
    wh = window_1d(ctx, "height", h, int(ctx.option("filter_height", 1)),
                   int(ctx.option("stride_h", 1)), 1, pad)
    ww = window_1d(ctx, "width", w, int(ctx.option("filter_width", 1)),
                   int(ctx.option("stride_w", 1)), 1, pad)
    # XNNPACK takes quantized max pools (its clamp), not average pools.
    xnnpack = not ctx.quant.reference and not is_average
    lo, hi = activation_bounds(ctx, out, x.dtype, xnnpack)
    out_shape = (n, wh.size_out, ww.size_out, c)
    if not is_average:  # the max of raw q values, in the input type; padding never wins
        buffer = tap_buffer(ctx, n, wh, ww, c, x.dtype, int(np.iinfo(x.dtype).min))
        return (OutputSpec(out_shape, x.dtype),), QPoolRecord(buffer, None, None, None, lo, hi)
    # Sums of at most KH*KW values of magnitude <= 255 are exact in float32; so is the
    # rounding below while c < 2^14 (the quotient is then far from the next integer
    # relative to float32's spacing), else float64.
    window = wh.kernel * ww.kernel
    work = np.float32 if window < 2**14 else np.float64
    buffer = tap_buffer(ctx, n, wh, ww, c, work, 0)
    counts = np.outer(_valid_counts(wh), _valid_counts(ww)).reshape(1, wh.size_out,
                                                                    ww.size_out, 1)
    counts = np.ascontiguousarray(np.broadcast_to(counts, out_shape)).astype(work)
    half = np.floor(counts / 2).astype(work)
    record = QPoolRecord(buffer, half, counts, temporary(ctx, out_shape, work), lo, hi)
    return (OutputSpec(out_shape, x.dtype),), record


def eval_average(rec: QPoolRecord, inputs, outputs) -> None:
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


def eval_max(rec: QPoolRecord, inputs, outputs) -> None:
    rec.buffer.load(inputs[0])
    out, taps = outputs[0], rec.buffer.taps
    np.copyto(out, taps[0])
    for i in range(1, len(taps)):
        np.maximum(out, taps[i], out=out)
    clamp_inplace(out, out.dtype.type(rec.lo), out.dtype.type(rec.hi))


AVERAGE_POOL_2D = Kernel(lambda ctx: _prepare_pool(ctx, True), eval_average)
MAX_POOL_2D = Kernel(lambda ctx: _prepare_pool(ctx, False), eval_max)


# --------------------------------------------------------------------------- MEAN


@dataclass(frozen=True)
class QMeanRecord:
    axes: tuple[int, ...]
    keep_dims: bool
    offset: int  # n * z_in
    xnnpack: bool
    multiplier: object  # (m', shift') for the reference path, float32 scale for XNNPACK
    rounding: qm.Rounding
    z_out: int
    lo: int
    hi: int


def prepare_mean(ctx: OpContext):
    ctx.check_arity(2, 2)
    x = ctx.input(0)
    ctx.require_dtype(x, QUANTIZED, "input")
    require_same_type(ctx, x, ctx.outputs[0])
    axes = resolve_axes(ctx, ctx.constant_input(1, "axis"), x.rank)
    keep_dims = bool(ctx.option("keep_dims", False))
    if keep_dims:
        shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    else:
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    count = 1
    for a in axes:
        count *= x.shape[a]
    if count == 0:
        raise ctx.shape_error(f"MEAN over an empty axis of shape {list(x.shape)}")
    xq, out = qparams(ctx, x, "input"), qparams(ctx, ctx.outputs[0], "output")
    xnnpack = not ctx.quant.reference
    if xnnpack:
        scale = np.float32(xq.scale) / np.float32(out.scale)
        multiplier = np.float32(scale * (np.float32(1.0) / np.float32(count)))
    else:
        m, shift = qm.quantize_multiplier(xq.scale / out.scale, ctx.quant.rounding)
        k = min(count.bit_length() - 1, 32, 31 + shift)
        multiplier = ((m << k) // count, shift - k)
    info = np.iinfo(x.dtype)
    record = QMeanRecord(axes, keep_dims, count * xq.zero_point, xnnpack, multiplier,
                         ctx.quant.rounding, out.zero_point, int(info.min), int(info.max))
    return (OutputSpec(shape, x.dtype),), record


def eval_mean(rec: QMeanRecord, inputs, outputs) -> None:
    total = np.add.reduce(inputs[0], axis=rec.axes, dtype=np.int64, keepdims=rec.keep_dims)
    total -= rec.offset
    if rec.xnnpack:
        values = np.rint(total.astype(np.float32) * rec.multiplier).astype(np.int64)
    else:
        m, shift = rec.multiplier
        values = qm.multiply_by_quantized_multiplier(total, m, shift, rec.rounding)
    values += rec.z_out
    clamp_out(np.asarray(values, np.int64), rec.lo, rec.hi, outputs[0])


MEAN = Kernel(prepare_mean, eval_mean)
