"""RESIZE_BILINEAR (float32) and RESIZE_NEAREST_NEIGHBOR (any element type), NHWC.

The 2nd input is the new size, an int32 [2] tensor (height, width), constant here (it
fixes the output shape). Options: align_corners, half_pixel_centers (not both).
Scales are float32, as in the reference:

    scale = in / out,   or (in - 1) / (out - 1) with align_corners and out > 1

RESIZE_BILINEAR matches reference_ops::ResizeBilinear
(tensorflow/lite/kernels/internal/reference/resize_bilinear.h), per output row y (and
likewise per column x), in float32:

    src = (y + 0.5) * scale - 0.5   (half_pixel_centers)   or   y * scale
    y0 = max(floor(src), 0),  y1 = min(ceil(src), in - 1),  dy = src - y0
    out = in[y0, x0] * (1 - dy) * (1 - dx) + in[y1, x0] * dy * (1 - dx)
        + in[y0, x1] * (1 - dy) * dx       + in[y1, x1] * dy * dx

evaluated left to right. With half-pixel centers src can be negative near the top/left
edge: y0 = y1 = 0 and dy < 0, so the weights (1 - dy, dy) still sum to 1 on one pixel.

RESIZE_NEAREST_NEIGHBOR matches reference_ops::ResizeNearestNeighbor
(reference/resize_nearest_neighbor.h, GetNearestNeighbor):

    src = (y + offset) * scale           offset = 0.5 with half_pixel_centers, else 0
    index = min(align_corners ? round(src) : floor(src), in - 1)
    half_pixel_centers: index = max(index, 0)

where round is TfLiteRound (std::round, halves away from zero).
prepare() computes every index and weight; eval() gathers with np.take (mode="clip"
skips numpy's buffered bounds check; the indices are in range by construction).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import OpContext, OutputSpec, reserve, scratch
from ..names import quoted

F32 = np.float32


def _size(ctx: OpContext):
    ctx.check_arity(2, 2)
    x, size_t = ctx.input(0), ctx.input(1)
    if x.rank != 4:
        raise ctx.shape_error(f"input {quoted(x.name)} must be 4-D (NHWC), is {list(x.shape)}")
    ctx.require_dtype(size_t, (np.int32,), "size")
    size = [int(v) for v in ctx.constant_input(1, "size").reshape(-1)]
    if len(size) != 2 or min(size) < 1:
        raise ctx.shape_error(f"size {size} must be two values >= 1 (height, width)")
    align = bool(ctx.option("align_corners", False))
    half = bool(ctx.option("half_pixel_centers", False))
    if align and half:
        raise ctx.unsupported("align_corners and half_pixel_centers cannot both be set")
    n, _, _, c = x.shape
    # The per-axis tables (source positions, indices, weights: at most 32 bytes per output
    # row or column) are built in prepare(): charge them before numpy allocates them.
    reserve(ctx, (size[0] + size[1], 4), np.float64)
    return x, (n, size[0], size[1], c), align, half


def _scale(size_in: int, size_out: int, align: bool) -> np.float32:
    if align and size_out > 1:
        return F32(size_in - 1) / F32(size_out - 1)
    return F32(size_in) / F32(size_out)


# --------------------------------------------------------------------------- bilinear


@dataclass(frozen=True)
class BilinearRecord:
    y0: np.ndarray  # (OH,) source rows
    y1: np.ndarray
    x0: np.ndarray  # (OW,) source columns
    x1: np.ndarray
    wy: tuple[np.ndarray, np.ndarray]  # (1 - dy, dy), each (1, OH, 1, 1) float32
    wx: tuple[np.ndarray, np.ndarray]  # (1 - dx, dx), each (1, 1, OW, 1) float32
    rows: tuple[np.ndarray, np.ndarray]  # scratch (N, OH, W, C): input rows y0 / y1
    term: np.ndarray  # scratch (N, OH, OW, C)


def _bilinear_axis(size_in: int, size_out: int, align: bool, half: bool):
    """ComputeInterpolationValues for every output coordinate along one axis."""
    scale = _scale(size_in, size_out, align)
    pos = np.arange(size_out).astype(F32)
    src = (pos + F32(0.5)) * scale - F32(0.5) if half else pos * scale
    lower = np.maximum(np.floor(src), 0).astype(np.intp)
    upper = np.minimum(np.ceil(src), size_in - 1).astype(np.intp)
    frac = src - lower.astype(F32)  # float32, as (input_y - y0) in the reference
    return lower, upper, (F32(1) - frac, frac)


def prepare_bilinear(ctx: OpContext):
    x, out_shape, align, half = _size(ctx)
    ctx.require_dtype(x, (np.float32,), "input")
    n, h, w, c = x.shape
    _, oh, ow, _ = out_shape
    y0, y1, wy = _bilinear_axis(h, oh, align, half)
    x0, x1, wx = _bilinear_axis(w, ow, align, half)
    record = BilinearRecord(
        y0, y1, x0, x1,
        tuple(v.reshape(1, oh, 1, 1) for v in wy), tuple(v.reshape(1, 1, ow, 1) for v in wx),
        (scratch(ctx, (n, oh, w, c), F32), scratch(ctx, (n, oh, w, c), F32)),
        scratch(ctx, out_shape, F32))
    return (OutputSpec(out_shape, x.dtype),), record


def eval_bilinear(rec: BilinearRecord, inputs, outputs) -> None:
    x, out, term = inputs[0], outputs[0], rec.term
    top, bottom = rec.rows
    np.take(x, rec.y0, axis=1, out=top, mode="clip")
    np.take(x, rec.y1, axis=1, out=bottom, mode="clip")
    (wy0, wy1), (wx0, wx1) = rec.wy, rec.wx
    # Terms in the reference's order: (y0, x0), (y1, x0), (y0, x1), (y1, x1).
    for i, (rows, wy, cols, wx) in enumerate(((top, wy0, rec.x0, wx0),
                                              (bottom, wy1, rec.x0, wx0),
                                              (top, wy0, rec.x1, wx1),
                                              (bottom, wy1, rec.x1, wx1))):
        target = out if i == 0 else term
        np.take(rows, cols, axis=2, out=target, mode="clip")
        np.multiply(target, wy, out=target)
        np.multiply(target, wx, out=target)
        if i:
            np.add(out, term, out=out)


# --------------------------------------------------------------------------- nearest


@dataclass(frozen=True)
class NearestRecord:
    rows: np.ndarray  # (OH,) source rows
    cols: np.ndarray  # (OW,) source columns
    work: np.ndarray  # scratch (N, OH, W, C)


def _nearest_axis(size_in: int, size_out: int, align: bool, half: bool) -> np.ndarray:
    scale = _scale(size_in, size_out, align)
    src = (np.arange(size_out).astype(F32) + F32(0.5 if half else 0.0)) * scale
    if align:  # std::round on src >= 0; float64 keeps src + 0.5 exact
        index = np.floor(src.astype(np.float64) + 0.5)
    else:
        index = np.floor(src)
    index = np.minimum(index.astype(np.intp), size_in - 1)
    return np.maximum(index, 0) if half else index


def prepare_nearest(ctx: OpContext):
    x, out_shape, align, half = _size(ctx)
    if x.dtype.kind not in "biuf":
        raise ctx.unsupported(f"input {quoted(x.name)} has type {x.dtype.name}")
    n, h, w, c = x.shape
    _, oh, ow, _ = out_shape
    record = NearestRecord(_nearest_axis(h, oh, align, half), _nearest_axis(w, ow, align, half),
                           scratch(ctx, (n, oh, w, c), x.dtype))
    return (OutputSpec(out_shape, x.dtype),), record


def eval_nearest(rec: NearestRecord, inputs, outputs) -> None:
    np.take(inputs[0], rec.rows, axis=1, out=rec.work, mode="clip")
    np.take(rec.work, rec.cols, axis=2, out=outputs[0], mode="clip")
