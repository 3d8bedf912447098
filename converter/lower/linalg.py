"""tf.linalg band ops: MatrixDiag / MatrixDiagPart / MatrixSetDiag (v1, V2, V3) and
MatrixBandPart.

TFLite has builtins for the two simplest cases only -- MATRIX_DIAG (a vector on the main
diagonal of a square zero matrix) and MATRIX_SET_DIAG (replace the main diagonal) -- and
those are what TF's converter writes; every other case (an offset or a band of diagonals
k, a rectangular output, a padding value, MatrixDiagPart) is Flex there. Here the other
cases become two or three builtins built on constant index tables worked out at
conversion time from the static shapes:

* a band layout maps each matrix element (m, n), d = n - m, lo <= d <= hi, to the
  element of the stored diagonals [..., hi - d, index] (array_ops.cc "MatrixDiagV3":
  index = n - max(d, 0) + offset, offset = max_diag_len - diag_len(d) for a diagonal
  aligned right by `align`, else 0);
* MatrixDiag: GATHER of the diagonals (flattened) by that table, then SELECT_V2 of a
  constant band mask between it and the padding value;
* MatrixSetDiag: the same GATHER, then SELECT_V2 between it and the input;
* MatrixDiagPart: RESHAPE the matrices flat, GATHER their diagonal elements, SELECT_V2
  the padding into the slots past a diagonal's end;
* MatrixBandPart: SELECT_V2 of a constant band mask between the input and 0 (computed
  band limits build the mask from comparisons).

V2 ops lay out diagonals LEFT_LEFT; V3 ops take `align` (default RIGHT_LEFT); v1 ops are
k = 0 with the matrix size from the diagonal.
"""

from __future__ import annotations

import numpy as np

from edgelite.errors import ShapeError
from .context import LowerCtx, attr_str, fail
from .einsum import static_shape
from .spec import INDEX, Attr, In, Lowering, scalar_input, spec

_D = np.dtype
# What LiteRT's GATHER and SELECT_V2 both move (gather.cc, select.cc).
MOVABLE = frozenset(map(_D, (np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64,
                             np.bool_)))
# What MATRIX_DIAG / MATRIX_SET_DIAG take (matrix_diag.cc: other types are read as float).
_DIAG_BUILTIN = frozenset(map(_D, (np.float32, np.int8, np.uint8, np.int16, np.int32,
                                   np.int64)))
_ALIGNS = ("LEFT_RIGHT", "RIGHT_LEFT", "LEFT_LEFT", "RIGHT_RIGHT")
_I32 = _D(np.int32)
_BOOL = _D(np.bool_)


# -- index tables (numpy, at conversion time) --------------------------------------------------
def _diag_len(d: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Length of diagonal d of a rows x cols matrix."""
    return np.minimum(rows + np.minimum(0, d), cols - np.maximum(0, d))


def _offset(d: np.ndarray, align: str, rows: int, cols: int, width: int) -> np.ndarray:
    """Where diagonal d starts in its row of `width` slots: right-aligned ones are pushed
    to the end (superdiagonals d >= 0 follow align's first word, subdiagonals d <= 0 its
    second)."""
    sup, sub = align.split("_")
    right = ((d >= 0) & (sup == "RIGHT")) | ((d <= 0) & (sub == "RIGHT"))
    return np.where(right, width - _diag_len(d, rows, cols), 0)


def band_table(rows: int, cols: int, lo: int, hi: int, width: int, align: str):
    """For each element of a rows x cols matrix: its slot in the flattened diagonals
    [hi - lo + 1, width] (int32, 0 off the band) and whether it lies on the band."""
    m, n = np.arange(rows)[:, None], np.arange(cols)[None, :]
    d = n - m
    on = (lo <= d) & (d <= hi)
    slot = (hi - d) * width + n - np.maximum(d, 0) + _offset(d, align, rows, cols, width)
    return np.where(on, slot, 0).astype(np.int32), on


def part_table(rows: int, cols: int, lo: int, hi: int, align: str):
    """For each slot of the diagonals [hi - lo + 1, max_diag_len]: the flat position of
    its matrix element (int32, 0 for padding) and whether it holds one."""
    width = int(min(rows + min(hi, 0), cols - max(lo, 0)))
    d = np.arange(hi, lo - 1, -1)[:, None]
    p = np.arange(width)[None, :] - _offset(d, align, rows, cols, width)
    valid = (p >= 0) & (p < _diag_len(d, rows, cols))
    flat = (p + np.maximum(-d, 0)) * cols + p + np.maximum(d, 0)
    return np.where(valid, flat, 0).astype(np.int32), valid


# -- operands ------------------------------------------------------------------------------
def _k(ctx: LowerCtx, node, i: int, rows: int | None = None, cols: int | None = None):
    """The diagonal offsets k: one int, or [lo, hi] with lo <= hi, inside the matrix."""
    k = np.asarray(ctx.const_input(node, i, "k")).reshape(-1)
    if k.size not in (1, 2) or k[0] > k[-1]:
        raise fail(ShapeError, node, f"k = {k.tolist()[:4]} must be one offset or a pair "
                   "[lower, upper] with lower <= upper")
    lo, hi = int(k[0]), int(k[-1])
    if rows is not None and not (-rows < lo and hi < cols) and rows * cols:
        raise fail(ShapeError, node, f"k = [{lo}, {hi}] lies outside the {rows} x {cols} "
                   f"matrices (diagonals run from {1 - rows} to {cols - 1})")
    return lo, hi


def _align(node) -> str:
    """V3 ops name the alignment (default RIGHT_LEFT); V2 ops use LEFT_LEFT."""
    return attr_str(node, "align", "RIGHT_LEFT") if node.op.endswith("V3") else "LEFT_LEFT"


def _matrices(ctx: LowerCtx, node, t, what: str) -> tuple[int, ...]:
    shape = static_shape(ctx, node, t)
    if len(shape) < 2:
        raise fail(ShapeError, node, f"the {what} has shape {list(shape)}; it needs at least "
                   "two dimensions (a batch of matrices)")
    return shape


def _scalar(ctx: LowerCtx, node, i: int, what: str) -> int:
    return int(np.asarray(ctx.const_input(node, i, what)).reshape(-1)[0])


def _padding(ctx: LowerCtx, node, i: int | None, dtype):
    """The padding value operand, or a zero of the data's type."""
    if i is None:
        return ctx.const(node, "padding", np.zeros((), dtype))
    t = ctx.input(node, i)
    if t.is_const:
        return ctx.const(node, "padding", np.asarray(t.data).reshape(()).astype(dtype))
    return t


def _flatten(ctx: LowerCtx, node, t, shape: tuple[int, ...], keep: int, suffix: str):
    """t with its last len(shape) - keep dimensions merged into one."""
    if len(shape) - keep == 1:
        return t
    merged = list(shape[:keep]) + [int(np.prod(shape[keep:]))]
    return ctx.step(node, "RESHAPE", [t, ctx.const(node, f"{suffix}_shape",
                                                   np.array(merged, np.int32))],
                    suffix, t.dtype, dict(new_shape=merged))


def _gather_select(ctx: LowerCtx, node, source, rank: int, table, mask, other) -> None:
    """node's output: GATHER(source, table) along source's last axis where `mask`, `other`
    elsewhere (no SELECT_V2 when the mask is all true)."""
    options = dict(axis=rank - 1, batch_dims=0)
    indices = ctx.const(node, "indices", table)
    if mask.all():
        ctx.emit("GATHER", node, [source, indices], options, dtype=source.dtype)
        return
    picked = ctx.step(node, "GATHER", [source, indices], "gathered", source.dtype, options)
    ctx.emit("SELECT_V2", node, [ctx.const(node, "mask", mask), picked, other],
             dtype=source.dtype)


# -- rules -----------------------------------------------------------------------------------
def _diag_size(node, width: int, lo: int, hi: int, rows: int, cols: int) -> tuple[int, int]:
    """num_rows / num_cols as TF works them out (-1: the smallest that fits), checked."""
    min_rows, min_cols = width - min(hi, 0), width + max(lo, 0)
    if rows == -1 and cols == -1:
        rows = cols = max(min_rows, min_cols)
    rows = min_rows if rows == -1 else rows
    cols = min_cols if cols == -1 else cols
    if rows < min_rows or cols < min_cols or (rows != min_rows and cols != min_cols):
        raise fail(ShapeError, node, f"num_rows {rows} and num_cols {cols} do not fit "
                   f"diagonals of length {width} at k = [{lo}, {hi}]: one must be the "
                   f"smallest that fits ({min_rows} rows, {min_cols} columns) and neither "
                   "smaller")
    return rows, cols


def matrix_diag(ctx: LowerCtx, node) -> None:
    diag = ctx.input(node, 0)
    v1 = node.op == "MatrixDiag"
    lo, hi = (0, 0) if v1 else _k(ctx, node, 1)
    shape = static_shape(ctx, node, diag)
    if len(shape) < 1 + (lo < hi) or (lo < hi and shape[-2] != hi - lo + 1):
        takes = f"[..., {hi - lo + 1}, width]" if lo < hi else "at least one dimension"
        raise fail(ShapeError, node, f"the diagonal has shape {list(shape)}; k = [{lo}, "
                   f"{hi}] takes {takes}")
    width = shape[-1]
    sizes = [-1, -1] if v1 else [_scalar(ctx, node, 2, "num_rows"),
                                 _scalar(ctx, node, 3, "num_cols")]
    rows, cols = _diag_size(node, width, lo, hi, *sizes)
    pad = _padding(ctx, node, None if v1 else 4, diag.dtype)
    if (lo, hi) == (0, 0) and rows == cols == width and diag.dtype in _DIAG_BUILTIN \
            and pad.is_const and not pad.data.any():
        ctx.emit("MATRIX_DIAG", node, [diag])
        return
    table, on = band_table(rows, cols, lo, hi, width, _align(node))
    if not on.any() or width == 0:
        raise fail(ShapeError, node, f"no element of the {rows} x {cols} output lies on a "
                   "diagonal: the output would be padding only")
    batch = len(shape) - 1 - (lo < hi)
    flat = _flatten(ctx, node, diag, shape, batch, "diagonals")
    _gather_select(ctx, node, flat, batch + 1, table, on, pad)


def matrix_set_diag(ctx: LowerCtx, node) -> None:
    x, diag = ctx.input(node, 0), ctx.input(node, 1)
    shape = _matrices(ctx, node, x, "input")
    rows, cols = shape[-2:]
    lo, hi = (0, 0) if node.op == "MatrixSetDiag" else _k(ctx, node, 2, rows, cols)
    width = max(0, min(rows + min(hi, 0), cols - max(lo, 0)))
    want = shape[:-2] + ((hi - lo + 1,) if lo < hi else ()) + (width,)
    dshape = static_shape(ctx, node, diag)
    if dshape != want:
        raise fail(ShapeError, node, f"the diagonal has shape {list(dshape)}; the input "
                   f"{list(shape)} at k = [{lo}, {hi}] takes {list(want)}")
    if (lo, hi) == (0, 0) and x.dtype in _DIAG_BUILTIN:
        ctx.emit("MATRIX_SET_DIAG", node, [x, diag])
        return
    table, on = band_table(rows, cols, lo, hi, width, _align(node))
    if not on.any():  # an empty matrix: nothing to set
        ctx.alias(node, x)
        return
    flat = _flatten(ctx, node, diag, dshape, len(shape) - 2, "diagonals")
    _gather_select(ctx, node, flat, len(shape) - 1, table, on, x)


def matrix_diag_part(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    shape = _matrices(ctx, node, x, "input")
    rows, cols = shape[-2:]
    lo, hi = (0, 0) if node.op == "MatrixDiagPart" else _k(ctx, node, 1, rows, cols)
    table, valid = part_table(rows, cols, lo, hi, _align(node))
    if not table.size:
        raise fail(ShapeError, node, f"the input {list(shape)} has empty matrices; there is "
                   "no diagonal to take")
    if lo == hi:
        table, valid = table[0], valid[0]
    flat = _flatten(ctx, node, x, shape, len(shape) - 2, "flat")
    pad = _padding(ctx, node, None if node.op == "MatrixDiagPart" else 2, x.dtype)
    _gather_select(ctx, node, flat, len(shape) - 1, table, valid, pad)


def _band_side(ctx: LowerCtx, node, i: int, dist: np.ndarray, limit: int, what: str):
    """Where the band's num_lower (num_upper) keeps elements: dist <= bound or bound < 0.
    A numpy mask for a constant bound, else a bool tensor computed from comparisons."""
    t = ctx.input(node, i)
    if t.is_const:
        bound = int(np.asarray(t.data).reshape(-1)[0])
        if bound > limit:
            raise fail(ShapeError, node, f"{what} = {bound} must be negative or at most "
                       f"{limit} (the matrices' {'rows' if i == 1 else 'columns'})")
        return (bound < 0) | (dist <= bound)
    within = ctx.step(node, "GREATER_EQUAL", [t, ctx.const(node, f"{what}_dist",
                                                           dist.astype(t.dtype))],
                      f"{what}_within", _BOOL)
    zero = ctx.const(node, f"{what}_zero", np.zeros((), t.dtype))
    negative = ctx.step(node, "LESS", [t, zero], f"{what}_all", _BOOL)
    return ctx.step(node, "LOGICAL_OR", [within, negative], f"{what}_keep", _BOOL)


def matrix_band_part(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    shape = _matrices(ctx, node, x, "input")
    rows, cols = shape[-2:]
    m, n = np.arange(rows)[:, None], np.arange(cols)[None, :]
    lower = _band_side(ctx, node, 1, m - n, rows, "num_lower")
    upper = _band_side(ctx, node, 2, n - m, cols, "num_upper")
    if isinstance(lower, np.ndarray) and isinstance(upper, np.ndarray):
        keep = lower & upper
        if keep.all():
            ctx.alias(node, x)
            return
        keep = ctx.const(node, "mask", keep)
    else:
        keep = ctx.step(node, "LOGICAL_AND", [_as_tensor(ctx, node, lower, "lower_mask"),
                                              _as_tensor(ctx, node, upper, "upper_mask")],
                        "mask", _BOOL)
    ctx.emit("SELECT_V2", node, [keep, x, ctx.const(node, "zero", np.zeros((), x.dtype))],
             dtype=x.dtype)


def _as_tensor(ctx: LowerCtx, node, mask, suffix: str):
    return ctx.const(node, suffix, mask) if isinstance(mask, np.ndarray) else mask


# -- specs (TF op definitions: array_ops.cc) ---------------------------------------------------
_I32_SET = frozenset({_I32})
_DATA = In("the input", MOVABLE)
_DIAGONAL = In("the diagonal", MOVABLE)
_K = In("k", _I32_SET, None, const=True, ranks=(0, 1))
_PAD = In("the padding value", MOVABLE, scalar=True)
_ALIGN = (Attr("align", "s", choices=_ALIGNS),)
_SIZE = (scalar_input("num_rows", _I32_SET), scalar_input("num_cols", _I32_SET))
_BAND = In("the band limit", INDEX, "Tindex", scalar=True)

RULES = {
    "MatrixDiag": Lowering(matrix_diag, spec(_DIAGONAL)),
    "MatrixDiagV2": Lowering(matrix_diag, spec(_DIAGONAL, _K, *_SIZE, _PAD)),
    "MatrixDiagV3": Lowering(matrix_diag, spec(_DIAGONAL, _K, *_SIZE, _PAD, attrs=_ALIGN)),
    "MatrixSetDiag": Lowering(matrix_set_diag, spec(_DATA, _DIAGONAL)),
    "MatrixSetDiagV2": Lowering(matrix_set_diag, spec(_DATA, _DIAGONAL, _K)),
    "MatrixSetDiagV3": Lowering(matrix_set_diag, spec(_DATA, _DIAGONAL, _K, attrs=_ALIGN)),
    "MatrixDiagPart": Lowering(matrix_diag_part, spec(_DATA)),
    "MatrixDiagPartV2": Lowering(matrix_diag_part, spec(_DATA, _K, _PAD)),
    "MatrixDiagPartV3": Lowering(matrix_diag_part, spec(_DATA, _K, _PAD, attrs=_ALIGN)),
    "MatrixBandPart": Lowering(matrix_band_part, spec(_DATA, _BAND, _BAND)),
}
