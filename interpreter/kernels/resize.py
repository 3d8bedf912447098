"""RESIZE_BILINEAR (float32, int8 / uint8) and RESIZE_NEAREST_NEIGHBOR (any element type),
NHWC.

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
RESIZE_NEAREST_NEIGHBOR only moves values, so its kernel serves quantized tensors too.

RESIZE_BILINEAR on int8 / uint8 (input and output share their parameters, so the op
interpolates raw q), one strategy per kernel set and type:

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

int16 (16x8): ResizeBilinearInteger with both kernel sets (resize_bilinear.cc; XNNPACK
takes no int16). RESIZE_NEAREST_NEIGHBOR moves int16 values like any other.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .. import native as native_backend
from .. import quant_math as qm
from edgelite.names import quoted
from .base import Chosen, Kernel, OpContext, OutputSpec, reserve, run_chosen, scratch
from .opdef import TYPE_GENERIC, OpDef, QuantRule
from .common import native_ops
from .common.requantize import QUANTIZED
from .versions import OpSignature, T

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
    # the numpy eval's scratch (None where the native step runs: it needs none)
    rows: tuple[np.ndarray, np.ndarray] | None = None  # (N, OH, W, C): input rows y0 / y1
    term: np.ndarray | None = None  # (N, OH, OW, C)
    # the native step's: (y0, y1, x0, x1) as int64 and the four weight vectors, flat
    tables: tuple = ()
    weights: tuple = ()

    def _args(self, x, out) -> tuple:
        return (x, out, (*x.shape, *out.shape[1:3]), self.tables, self.weights)

    def _step(self, x, out):
        return native_backend.module.resize_bilinear_f32_step(*self._args(x, out))

    def native_step(self, inputs, outputs):
        """With the native backend, the same blend in C in one pass (native/resize_f32.c:
        the numpy eval's bits) as a native step; None where the extension lacks it or an
        operand is not a plain contiguous float32 array."""
        x, out = inputs[0], outputs[0]
        if getattr(x, "dtype", None) != F32 or not self.tables:
            return None
        return native_ops.plain_step((x, out), "resize_bilinear_f32_step", *self._args(x, out))


def eval_bilinear_native(rec: BilinearRecord, inputs, outputs) -> None:
    """The native blend where its step cannot bind (operands not arena buffers)."""
    native_ops.run_contiguous(rec._step, inputs[0], outputs[0])


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
        y0=y0, y1=y1, x0=x0, x1=x1,
        wy=tuple(v.reshape(1, oh, 1, 1) for v in wy),
        wx=tuple(v.reshape(1, 1, ow, 1) for v in wx))
    spec = (OutputSpec(out_shape, x.dtype),)
    if native_ops.has_step(ctx, "resize_bilinear_f32_step"):
        return spec, Chosen(eval_bilinear_native, replace(
            record, tables=tuple(np.ascontiguousarray(t, np.int64) for t in (y0, y1, x0, x1)),
            weights=tuple(np.ascontiguousarray(v, F32) for v in (*wy, *wx))))
    return spec, replace(record, rows=(scratch(ctx, (n, oh, w, c), F32),
                                       scratch(ctx, (n, oh, w, c), F32)),
                         term=scratch(ctx, out_shape, F32))


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


# --------------------------------------------------------------------------- bilinear, int8 / uint8


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


@dataclass(frozen=True, kw_only=True)
class QBilinearRecord:
    y0: np.ndarray  # (OH,) source rows / columns
    y1: np.ndarray
    x0: np.ndarray  # (OW,)
    x1: np.ndarray
    wy: tuple  # per strategy: float32 (1-dy, dy) or int weights, shaped (1, OH, 1, 1)
    wx: tuple  # (1, 1, OW, 1)


def prepare_bilinear_quantized(ctx: OpContext):
    x, out_shape, align, half = _size(ctx)
    ctx.require_dtype(x, QUANTIZED + (np.int16,), "input")
    if ctx.outputs[0].dtype != x.dtype:
        raise ctx.dtype_error(f"output must be {x.dtype.name} like the input")
    _, h, w, _ = x.shape
    _, oh, ow, _ = out_shape
    if x.dtype == np.int16:  # both kernel sets: ResizeBilinearInteger (XNNPACK: no int16)
        blend, axis = eval_bilinear_int10, _int10_axis
    elif not ctx.quant.reference:
        blend, axis = eval_bilinear_xnn, _xnn_axis
    elif x.dtype == np.int8:
        blend, axis = eval_bilinear_int10, _int10_axis
    else:
        blend, axis = eval_bilinear_rounded, _bilinear_axis
    y0, y1, wy = axis(h, oh, align, half)
    x0, x1, wx = axis(w, ow, align, half)
    record = QBilinearRecord(y0=y0, y1=y1, x0=x0, x1=x1,
                             wy=tuple(v.reshape(1, oh, 1, 1) for v in wy),
                             wx=tuple(v.reshape(1, 1, ow, 1) for v in wx))
    return (OutputSpec(out_shape, x.dtype),), Chosen(blend, record)


def _corners(rec: QBilinearRecord, x: np.ndarray):
    """(q00, q01, q10, q11): the four source pixels of every output pixel."""
    top, bottom = x[:, rec.y0], x[:, rec.y1]
    return top[:, :, rec.x0], top[:, :, rec.x1], bottom[:, :, rec.x0], bottom[:, :, rec.x1]


def _store(values: np.ndarray, out: np.ndarray) -> None:
    info = np.iinfo(out.dtype)
    np.copyto(out, np.clip(values, info.min, info.max), casting="unsafe")


def eval_bilinear_rounded(rec: QBilinearRecord, inputs, outputs) -> None:
    """uint8 reference: left to right in float32, then rounded half away from zero."""
    q00, q01, q10, q11 = _corners(rec, inputs[0])
    (wy0, wy1), (wx0, wx1) = rec.wy, rec.wx
    acc = q00.astype(F32) * wy0 * wx0
    acc = acc + q10.astype(F32) * wy1 * wx0
    acc = acc + q01.astype(F32) * wy0 * wx1
    acc = acc + q11.astype(F32) * wy1 * wx1
    _store(qm.round_half_away(acc).astype(np.int64), outputs[0])


def eval_bilinear_int10(rec: QBilinearRecord, inputs, outputs) -> None:
    """int8 reference: ResizeBilinearInteger's 10-bit fixed point."""
    q00, q01, q10, q11 = _corners(rec, inputs[0])
    (wy0, wy1), (wx0, wx1) = rec.wy, rec.wx
    acc = (q00.astype(np.int64) * wy0 * wx0 + q10.astype(np.int64) * wy1 * wx0
           + q01.astype(np.int64) * wy0 * wx1 + q11.astype(np.int64) * wy1 * wx1)
    nudged = acc + np.where(acc > 0, 1 << 19, -(1 << 19))
    _store(np.where(nudged < 0, -((-nudged) >> 20), nudged >> 20), outputs[0])


def eval_bilinear_xnn(rec: QBilinearRecord, inputs, outputs) -> None:
    """DEFAULT: XNNPACK's ibilinear integer blend (11-bit weights)."""
    q00, q01, q10, q11 = _corners(rec, inputs[0])
    ax, ay = rec.wx[1], rec.wy[1]
    t = (q00.astype(np.int64) << 11) + (q01.astype(np.int64) - q00) * ax
    b = (q10.astype(np.int64) << 11) + (q11.astype(np.int64) - q10) * ax
    _store(((t << 11) + (b - t) * ay + (1 << 21)) >> 22, outputs[0])


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
    record = NearestRecord(rows=_nearest_axis(h, oh, align, half),
                           cols=_nearest_axis(w, ow, align, half),
                           work=scratch(ctx, (n, oh, w, c), x.dtype))
    return (OutputSpec(out_shape, x.dtype),), record


def eval_nearest(rec: NearestRecord, inputs, outputs) -> None:
    np.take(inputs[0], rec.rows, axis=1, out=rec.work, mode="clip")
    np.take(rec.work, rec.cols, axis=2, out=outputs[0], mode="clip")


def _version(*modes: str):
    """op_version.cc, RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR: int16 4; any of ``modes``
    (options) set 3; int8 2."""
    def version(sig: OpSignature) -> int:
        if sig.input(0).type == T.INT16:
            return 4
        if any(sig.option(mode, False) for mode in modes):
            return 3
        return 2 if sig.input(0).type == T.INT8 else 1
    return version


_BILINEAR_QUANTIZED = Kernel(prepare_bilinear_quantized, run_chosen)

OPS = (
    OpDef("RESIZE_BILINEAR", shape_operands=(1,),
          float=Kernel(prepare_bilinear, eval_bilinear),
          integer=_BILINEAR_QUANTIZED, int16=_BILINEAR_QUANTIZED,  # one kernel serves both
          quant=QuantRule.SAME_AS_INPUT,
          per_sample=True,
          # align_corners alone does not raise the bilinear version
          version=_version("half_pixel_centers")),
    OpDef("RESIZE_NEAREST_NEIGHBOR", shape_operands=(1,),
          float=Kernel(prepare_nearest, eval_nearest),
          integer=TYPE_GENERIC, int16=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT,
          per_sample=True,
          exact=True,
          version=_version("half_pixel_centers", "align_corners")),
)
