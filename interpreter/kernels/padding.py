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

from .base import OpContext, scratch

# Padding enum values of the TFLite schema.
SAME = 0
VALID = 1


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
