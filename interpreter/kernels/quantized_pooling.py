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
from .base import Kernel, OpContext, OutputSpec, scratch
from .padding import Window1D, padded_scratch, padding_option, tap_view, window_1d
from .quant_common import QUANTIZED, activation_bounds, clamp_out, qparams, require_same_type
from .reduce import resolve_axes


@dataclass(frozen=True)
class QPoolRecord:
    interior: np.ndarray  # int32 view inside the padded scratch
    taps: tuple[np.ndarray, ...]  # per window position: (N, OH, OW, C) view
    counts: np.ndarray | None  # AVERAGE: (1, OH, OW, 1) int32 valid-pixel counts
    acc: np.ndarray  # (N, OH, OW, C) int32
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
            f"input '{x.name}' and output '{ctx.outputs[0].name}' need equal quantization "
            "parameters (as in TFLite's pooling.cc)"
        )
    n, h, w, c = x.shape
    pad = padding_option(ctx)
    wh = window_1d(ctx, "height", h, int(ctx.option("filter_height", 1)),
                   int(ctx.option("stride_h", 1)), 1, pad)
    ww = window_1d(ctx, "width", w, int(ctx.option("filter_width", 1)),
                   int(ctx.option("stride_w", 1)), 1, pad)
    fill = 0 if is_average else int(np.iinfo(x.dtype).min)  # padding never wins a max
    padded, interior = padded_scratch(ctx, n, wh, ww, c, np.int32, fill)
    taps = tuple(tap_view(padded, wh, ww, ky, kx)
                 for ky in range(wh.kernel) for kx in range(ww.kernel))
    counts = None
    if is_average:
        counts = np.outer(_valid_counts(wh), _valid_counts(ww)).astype(np.int32)
        counts = counts.reshape(1, wh.size_out, ww.size_out, 1)
    # XNNPACK takes quantized max pools (its clamp), not average pools.
    xnnpack = not ctx.quant.reference and not is_average
    lo, hi = activation_bounds(ctx, out, x.dtype, xnnpack)
    out_shape = (n, wh.size_out, ww.size_out, c)
    record = QPoolRecord(interior, taps, counts, scratch(ctx, out_shape, np.int32), lo, hi)
    return (OutputSpec(out_shape, x.dtype),), record


def eval_average(rec: QPoolRecord, inputs, outputs) -> None:
    np.copyto(rec.interior, inputs[0])
    acc = rec.acc
    np.copyto(acc, rec.taps[0])
    for tap in rec.taps[1:]:
        np.add(acc, tap, out=acc)
    half = rec.counts // 2
    # C division truncates towards zero: round half away from zero on both signs.
    values = np.where(acc > 0, (acc + half) // rec.counts, -((half - acc) // rec.counts))
    clamp_out(values.astype(np.int64), rec.lo, rec.hi, outputs[0])


def eval_max(rec: QPoolRecord, inputs, outputs) -> None:
    np.copyto(rec.interior, inputs[0])
    acc = rec.acc
    np.copyto(acc, rec.taps[0])
    for tap in rec.taps[1:]:
        np.maximum(acc, tap, out=acc)
    clamp_out(acc.astype(np.int64), rec.lo, rec.hi, outputs[0])


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
    total = np.sum(inputs[0], axis=rec.axes, dtype=np.int64, keepdims=rec.keep_dims)
    total -= rec.offset
    if rec.xnnpack:
        values = np.rint(total.astype(np.float32) * rec.multiplier).astype(np.int64)
    else:
        m, shift = rec.multiplier
        values = qm.multiply_by_quantized_multiplier(total, m, shift, rec.rounding)
    values += rec.z_out
    clamp_out(np.asarray(values, np.int64), rec.lo, rec.hi, outputs[0])


MEAN = Kernel(prepare_mean, eval_mean)
