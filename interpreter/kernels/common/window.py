"""Output size and padding of windowed ops (conv, depthwise conv, pooling).

Matches tensorflow/lite/kernels/padding.h (ComputeOutSize, ComputePaddingHeightWidth,
ComputePaddingWithOffset), which itself matches TensorFlow's GetWindowedOutputSize:

    effective_k = (k - 1) * dilation + 1
    SAME:   out = ceil(in / stride)                = (in + stride - 1) // stride
    VALID:  out = ceil((in - effective_k + 1) / s) = (in - effective_k + stride) // stride
    total   = max(0, (out - 1) * stride + effective_k - in)
    before  = total // 2, after = total - before   (the odd pixel goes to the end)

The kernels only use ``before`` (TFLite's ``padding_values.height/width``): reads past
the end of the input count as padding. We materialize ``after`` too so the window views
stay inside a padded scratch buffer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ....schema.ops import PADDING
from ..base import OpContext, scratch

# Padding enum values of the TFLite schema.
SAME = PADDING["SAME"]
VALID = PADDING["VALID"]


@dataclass(frozen=True)
class Window1D:
    """Geometry along one spatial axis."""

    size_in: int
    size_out: int
    kernel: int
    stride: int
    dilation: int
    pad_before: int
    pad_after: int

    @property
    def padded_size(self) -> int:
        return self.size_in + self.pad_before + self.pad_after


def window_1d(ctx: OpContext, axis_name: str, size_in: int, kernel: int, stride: int,
              dilation: int, padding: int) -> Window1D:
    if stride < 1 or dilation < 1 or kernel < 1:
        raise ctx.shape_error(
            f"{axis_name}: stride ({stride}), dilation ({dilation}) and kernel size "
            f"({kernel}) must all be >= 1"
        )
    effective_k = (kernel - 1) * dilation + 1
    if padding == SAME:
        size_out = (size_in + stride - 1) // stride
    elif padding == VALID:
        size_out = (size_in - effective_k + stride) // stride
    else:
        raise ctx.unsupported(f"padding type {padding} (only SAME=0 and VALID=1 exist)")
    if size_out < 1:
        raise ctx.shape_error(
            f"{axis_name}: the window ({effective_k} after dilation) does not fit the input "
            f"size {size_in} with {'SAME' if padding == SAME else 'VALID'} padding"
        )
    total = max(0, (size_out - 1) * stride + effective_k - size_in)
    before = total // 2
    after = total - before
    return Window1D(size_in, size_out, kernel, stride, dilation, before, after)


def padding_option(ctx: OpContext) -> int:
    return int(ctx.option("padding", SAME))


def conv_windows(ctx: OpContext, h: int, w: int, kh: int, kw: int) -> tuple[Window1D, Window1D]:
    """Height and width windows of a (depthwise) convolution with a KH x KW filter:
    Conv2DOptions / DepthwiseConv2DOptions stride, dilation and padding."""
    pad = padding_option(ctx)
    wh = window_1d(ctx, "height", h, kh, int(ctx.option("stride_h", 1)),
                   int(ctx.option("dilation_h_factor", 1)), pad)
    ww = window_1d(ctx, "width", w, kw, int(ctx.option("stride_w", 1)),
                   int(ctx.option("dilation_w_factor", 1)), pad)
    return wh, ww


def pool_windows(ctx: OpContext, h: int, w: int) -> tuple[Window1D, Window1D]:
    """Height and width windows of a pool: Pool2DOptions filter size, stride and
    padding, dilation 1 (pooling.cc)."""
    pad = padding_option(ctx)
    wh = window_1d(ctx, "height", h, int(ctx.option("filter_height", 1)),
                   int(ctx.option("stride_h", 1)), 1, pad)
    ww = window_1d(ctx, "width", w, int(ctx.option("filter_width", 1)),
                   int(ctx.option("stride_w", 1)), 1, pad)
    return wh, ww


def valid_counts(win: Window1D) -> np.ndarray:
    """Per output position, how many window positions fall inside the input (the
    reference pools clip every window to the input:
    filter_x_start = max(0, -in_x_origin), filter_x_end = min(filter_w, in_w - in_x_origin))."""
    origin = np.arange(win.size_out) * win.stride - win.pad_before
    start = np.maximum(0, -origin)
    end = np.minimum(win.kernel, win.size_in - origin)
    return np.maximum(end - start, 0)


# --------------------------------------------------------------------------- scratch views
#
# Windowed kernels copy their NHWC input into a scratch buffer surrounded by the padding
# value (0 for conv/avg-pool, -inf for max-pool) once per invoke; every window is then a
# fixed strided view of that buffer, built once in prepare().


def padded_scratch(ctx: OpContext, batch: int, wh: Window1D, ww: Window1D, channels: int,
                   dtype, fill: float) -> tuple[np.ndarray, np.ndarray]:
    """(padded buffer, view of its interior where the input goes)."""
    padded = scratch(ctx, (batch, wh.padded_size, ww.padded_size, channels), dtype, fill)
    interior = padded[:, wh.pad_before:wh.pad_before + wh.size_in,
                      ww.pad_before:ww.pad_before + ww.size_in, :]
    return padded, interior


def tap_view(padded: np.ndarray, wh: Window1D, ww: Window1D, ky: int, kx: int) -> np.ndarray:
    """(N, OH, OW, C) view: the input pixel under kernel tap (ky, kx) for every output."""
    y0 = ky * wh.dilation
    x0 = kx * ww.dilation
    return padded[:, y0:y0 + (wh.size_out - 1) * wh.stride + 1:wh.stride,
                  x0:x0 + (ww.size_out - 1) * ww.stride + 1:ww.stride, :]


def patches_view(padded: np.ndarray, wh: Window1D, ww: Window1D) -> np.ndarray:
    """(N, OH, OW, KH, KW, C) read-only view: every window of every output pixel (im2col)."""
    sn, sh, sw, sc = padded.strides
    return as_strided(
        padded,
        shape=(padded.shape[0], wh.size_out, ww.size_out, wh.kernel, ww.kernel, padded.shape[3]),
        strides=(sn, sh * wh.stride, sw * ww.stride, sh * wh.dilation, sw * ww.dilation, sc),
        writeable=False,
    )


# --------------------------------------------------------------------------- stride phases
#
# A strided window (stride s) reads every s-th padded pixel, so its tap views have a gap
# between neighbouring outputs and numpy walks them C elements at a time. Splitting the
# padded input into its s_h * s_w stride phases -- phase (a, b) holds padded pixels
# (i*s_h + a, j*s_w + b) -- turns every tap into a stride-1 view of one phase, whose rows
# of OW * C values are contiguous:
#
#     padded[n, y*s_h + r, x*s_w + q]  ==  phase[r % s_h, q % s_w][n, y + r // s_h, x + q // s_w]
#
# with r = ky * dilation_h, q = kx * dilation_w. With stride 1 there is one phase: the
# padded buffer itself.


def _axis_phases(win: Window1D) -> dict[int, tuple[int, int, int, int]]:
    """phase a -> (buffer length, first buffer index holding input, count of input
    pixels, first input index), over the phases some tap reads."""
    s, d = win.stride, win.dilation
    phases: dict[int, int] = {}
    for k in range(win.kernel):
        r1, a = divmod(k * d, s)
        phases[a] = max(phases.get(a, 0), r1)
    out = {}
    for a, r1_max in sorted(phases.items()):
        length = win.size_out + r1_max
        # buffer index i holds padded pixel i*s + a, i.e. input pixel i*s + a - pad_before
        first = max(0, -(-(win.pad_before - a) // s))
        last = min(length - 1, (win.size_in - 1 + win.pad_before - a) // s)
        count = max(0, last - first + 1)
        out[a] = (length, first, count, first * s + a - win.pad_before)
    return out


@dataclass(frozen=True)
class TapBuffer:
    """The padded input of a windowed op, split into stride phases (see above).

    ``load(x)`` copies the (N, H, W, C) input in -- optionally minus a zero point, and
    with every channel repeated ``multiplier`` times (depthwise multipliers) -- and
    ``taps[ky * KW + kx]`` is the (N, OH, OW, C * multiplier) view of the pixels under
    tap (ky, kx). The padding keeps the fill value written in prepare()."""

    fills: tuple[tuple[np.ndarray, tuple[slice, ...]], ...]  # (destination, input index)
    taps: tuple[np.ndarray, ...]
    multiplier: int

    def load(self, x: np.ndarray, zero_point: int | None = None) -> None:
        for dst, index in self.fills:
            src = x[index]
            if self.multiplier > 1:
                src = src[..., np.newaxis]
            if zero_point is None:
                np.copyto(dst, src, casting="unsafe")
            else:
                np.subtract(src, zero_point, out=dst, dtype=dst.dtype)


def tap_buffer(ctx: OpContext, batch: int, wh: Window1D, ww: Window1D, channels: int,
               dtype, fill: float, multiplier: int = 1) -> TapBuffer:
    """``channels``: input channels; the buffer holds channels * multiplier."""
    rows, cols = _axis_phases(wh), _axis_phases(ww)
    width = channels * multiplier
    buffers, fills = {}, []
    for a, (h_len, h_first, h_count, y0) in rows.items():
        for b, (w_len, w_first, w_count, x0) in cols.items():
            buf = scratch(ctx, (batch, h_len, w_len, width), dtype, fill)
            buffers[a, b] = buf
            if h_count == 0 or w_count == 0:
                continue
            dst = buf[:, h_first:h_first + h_count, w_first:w_first + w_count]
            if multiplier > 1:
                dst = dst.reshape(dst.shape[:3] + (channels, multiplier))
            index = (slice(None), slice(y0, y0 + (h_count - 1) * wh.stride + 1, wh.stride),
                     slice(x0, x0 + (w_count - 1) * ww.stride + 1, ww.stride))
            fills.append((dst, index))
    taps = []
    for ky in range(wh.kernel):
        r1, a = divmod(ky * wh.dilation, wh.stride)
        for kx in range(ww.kernel):
            q1, b = divmod(kx * ww.dilation, ww.stride)
            taps.append(buffers[a, b][:, r1:r1 + wh.size_out, q1:q1 + ww.size_out, :])
    return TapBuffer(tuple(fills), tuple(taps), multiplier)
