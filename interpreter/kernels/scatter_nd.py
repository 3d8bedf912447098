"""SCATTER_ND: a zero tensor of a given shape with slices of ``updates`` added at index tuples.

Matches tensorflow/lite/kernels/scatter_nd.cc (Prepare, CheckShapes, EvalScatterNd) and
reference_ops::ScatterNd as LiteRT runs them (its only kernel, both kernel sets):

* inputs: indices [..., nd] (int32 only), updates (float32, int8, uint8, int32, int64 or
  bool; int16 and the rest fail Prepare), shape (1-D, the indices' type); the output has
  the updates' type and the given shape;
* CheckShapes: indices and updates rank >= 1; updates = indices.shape[:-1] +
  shape[nd:]. A constant shape is checked in prepare(), a computed one on every invoke
  (the output is then dynamic, as LiteRT's);
* the output is cleared (the stored 0, also for quantized data) and every slice is added
  in order, so duplicate index tuples sum -- in the element type: integers wrap, bool ORs
  (measured against LiteRT); float sums in index order, as the reference loop;
* every coordinate must lie in [0, dim): LiteRT fails the invoke ("scatter_nd index out
  of bounds") for a negative or too large one, checked per coordinate;
* nd = 0 adds every slice to the whole output (measured);
* no operator version rule in op_version.cc (version 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.errors import ShapeError
from edgelite.names import quoted
from .base import Chosen, Kernel, OpContext, OutputSpec, num_elements, run_chosen
from .opdef import OpDef

UPDATES = (np.float32, np.int8, np.uint8, np.int32, np.int64, np.bool_)


@dataclass(frozen=True)
class Layout:
    """Where slices go: the output viewed as (rows, slice size), rows = prod(shape[:nd])."""

    dims: tuple[int, ...]  # shape[:nd]: the range of each coordinate
    strides: np.ndarray  # row strides of those dims (int64)
    rows: int
    slice_size: int
    updates_view: tuple[int, int]  # updates as (index tuples, slice size)
    where: str


@dataclass(frozen=True)
class DynamicRecord:
    """A computed shape: checked, and the output made, on every invoke()."""

    indices_shape: tuple[int, ...]
    updates_shape: tuple[int, ...]
    dtype: np.dtype
    where: str


def _layout(indices_shape, updates_shape, shape, where: str) -> Layout:
    """CheckShapes, raising one ShapeError naming the op; then the flat layout."""
    shape = [int(d) for d in shape]
    nd = indices_shape[-1]
    outer = len(indices_shape) - 1
    want = tuple(indices_shape[:-1]) + tuple(shape[nd:])
    if any(d < 0 for d in shape) or nd > len(shape) or tuple(updates_shape) != want:
        raise ShapeError(f"{where}: indices {list(indices_shape)}, updates "
                         f"{list(updates_shape)} and shape {shape} do not fit: the updates "
                         "must have shape indices.shape[:-1] + shape[nd:] (nd = the "
                         "indices' last dimension) and the shape no negative dimension")
    dims = tuple(shape[:nd])
    strides = np.array([num_elements(dims[k + 1:]) for k in range(nd)], np.int64)
    size = num_elements(shape[nd:])
    return Layout(dims, strides, num_elements(dims), size,
                  (num_elements(indices_shape[:outer]), size), where)


def prepare(ctx: OpContext):
    ctx.check_arity(3, 3)
    indices, updates, shape = ctx.input(0), ctx.input(1), ctx.input(2)
    ctx.require_dtype(indices, (np.int32,), "indices")
    ctx.require_dtype(updates, UPDATES, "updates")
    if shape.dtype != indices.dtype:
        raise ctx.dtype_error(f"shape {quoted(shape.name)} has type {shape.dtype.name}; it "
                              "must have the indices' type (int32)")
    if indices.rank < 1 or updates.rank < 1 or shape.rank != 1:
        raise ctx.shape_error(f"indices {list(indices.shape)} and updates "
                              f"{list(updates.shape)} need at least one dimension and the "
                              f"shape {quoted(shape.name)} {list(shape.shape)} exactly one")
    where = ctx.describe()
    if shape.data is None:
        record = DynamicRecord(indices.shape, updates.shape, updates.dtype, where)
        return (OutputSpec((-1,) * shape.shape[0], updates.dtype, dynamic=True),), \
            Chosen(eval_dynamic, record)
    layout = _layout(indices.shape, updates.shape, shape.data, where)
    if indices.data is not None:
        _rows(layout, indices.data)
    return (OutputSpec(tuple(int(d) for d in shape.data), updates.dtype),), \
        Chosen(eval_static, layout)


def _rows(rec: Layout, indices: np.ndarray) -> np.ndarray:
    """The output row of each index tuple; a coordinate outside [0, dim) fails as in
    LiteRT."""
    if not rec.dims:  # nd = 0: every slice goes to the one row
        return np.zeros(rec.updates_view[0], np.int64)
    idx = indices.reshape(-1, len(rec.dims)).astype(np.int64)
    bad = (idx < 0) | (idx >= np.asarray(rec.dims, np.int64))
    if bad.any():
        row, col = (int(v[0]) for v in np.nonzero(bad))
        raise ShapeError(f"{rec.where}: index tuple {row} has coordinate {int(idx[row, col])} "
                         f"in dimension {col} of size {rec.dims[col]} (scatter_nd index out "
                         "of bounds)")
    return idx @ rec.strides


def _scatter(rec: Layout, indices, updates, out: np.ndarray) -> None:
    rows = _rows(rec, indices)
    view = out.reshape(rec.rows, rec.slice_size)
    view.fill(0)
    np.add.at(view, rows, updates.reshape(rec.updates_view))  # in order, duplicates add


def eval_static(rec: Layout, inputs, outputs) -> None:
    _scatter(rec, inputs[0], inputs[1], outputs[0])


def eval_dynamic(rec: DynamicRecord, inputs, outputs: list) -> None:
    layout = _layout(rec.indices_shape, rec.updates_shape, inputs[2], rec.where)
    out = np.empty(tuple(int(d) for d in inputs[2]), rec.dtype)
    _scatter(layout, inputs[0], inputs[1], out)
    outputs[0] = out


OPS = (
    # Float only for the quantizer: the cleared output holds the stored 0 and duplicates
    # add raw codes, right only for a zero point of 0 (a quantized file runs as in LiteRT).
    # Not per sample: the index tuples pick the rows of dim 0.
    OpDef("SCATTER_ND", float=Kernel(prepare, run_chosen)),
)
