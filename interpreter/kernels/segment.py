"""Segment reductions: SEGMENT_SUM and UNSORTED_SEGMENT_SUM / _MAX / _MIN / _PROD.

Both reduce the rows of ``data`` that share a segment id into one output row. They match
tensorflow/lite/kernels/segment_sum.cc and unsorted_segment.cc (reference_ops::SegmentSum
and UnsortedSegmentRef):

* data: float32 or int32 only (LiteRT has no int8 kernels: the quantizer keeps these ops
  float); segment ids: int32.
* SEGMENT_SUM: ids are a vector as long as data's first dimension, start at 0 and step by
  0 or 1 (LiteRT checks ``current_segment_id != 0`` and ``delta == 0 || delta == 1``: no
  gaps, no unsorted ids). The output has last id + 1 rows. LiteRT registers it in its
  default kernels only (BUILTIN_REF lacks it).
* UNSORTED_SEGMENT_*: ids have the shape of data's leading dimensions; num_segments is an
  int32 scalar or [1] >= 0, every id must be below it, and negative ids drop their row.
  The output is [num_segments] + data.shape[ids rank:]; segments no row reaches hold the
  reduction's identity: 0 (sum), 1 (prod), the type's lowest (max) or highest (min)
  value -- LiteRT's numeric_limits::lowest / max, e.g. -FLT_MAX, not -inf. Its element
  count must fit an int ("Output element count overflows int").

Rows are reduced in index order (np.add.at and friends apply them one by one, as LiteRT's
loops do), so float sums and products are exactly LiteRT's. Output shapes that depend on
computed ids or counts are dynamic outputs (kernels/base.py); their size is checked
against the per-tensor limit before anything is allocated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from edgelite.errors import ShapeError
from ..loader.model import MAX_TENSOR_BYTES
from .base import Kernel, OpContext, OutputSpec, num_elements
from .opdef import OpDef
from edgelite.names import quoted

DATA = (np.float32, np.int32)
INT_MAX = 2**31 - 1


@dataclass(frozen=True)
class SegmentRecord:
    reduce: Callable  # np.add.at, np.maximum.at, ...
    identity: str  # "zero", "one", "lowest", "highest"
    inner: tuple[int, ...]  # data.shape[ids rank:]
    num_segments: int | None  # constant count (UNSORTED_*), else read at invoke
    where: str


def _fill(identity: str, dtype: np.dtype):
    if identity in ("zero", "one"):
        return 0 if identity == "zero" else 1
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    return info.min if identity == "lowest" else info.max


def _checked_rows(rec: SegmentRecord, rows: int, dtype: np.dtype) -> None:
    elements = rows * num_elements(rec.inner)
    if elements > INT_MAX or elements * dtype.itemsize > MAX_TENSOR_BYTES:
        raise ShapeError(f"{rec.where}: {rows} segments of shape {list(rec.inner)} would "
                         f"make an output of {elements} elements, over the limit "
                         f"(int elements, {MAX_TENSOR_BYTES} bytes); check the segment ids")


def _reduce(rec: SegmentRecord, data, ids, out) -> None:
    out.fill(_fill(rec.identity, out.dtype))
    keep = ids >= 0
    rows = data.reshape((ids.size,) + rec.inner)
    flat = ids.reshape(-1)
    if not keep.all():
        rows, flat = rows[keep.reshape(-1)], flat[keep.reshape(-1)]
    rec.reduce(out, flat, rows)


def _prepare(ctx: OpContext, reduce: Callable, identity: str, unsorted: bool):
    ctx.check_arity(3 if unsorted else 2, 3 if unsorted else 2)
    data, ids = ctx.input(0), ctx.input(1)
    ctx.require_dtype(data, DATA, "data")
    ctx.require_dtype(ids, (np.int32,), "segment ids")
    lead = ids.shape if unsorted else ids.shape[:1]
    if (not unsorted and ids.rank != 1) or tuple(data.shape[:len(lead)]) != tuple(lead) or \
            data.rank < len(lead):
        need = "data's leading dimensions" if unsorted else "a vector as long as data's first"
        raise ctx.shape_error(f"segment ids {quoted(ids.name)} of shape {list(ids.shape)} "
                              f"must have {need} dimension(s) (data {list(data.shape)})")
    inner = tuple(data.shape[len(lead):]) if unsorted else tuple(data.shape[1:])
    count = None
    if unsorted:
        n = ctx.input(2)
        ctx.require_dtype(n, (np.int32,), "num_segments")
        if n.shape not in ((), (1,)):
            raise ctx.shape_error(f"num_segments {quoted(n.name)} must be a scalar or [1], "
                                  f"has shape {list(n.shape)}")
        if n.data is not None:
            count = int(np.asarray(n.data).reshape(-1)[0])
    rec = SegmentRecord(reduce, identity, inner, count, ctx.describe())
    if count is None:
        return (OutputSpec((-1,) + inner, data.dtype, dynamic=True),), rec
    _check_count(rec, count)
    _checked_rows(rec, count, data.dtype)
    if ids.data is not None:
        _check_ids(rec, np.asarray(ids.data), count)
    return (OutputSpec((count,) + inner, data.dtype),), rec


def _check_count(rec: SegmentRecord, count: int) -> None:
    if count < 0:
        raise ShapeError(f"{rec.where}: num_segments is {count}; it must be >= 0")


def _check_ids(rec: SegmentRecord, ids: np.ndarray, count: int) -> None:
    if ids.size and int(ids.max()) >= count:
        raise ShapeError(f"{rec.where}: segment id {int(ids.max())} is not below "
                         f"num_segments {count}")


# --------------------------------------------------------------------------- UNSORTED_*


def _unsorted(reduce: Callable, identity: str):
    def prepare(ctx: OpContext):
        return _prepare(ctx, reduce, identity, unsorted=True)
    return prepare


def eval_unsorted(rec: SegmentRecord, inputs, outputs) -> None:
    data, ids = inputs[0], inputs[1]
    count = rec.num_segments
    if count is None:  # a dynamic output: num_segments is read now
        count = int(inputs[2].reshape(-1)[0])
        _check_count(rec, count)
        _checked_rows(rec, count, data.dtype)
        _check_ids(rec, ids, count)
        outputs[0] = np.empty((count,) + rec.inner, data.dtype)
    else:
        _check_ids(rec, ids, count)
    _reduce(rec, data, ids, outputs[0])


# --------------------------------------------------------------------------- SEGMENT_SUM


def prepare_segment_sum(ctx: OpContext):
    """Always a dynamic output (LiteRT sizes it at prepare only when both inputs are
    constant; the converter folds that case)."""
    return _prepare(ctx, np.add.at, "zero", unsorted=False)


def eval_segment_sum(rec: SegmentRecord, inputs, outputs: list) -> None:
    data, ids = inputs[0], inputs[1]
    if ids.size:
        if int(ids[0]) != 0:
            raise ShapeError(f"{rec.where}: the first segment id is {int(ids[0])}; "
                             "SEGMENT_SUM's ids must start at 0")
        steps = np.diff(ids.astype(np.int64))
        if steps.size and (steps.min() < 0 or steps.max() > 1):
            raise ShapeError(f"{rec.where}: segment ids must be sorted without gaps (each "
                             "one equal to or 1 more than the one before)")
    rows = int(ids[-1]) + 1 if ids.size else 0
    out = np.empty((rows,) + rec.inner, data.dtype)
    _reduce(rec, data, ids, out)
    outputs[0] = out


OPS = (
    # float32 / int32 only in LiteRT: the quantizer keeps them float (FLOAT_ONLY).
    OpDef("SEGMENT_SUM", float=Kernel(prepare_segment_sum, eval_segment_sum)),
    OpDef("UNSORTED_SEGMENT_SUM", float=Kernel(_unsorted(np.add.at, "zero"), eval_unsorted)),
    OpDef("UNSORTED_SEGMENT_PROD",
          float=Kernel(_unsorted(np.multiply.at, "one"), eval_unsorted)),
    OpDef("UNSORTED_SEGMENT_MAX",
          float=Kernel(_unsorted(np.maximum.at, "lowest"), eval_unsorted)),
    OpDef("UNSORTED_SEGMENT_MIN",
          float=Kernel(_unsorted(np.minimum.at, "highest"), eval_unsorted)),
)
