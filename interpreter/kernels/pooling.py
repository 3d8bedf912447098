"""MAX_POOL_2D and AVERAGE_POOL_2D, float32.

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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import OpContext, OutputSpec
from .fused import Clamp, activation_clamp, apply_clamp
from .window import TapBuffer, Window1D, padding_option, tap_buffer, window_1d

LOWEST_FLOAT32 = np.finfo(np.float32).min  # std::numeric_limits<float>::lowest()


@dataclass(frozen=True)
class PoolRecord:
    buffer: TapBuffer  # padded input in stride phases; taps: (N, OH, OW, C) views of it
    divisor: np.ndarray | None  # AVERAGE: count of valid pixels per output value
    clamp: Clamp


def _valid_counts(win: Window1D) -> np.ndarray:
    """Per output position, how many window positions fall inside the input."""
    origin = np.arange(win.size_out) * win.stride - win.pad_before
    start = np.maximum(0, -origin)
    end = np.minimum(win.kernel, win.size_in - origin)
    return np.maximum(end - start, 0)


def _prepare(ctx: OpContext, is_average: bool):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, (np.float32,), "input")
    if x.rank != 4:
        raise ctx.shape_error(f"input shape {list(x.shape)} must be 4-D NHWC")
    n, h, w, c = x.shape
    pad = padding_option(ctx)
    wh = window_1d(ctx, "height", h, int(ctx.option("filter_height", 1)),
                   int(ctx.option("stride_h", 1)), 1, pad)
    ww = window_1d(ctx, "width", w, int(ctx.option("filter_width", 1)),
                   int(ctx.option("stride_w", 1)), 1, pad)
    fill = 0.0 if is_average else LOWEST_FLOAT32
    buffer = tap_buffer(ctx, n, wh, ww, c, np.float32, fill)
    out_shape = (n, wh.size_out, ww.size_out, c)
    divisor = None
    if is_average:
        counts = np.outer(_valid_counts(wh), _valid_counts(ww))
        counts = counts.astype(np.float32).reshape(1, wh.size_out, ww.size_out, 1)
        divisor = np.ascontiguousarray(np.broadcast_to(counts, out_shape))
    record = PoolRecord(buffer, divisor, activation_clamp(ctx, np.float32))
    return (OutputSpec(out_shape, np.dtype(np.float32)),), record


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
