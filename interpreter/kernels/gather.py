"""GATHER along one axis, with batch_dims (any element type; int32 / int64 indices).

Matches tensorflow/lite/kernels/gather.cc (Prepare / Gather) and reference_ops::Gather
(tensorflow/lite/kernels/internal/reference/gather.h):

* GatherOptions.axis (negative counts from the end of the params) and batch_dims
  (negative counts from the end of the indices); 0 <= batch_dims <= axis, and the first
  batch_dims dimensions of params and indices are equal;
* output shape = params[:axis] + indices[batch_dims:] + params[axis + 1:];
* every index must lie in [0, params.shape[axis]); TFLite fails the invoke otherwise
  (there is no clamping and no negative indexing). Constant indices are checked once in
  prepare(), computed ones on every invoke() (so np.take may skip its own buffered
  check: mode="clip" never clips a valid index).

eval() views params as (B, outer, axis, inner) and the indices as (B, M), with B the
product of the batch dimensions: one np.take for B = 1, one fancy-indexed copy otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.errors import ShapeError
from .base import Kernel, OpContext, OutputSpec, normalize_axis, num_elements
from .opdef import TYPE_GENERIC, OpDef, QuantRule
from .versions import OpSignature, T
from edgelite.names import quoted


@dataclass(frozen=True)
class GatherRecord:
    params_view: tuple[int, int, int, int]  # (B, outer, axis size, inner)
    indices_view: tuple[int, int]  # (B, M)
    out_view: tuple[int, int, int, int]  # (B, outer, M, inner)
    batch_index: np.ndarray | None  # (B, 1) arange for batch_dims > 0
    check: bool  # indices are computed: check their range on every invoke
    where: str  # the op, for errors raised by invoke()


def _check_range(indices: np.ndarray, limit: int, where: str) -> None:
    if indices.size and (indices.min() < 0 or indices.max() >= limit):
        raise ShapeError(
            f"{where}: gather indices must lie in [0, {limit}); got values from "
            f"{int(indices.min())} to {int(indices.max())}"
        )


def prepare(ctx: OpContext):
    ctx.check_arity(2, 2)
    x, idx = ctx.input(0), ctx.input(1)
    ctx.require_dtype(idx, (np.int16, np.int32, np.int64), "indices")
    if x.dtype.kind not in "biufO":  # O: STRING params (gather.cc, GatherStrings)
        raise ctx.unsupported(f"params {quoted(x.name)} has type {x.dtype.name}")
    if x.rank < 1:
        raise ctx.shape_error(f"params {quoted(x.name)} must have at least one dimension")
    axis = normalize_axis(ctx, int(ctx.option("axis", 0)), x.rank)
    batch_dims = int(ctx.option("batch_dims", 0))
    if batch_dims < 0:
        batch_dims += idx.rank
    if not 0 <= batch_dims <= min(axis, idx.rank):
        raise ctx.shape_error(
            f"batch_dims {ctx.option('batch_dims', 0)} must lie in [0, axis={axis}] and fit "
            f"the rank-{idx.rank} indices"
        )
    if x.shape[:batch_dims] != idx.shape[:batch_dims]:
        raise ctx.shape_error(
            f"the first {batch_dims} dimension(s) of params {list(x.shape)} and indices "
            f"{list(idx.shape)} must be equal (batch_dims)"
        )
    shape = x.shape[:axis] + idx.shape[batch_dims:] + x.shape[axis + 1:]
    b = num_elements(x.shape[:batch_dims])
    outer = num_elements(x.shape[batch_dims:axis])
    inner = num_elements(x.shape[axis + 1:])
    m = num_elements(idx.shape[batch_dims:])
    if idx.data is not None:
        _check_range(idx.data, x.shape[axis], ctx.describe())
    record = GatherRecord(params_view=(b, outer, x.shape[axis], inner), indices_view=(b, m),
                          out_view=(b, outer, m, inner),
                          batch_index=np.arange(b).reshape(b, 1) if batch_dims else None,
                          check=idx.data is None, where=ctx.describe())
    return (OutputSpec(shape, x.dtype),), record


def eval(rec: GatherRecord, inputs, outputs) -> None:
    x = inputs[0].reshape(rec.params_view)
    idx = inputs[1].reshape(rec.indices_view)
    if rec.check:
        _check_range(idx, rec.params_view[2], rec.where)
    out = outputs[0].reshape(rec.out_view)
    if rec.batch_index is None:
        np.take(x[0], idx[0], axis=1, out=out[0], mode="clip")  # in range: checked above
    else:
        # Advanced indices split by a slice go first: (B, M, outer, inner).
        np.copyto(out, x[rec.batch_index, :, idx, :].transpose(0, 2, 1, 3))


def version(sig: OpSignature) -> int:
    """op_version.cc, GATHER: int4 params 7; int16 indices 6; batch_dims 5; int16 params 4;
    bool 3; int8 2."""
    params = sig.input(0).type
    if params == T.INT4:
        return 7
    if sig.input(1).type == T.INT16:
        return 6
    if sig.option("batch_dims"):
        return 5
    return {T.INT16: 4, T.BOOL: 3, T.INT8: 2}.get(params, 1)


OPS = (
    # Not per sample: along axis 0 the indices pick samples.
    OpDef("GATHER", strings=True, int16=TYPE_GENERIC,
          float=Kernel(prepare, eval), integer=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT, version=version),
)
