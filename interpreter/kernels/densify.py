"""DENSIFY: the dense value of a sparse constant (tensorflow/lite/kernels/densify.cc).

TF's converter writes DENSIFY in front of an op that takes a pruned constant it cannot
read sparse (a CONV_2D filter, an int8 FULLY_CONNECTED weight without 1x16 blocks, ...).
model.py already expands every sparse constant to its dense value when it reads the file
(sparsity.py, TFLite's FormatConverter), so the input here is that dense constant and the
output is a copy of it; being all-constant, the op is folded at allocate time, as LiteRT
densifies once in its first Eval. LiteRT's Prepare takes only a constant sparse input of
float32, int8 or float16; a constant of any numpy type is copied here.
"""

from __future__ import annotations

import numpy as np

from .base import Kernel, OpContext, OutputSpec
from .opdef import TYPE_GENERIC, OpDef, QuantRule


def prepare(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.constant_input(0, "sparse value")  # densify.cc: IsConstantTensor(input)
    out = ctx.outputs[0]
    if out.dtype != x.dtype:
        raise ctx.dtype_error(f"the output is {out.dtype.name}, the input {x.dtype.name}; "
                              "DENSIFY keeps the type")
    return (OutputSpec(x.shape, x.dtype),), None


def eval(rec, inputs, outputs) -> None:
    np.copyto(outputs[0], inputs[0])


# Moves values only: int8 data keeps its parameters (the file gives the output the same).
OPS = (
    OpDef("DENSIFY", float=Kernel(prepare, eval), integer=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT, exact=True),
)
