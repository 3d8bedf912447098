"""CUMSUM: the running sum along one axis.

Matches tensorflow/lite/kernels/cumsum.cc, which calls optimized_ops::CumSum
(tensorflow/lite/kernels/internal/optimized/optimized_ops.h): an Eigen scan over the
input viewed as (outer, axis, inner). Both LiteRT kernel sets run that one kernel.

* input 0: float32, int32 or int64 (LiteRT has no quantized CUMSUM); the output has its
  type and shape;
* input 1: the axis, int32, one element; negative counts from the end. LiteRT reads it on
  every invoke, so it may be computed: a constant axis is checked once in prepare(), a
  computed one on every invoke();
* CumsumOptions.exclusive: element i sums the elements before i (the first is 0);
  CumsumOptions.reverse: the sums run from the end of the axis.

The sums are sequential in the element type, as Eigen's scan does them (SumReducer:
``accum += x`` one element at a time, starting from 0): float32 rounds after every
addition and integers wrap. np.cumsum with dtype=x.dtype accumulates the same way
(np.add.accumulate is sequential, never pairwise). Eigen starts from +0.0, so its sums are
never -0.0 where numpy's start from x[0] and may be: adding +0.0 to every float output
turns -0.0 into +0.0 and changes nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.errors import ShapeError
from .base import Kernel, OpContext, OutputSpec, num_elements
from .opdef import OpDef
from edgelite.names import quoted

DTYPES = (np.float32, np.int32, np.int64)


@dataclass(frozen=True)
class CumsumRecord:
    rank: int
    axis: int | None  # a constant axis, normalized; None: read input 1 on every invoke
    exclusive: bool
    reverse: bool
    where: str  # the op, for errors raised by invoke()


def _normalize(axis: int, rank: int, where: str) -> int:
    if not -rank <= axis < rank:
        raise ShapeError(f"{where}: axis {axis} is out of range for a rank-{rank} input "
                         f"(valid: {-rank} to {rank - 1})")
    return axis % rank


def prepare(ctx: OpContext):
    ctx.check_arity(2, 2)
    x, axis_t = ctx.input(0), ctx.input(1)
    ctx.require_dtype(x, DTYPES, "input")
    ctx.require_dtype(axis_t, (np.int32,), "axis")
    if num_elements(axis_t.shape) != 1:
        raise ctx.shape_error(f"axis {quoted(axis_t.name)} must hold one value, has shape "
                              f"{list(axis_t.shape)}")
    if x.rank < 1:
        raise ctx.shape_error(f"input {quoted(x.name)} must have at least one dimension")
    axis = None
    if axis_t.data is not None:
        axis = _normalize(int(axis_t.data.reshape(-1)[0]), x.rank, ctx.describe())
    record = CumsumRecord(rank=x.rank, axis=axis,
                          exclusive=bool(ctx.option("exclusive", False)),
                          reverse=bool(ctx.option("reverse", False)), where=ctx.describe())
    return (OutputSpec(x.shape, x.dtype),), record


def eval(rec: CumsumRecord, inputs, outputs) -> None:
    x, out = inputs[0], outputs[0]
    axis = rec.axis
    if axis is None:
        axis = _normalize(int(inputs[1].reshape(-1)[0]), rec.rank, rec.where)
    n = x.shape[axis]
    view = (num_elements(x.shape[:axis]), n, num_elements(x.shape[axis + 1:]))
    src, dst = x.reshape(view), out.reshape(view)
    if rec.reverse:
        src, dst = src[:, ::-1], dst[:, ::-1]
    if rec.exclusive:
        dst[:, :1] = 0
        src, dst = src[:, :n - 1], dst[:, 1:]
    np.cumsum(src, axis=1, dtype=x.dtype, out=dst)
    if x.dtype.kind == "f":
        np.add(out, 0.0, out=out)  # -0.0 -> +0.0, as Eigen's sums that start from +0.0


OPS = (
    # No integer kernel in LiteRT: the quantizer keeps it float. Input 1 holds the axis:
    # samples stay apart when it is not dim 0 (reduction; a computed axis is never split).
    OpDef("CUMSUM", float=Kernel(prepare, eval), reduction=True),
)
