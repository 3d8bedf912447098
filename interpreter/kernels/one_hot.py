"""ONE_HOT: a new axis of size depth, on_value where it equals the index, off_value elsewhere.

Matches tensorflow/lite/kernels/one_hot.cc (Prepare / OneHotComputeImpl):

* input 0: the indices, int32 or int64. LiteRT compares ``static_cast<int>(index) == j``,
  so an int64 index is truncated to its low 32 bits first (2**32 + 1 selects position 1);
  an index outside [0, depth) -- negative too -- selects no position: that row is all
  off_value;
* input 1: depth, int32, one element, >= 0; constant here (it fixes the output shape);
* inputs 2 and 3: on_value and off_value, one element each, of the output's type:
  float32, int32, int64, int8, uint8 or bool. They may be computed (read on every
  invoke). LiteRT's Prepare also accepts int16 but its Eval fails on it: refused here;
* OneHotOptions.axis: where the new axis goes, -1 meaning last; any other value must lie
  in [0, rank(indices)]. Output shape: indices.shape[:axis] + [depth] + indices.shape[axis:].

eval() views the indices as (prefix, suffix) and the output as (prefix, depth, suffix),
fills off_value and writes on_value at (i, index[i, k], k) for every index in range.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Kernel, OpContext, OutputSpec, num_elements
from .opdef import OpDef
from edgelite.names import quoted

VALUE_DTYPES = (np.float32, np.int32, np.int64, np.int8, np.uint8, np.bool_)


@dataclass(frozen=True)
class OneHotRecord:
    indices_view: tuple[int, int]  # (prefix, suffix)
    out_view: tuple[int, int, int]  # (prefix, depth, suffix)


def _scalar(ctx: OpContext, i: int, what: str):
    t = ctx.input(i)
    if num_elements(t.shape) != 1:
        raise ctx.shape_error(f"{what} {quoted(t.name)} must hold one value, has shape "
                              f"{list(t.shape)}")
    return t


def prepare(ctx: OpContext):
    ctx.check_arity(4, 4)
    indices = ctx.input(0)
    ctx.require_dtype(indices, (np.int32, np.int64), "indices")
    ctx.require_dtype(_scalar(ctx, 1, "depth"), (np.int32,), "depth")
    on, off = _scalar(ctx, 2, "on_value"), _scalar(ctx, 3, "off_value")
    ctx.require_dtype(on, VALUE_DTYPES, "on_value")
    if off.dtype != on.dtype:
        raise ctx.dtype_error(f"off_value {quoted(off.name)} is {off.dtype.name} but on_value "
                              f"{quoted(on.name)} is {on.dtype.name}; they must match")
    depth = int(ctx.constant_input(1, "depth").reshape(-1)[0])
    if depth < 0:
        raise ctx.shape_error(f"depth must be >= 0, is {depth}")
    axis = int(ctx.option("axis", -1))
    if axis == -1:
        axis = indices.rank
    if not 0 <= axis <= indices.rank:
        raise ctx.shape_error(f"axis {ctx.option('axis', -1)} must be -1 or lie in "
                              f"[0, {indices.rank}] for rank-{indices.rank} indices")
    shape = indices.shape[:axis] + (depth,) + indices.shape[axis:]
    prefix, suffix = num_elements(indices.shape[:axis]), num_elements(indices.shape[axis:])
    record = OneHotRecord(indices_view=(prefix, suffix), out_view=(prefix, depth, suffix))
    return (OutputSpec(shape, on.dtype),), record


def eval(rec: OneHotRecord, inputs, outputs) -> None:
    indices, _, on, off = inputs
    out = outputs[0].reshape(rec.out_view)
    out.fill(off.reshape(-1)[0])
    # static_cast<int>: int64 indices wrap to int32 (astype truncates the same way).
    idx = indices.reshape(rec.indices_view).astype(np.int32, copy=False)
    rows, cols = np.nonzero((idx >= 0) & (idx < rec.out_view[1]))
    out[rows, idx[rows, cols], cols] = on.reshape(-1)[0]


OPS = (
    # Any value type, quantized int8 / uint8 too: the kernel copies on_value / off_value.
    # The quantizer keeps it float, as TFLite's (operator_property.cc has no ONE_HOT): its
    # input 0 holds indices, so no rule on input 0's parameters applies. Not per sample:
    # with axis 0 the depth axis comes first.
    OpDef("ONE_HOT", shape_operands=(1,), float=Kernel(prepare, eval)),
)
