"""GATHER_ND: slices of the params picked by index tuples (the indices' last axis).

Matches tensorflow/lite/kernels/gather_nd.cc (Prepare / EvalGatherNd) and
reference_ops::GatherNd as LiteRT runs them:

* params: float32, int8, uint8, int16, int32, int64 or bool; indices int16, int32 or int64;
* nd = indices.shape[-1] lies in [1, params rank] (0 is accepted by Prepare, but every
  invoke then fails "out of bounds" -- measured against LiteRT);
* output shape = indices.shape[:-1] + params.shape[nd:];
* every coordinate must lie in [0, dim): a negative one fails the invoke
  (``indices_has_only_positive_elements``), a too large one too ("gather_nd index out of
  bounds"); there is no clamping. Empty params take only empty indices.

Quantized int8 / uint8 params are moved unchanged: the output keeps their parameters.
eval() folds each index tuple to a row of the params viewed as (prod(dims[:nd]), slice).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.errors import ShapeError
from .base import Kernel, OpContext, OutputSpec, num_elements
from .opdef import TYPE_GENERIC, OpDef, QuantRule
from .versions import OpSignature, T
from edgelite.names import quoted

PARAMS = (np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_)
INDICES = (np.int16, np.int32, np.int64)


@dataclass(frozen=True)
class GatherNdRecord:
    dims: tuple[int, ...]  # params.shape[:nd]: the range of each coordinate
    strides: np.ndarray  # row strides of those dims (int64), for the flat row number
    rows_view: tuple[int, int]  # params as (rows, slice size)
    out_view: tuple[int, int]  # output as (index tuples, slice size)
    where: str


def check_coordinates(idx: np.ndarray, dims: tuple[int, ...], where: str) -> None:
    """LiteRT's two invoke errors: a negative coordinate, then one past its dimension."""
    if not idx.size:
        return
    if idx.min() < 0:
        raise ShapeError(f"{where}: the indices hold a negative coordinate "
                         f"({int(idx.min())}); GATHER_ND takes coordinates in [0, dim) only")
    over = idx >= np.asarray(dims, np.int64)
    if over.any():
        row, col = (int(v[0]) for v in np.nonzero(over.reshape(-1, len(dims))))
        value = int(idx.reshape(-1, len(dims))[row, col])
        raise ShapeError(f"{where}: index tuple {row} has coordinate {value} in dimension "
                         f"{col} of size {dims[col]} (gather_nd index out of bounds)")


def prepare(ctx: OpContext):
    ctx.check_arity(2, 2)
    params, idx = ctx.input(0), ctx.input(1)
    ctx.require_dtype(params, PARAMS, "params")
    ctx.require_dtype(idx, INDICES, "indices")
    if params.rank < 1 or idx.rank < 1:
        raise ctx.shape_error(f"params {list(params.shape)} and indices {list(idx.shape)} "
                              "must each have at least one dimension")
    nd = idx.shape[-1]
    if nd > params.rank:
        raise ctx.shape_error(f"index tuples of length {nd} (indices {quoted(idx.name)}) do "
                              f"not fit the rank-{params.rank} params: the length must lie in "
                              f"[0, {params.rank}]")
    if nd == 0 and num_elements(idx.shape[:-1]):  # LiteRT fails every invoke
        raise ctx.shape_error(f"the indices {quoted(idx.name)} of shape {list(idx.shape)} "
                              "hold index tuples with no coordinates (gather_nd index out "
                              "of bounds)")
    if num_elements(params.shape) == 0 and num_elements(idx.shape) != 0:
        raise ctx.shape_error(f"params {quoted(params.name)} are empty but the indices are "
                              "not: there is nothing to gather")
    dims = tuple(params.shape[:nd])
    strides = np.array([num_elements(dims[k + 1:]) for k in range(nd)], np.int64)
    inner = num_elements(params.shape[nd:])
    rows = num_elements(idx.shape[:-1])
    shape = tuple(idx.shape[:-1]) + tuple(params.shape[nd:])
    where = ctx.describe()
    if idx.data is not None:
        check_coordinates(np.asarray(idx.data, np.int64), dims, where)
    record = GatherNdRecord(dims=dims, strides=strides,
                            rows_view=(num_elements(dims), inner), out_view=(rows, inner),
                            where=where)
    return (OutputSpec(shape, params.dtype),), record


def eval(rec: GatherNdRecord, inputs, outputs) -> None:
    idx = inputs[1].astype(np.int64, copy=False)
    check_coordinates(idx, rec.dims, rec.where)
    rows = idx.reshape(-1, len(rec.dims)) @ rec.strides if rec.dims else \
        np.zeros(0, np.int64)
    np.take(inputs[0].reshape(rec.rows_view), rows, axis=0,
            out=outputs[0].reshape(rec.out_view))


def version(sig: OpSignature) -> int:
    """op_version.cc, GATHER_ND: bool params 5; int16 indices 4; int16 params 3 (string
    params 2)."""
    params = sig.input(0).type
    if params == T.BOOL:
        return 5
    if sig.input(1).type == T.INT16:
        return 4
    return 3 if params == T.INT16 else 1


OPS = (
    # Selects values: quantized params keep their parameters (TFLite's quantization spec:
    # GATHER_ND input and output share scale and zero point).
    OpDef("GATHER_ND", float=Kernel(prepare, eval), integer=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT, exact=True, version=version),
)
