"""RESIZE_BILINEAR on int8 / uint8 tensors (input and output share their parameters, so
the op interpolates raw q). RESIZE_NEAREST_NEIGHBOR only moves values: resize.py's
kernel already handles every dtype.

* REFERENCE (resize_bilinear.cc, tensorflow/lite/kernels/internal/reference/
  resize_bilinear.h):
  - uint8: the templated float ResizeBilinear, rounded (measured: LiteRT 2.3.0 rounds
    half away from zero where older TFLite truncated):
        out = round(q00 * (1-dy) * (1-dx) + q10 * dy * (1-dx) + q01 * (1-dy) * dx
                    + q11 * dy * dx)                  (float32, left to right)
    with resize.py's source coordinates and weights;
  - int8: ResizeBilinearInteger, 10-bit fixed point:
        scale10 = (2^10 * in + out / 2) / out          (align_corners: (in-1), (out-1))
        src = y * scale10  (+ scale10 / 2 - 2^9 with half_pixel_centers)
        y0 = max(src / 2^10, 0), y1 = min(ceil(src / 2^10), in - 1)   (C division)
        wy = src - 2^10 * y0 (and likewise for x)
        acc = sum q * weights (2^20 = 1)
        out = (acc + (acc > 0 ? 2^19 : -2^19)) / 2^20      (C division)
* DEFAULT -- the XNNPACK delegate (xnn_indirection_init_resize_bilinear2d_hwc_q11 and
  the s8 / u8 ibilinear micro-kernels): float32 source coordinates
        legacy / align_corners: src = y * scale
        half_pixel_centers:     src = clamp(y * scale + (scale / 2 - 1/2), 0, in - 1)
        y0 = int(src), y1 = min(y0 + 1, in - 1), ay = rint(2^11 * (src - y0))
  and the integer blend
        t = (q00 << 11) + (q01 - q00) * ax,  b = (q10 << 11) + (q11 - q10) * ax
        out = ((t << 11) + (b - t) * ay + 2^21) >> 22
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import quant_math as qm
from .base import Kernel, OpContext, OutputSpec
from .requantize import QUANTIZED
from .resize import _bilinear_axis, _size

F32 = np.float32


@dataclass(frozen=True)
class QBilinearRecord:
    kind: str  # "float" (uint8 reference), "int10" (int8 reference), "xnn" (DEFAULT)
    y0: np.ndarray  # (OH,) source rows / columns
    y1: np.ndarray
    x0: np.ndarray  # (OW,)
    x1: np.ndarray
    wy: tuple  # per kind: float32 (1-dy, dy) or int weights, shaped (1, OH, 1, 1)
    wx: tuple  # (1, 1, OW, 1)


def _int10_axis(size_in: int, size_out: int, align: bool, half: bool):
    """ComputeInterpolationValues (int32 overload) for one axis: (y0, y1, w0, w1)."""
    if align and size_out > 1:
        scale10 = ((1 << 10) * (size_in - 1) + (size_out - 1) // 2) // (size_out - 1)
    else:
        scale10 = ((1 << 10) * size_in + size_out // 2) // size_out
    pos = np.arange(size_out, dtype=np.int64)
    src = pos * scale10 + (scale10 // 2 - (1 << 9) if half else 0)
    trunc_div = np.where(src < 0, -((-src) // 1024), src // 1024)  # C division
    lower = np.maximum(trunc_div, 0)
    up = src + 1023
    upper = np.minimum(np.where(up < 0, -((-up) // 1024), up // 1024), size_in - 1)
    frac = src - 1024 * lower
    return lower, upper, (1024 - frac, frac)


def _xnn_axis(size_in: int, size_out: int, align: bool, half: bool):
    """xnn_indirection_init_resize_bilinear2d_hwc_q11 for one axis: (y0, y1, w0, w1)."""
    adjust = 1 if align and size_out != 1 else 0
    scale = F32(size_in - adjust) / F32(size_out - adjust)
    pos = np.arange(size_out).astype(F32)
    if half:
        offset = F32(F32(0.5) * scale - F32(0.5))
        src = np.clip((pos * scale).astype(F32) + offset, F32(0.0), F32(size_in - 1))
    else:
        src = (pos * scale).astype(F32)
    lower = src.astype(np.int64)
    upper = np.minimum(lower + 1, size_in - 1)
    alpha = np.rint((src - lower.astype(F32)) * F32(2048.0)).astype(np.int64)
    return lower, upper, (2048 - alpha, alpha)


def prepare(ctx: OpContext):
    x, out_shape, align, half = _size(ctx)
    ctx.require_dtype(x, QUANTIZED, "input")
    if ctx.outputs[0].dtype != x.dtype:
        raise ctx.dtype_error(f"output must be {x.dtype.name} like the input")
    _, h, w, _ = x.shape
    _, oh, ow, _ = out_shape
    if not ctx.quant.reference:
        kind, axis = "xnn", _xnn_axis
    elif x.dtype == np.int8:
        kind, axis = "int10", _int10_axis
    else:
        kind, axis = "float", _bilinear_axis
    y0, y1, wy = axis(h, oh, align, half)
    x0, x1, wx = axis(w, ow, align, half)
    record = QBilinearRecord(kind, y0, y1, x0, x1,
                             tuple(v.reshape(1, oh, 1, 1) for v in wy),
                             tuple(v.reshape(1, 1, ow, 1) for v in wx))
    return (OutputSpec(out_shape, x.dtype),), record


def eval(rec: QBilinearRecord, inputs, outputs) -> None:
    x = inputs[0]
    top, bottom = x[:, rec.y0], x[:, rec.y1]
    q00, q01 = top[:, :, rec.x0], top[:, :, rec.x1]
    q10, q11 = bottom[:, :, rec.x0], bottom[:, :, rec.x1]
    (wy0, wy1), (wx0, wx1) = rec.wy, rec.wx
    if rec.kind == "float":
        # Left to right in float32, then rounded half away from zero.
        acc = q00.astype(F32) * wy0 * wx0
        acc = acc + q10.astype(F32) * wy1 * wx0
        acc = acc + q01.astype(F32) * wy0 * wx1
        acc = acc + q11.astype(F32) * wy1 * wx1
        values = qm.round_half_away(acc).astype(np.int64)
    elif rec.kind == "int10":
        acc = (q00.astype(np.int64) * wy0 * wx0 + q10.astype(np.int64) * wy1 * wx0
               + q01.astype(np.int64) * wy0 * wx1 + q11.astype(np.int64) * wy1 * wx1)
        nudged = acc + np.where(acc > 0, 1 << 19, -(1 << 19))
        values = np.where(nudged < 0, -((-nudged) >> 20), nudged >> 20)
    else:
        ax, ay = wx1, wy1
        t = (q00.astype(np.int64) << 11) + (q01.astype(np.int64) - q00) * ax
        b = (q10.astype(np.int64) << 11) + (q11.astype(np.int64) - q10) * ax
        values = ((t << 11) + (b - t) * ay + (1 << 21)) >> 22
    info = np.iinfo(outputs[0].dtype)
    np.copyto(outputs[0], np.clip(values, info.min, info.max), casting="unsafe")


RESIZE_BILINEAR = Kernel(prepare, eval)
