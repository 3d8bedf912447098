"""WHERE with one input (TF's Where): the coordinates of the true / non-zero elements.

Matches tensorflow/lite/kernels/where.cc and reference_ops::SelectTrueCoords:

* the condition: bool, float32, int32, int64, int8 or uint8 (int16 is refused); an
  element counts when it is non-zero (quantized int8 / uint8 codes are taken as they
  are, like LiteRT: a code equal to the zero point still counts);
* the output is int64 [count, rank], the coordinates in row-major order. Its row count
  depends on the values, so it is a dynamic output (kernels/base.py) -- as in LiteRT,
  whose Prepare marks it dynamic unless the condition is constant;
* a rank-0 condition fails the invoke ("Where op requires condition w/ rank > 0").

The output is at most rank x the condition's elements x 8 bytes: bounded by the input.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.errors import ShapeError
from .base import Kernel, OpContext, OutputSpec
from .opdef import TYPE_GENERIC, OpDef, QuantRule
from .versions import OpSignature, T

CONDITIONS = (np.bool_, np.float32, np.int32, np.int64, np.int8, np.uint8)


@dataclass(frozen=True)
class WhereRecord:
    rank: int
    where: str


def prepare(ctx: OpContext):
    ctx.check_arity(1, 1)
    cond = ctx.input(0)
    ctx.require_dtype(cond, CONDITIONS, "condition")
    out = ctx.output_dtype(0)
    if out != np.int64:
        raise ctx.dtype_error(f"the output must be int64 (coordinates), the file declares "
                              f"{out.name}")
    return ((OutputSpec((-1, cond.rank), np.dtype(np.int64), dynamic=True),),
            WhereRecord(cond.rank, ctx.describe()))


def eval(rec: WhereRecord, inputs, outputs: list) -> None:
    cond = inputs[0]
    if rec.rank == 0:
        raise ShapeError(f"{rec.where}: the condition is a scalar; WHERE needs rank > 0")
    outputs[0] = np.argwhere(cond).astype(np.int64, copy=False)


def version(sig: OpSignature) -> int:
    """op_version.cc, WHERE: a bool condition 1, any other type 2."""
    return 1 if sig.input(0).type == T.BOOL else 2


OPS = (
    # Integer output (coordinates): nothing to quantize; a quantized condition's codes are
    # read as they are (like ARG_MAX: the int64 output takes no parameters).
    OpDef("WHERE", float=Kernel(prepare, eval), integer=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT, version=version),
)
