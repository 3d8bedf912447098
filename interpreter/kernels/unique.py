"""UNIQUE: the distinct values of a vector in order of first appearance, and for every
element the position of its value among them.

Matches tensorflow/lite/kernels/unique.cc: a rank-1 input of float32, int8, uint8, int16,
int32 or int64 (a quantized int8 / uint8 input is compared code by code); output 0 has
the input's type and one element per distinct value (a dynamic output: its length depends
on the values), output 1 (int32 or int64, UniqueOptions.idx_out_type) has the input's
length. Floats compare by value (-0.0 equals 0.0; NaN never equals itself, so each NaN
is its own value -- np.unique would merge them, so NaN inputs are refused).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.errors import ShapeError
from .base import Kernel, OpContext, OutputSpec
from .opdef import TYPE_GENERIC, OpDef, QuantRule
from edgelite.names import quoted

VALUES = (np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64)


@dataclass(frozen=True)
class UniqueRecord:
    idx_dtype: np.dtype  # output 1's type
    where: str


def prepare(ctx: OpContext):
    ctx.check_arity(1, 1, num_outputs=2)
    x = ctx.input(0)
    ctx.require_dtype(x, VALUES, "input")
    if x.rank != 1:
        raise ctx.shape_error(f"input {quoted(x.name)} must be a vector, has shape "
                              f"{list(x.shape)}")
    idx_type = ctx.output_dtype(1)
    if idx_type.type not in (np.int32, np.int64):
        raise ctx.dtype_error(f"output 1 (the positions) must be int32 or int64, the file "
                              f"declares {idx_type.name}")
    return ((OutputSpec((-1,), x.dtype, dynamic=True), OutputSpec(x.shape, idx_type)),
            UniqueRecord(idx_type, ctx.describe()))


def eval(rec: UniqueRecord, inputs, outputs) -> None:
    x = inputs[0]
    if x.dtype.kind == "f" and np.isnan(x).any():
        raise ShapeError(f"{rec.where}: the input holds NaN; UNIQUE's result for NaN "
                         "(each one distinct) is not supported")
    values, first, inverse = np.unique(x, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # sorted values -> order of first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    outputs[0] = x[first[order]]
    outputs[1] = rank[inverse.reshape(-1)].astype(rec.idx_dtype)  # (a dynamic op's outputs
    # are all new arrays: kernels/base.py)


OPS = (
    # Selects values: the distinct values keep the input's parameters.
    OpDef("UNIQUE", float=Kernel(prepare, eval), integer=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT, exact=True),
)
