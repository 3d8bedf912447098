"""TRANSPOSE: permute the dimensions (any element type).

Matches tensorflow/lite/kernels/transpose.cc: the permutation is the 2nd input, a 1-D
int32 / int64 tensor with one entry per input dimension, constant here (the output shape
depends on it); every entry lies in [0, rank) -- TFLite rejects negative entries -- and
output dimension i is input dimension perm[i].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Kernel, OpContext, OutputSpec
from .opdef import TYPE_GENERIC, OpDef, QuantRule
from .versions import T, first_match, input_type, rank_above
from edgelite.names import quoted


@dataclass(frozen=True)
class TransposeRecord:
    perm: tuple[int, ...]


def prepare(ctx: OpContext):
    ctx.check_arity(2, 2)
    x, perm_t = ctx.input(0), ctx.input(1)
    ctx.require_dtype(perm_t, (np.int32, np.int64), "perm")
    perm = tuple(int(p) for p in ctx.constant_input(1, "perm").reshape(-1))
    if perm_t.rank != 1 or sorted(perm) != list(range(x.rank)):
        raise ctx.shape_error(
            f"perm {list(perm)} is not a permutation of the {x.rank} dimensions of "
            f"{quoted(x.name)} {list(x.shape)}"
        )
    shape = tuple(x.shape[p] for p in perm)
    return (OutputSpec(shape, x.dtype),), TransposeRecord(perm)


def eval(rec: TransposeRecord, inputs, outputs) -> None:
    np.copyto(outputs[0], inputs[0].transpose(rec.perm))


# op_version.cc, TRANSPOSE: the first of these that holds.
_VERSION = first_match(
    (rank_above(6), 8), (input_type(T.BFLOAT16), 8), (input_type(T.INT4), 7),
    (rank_above(5), 6), (input_type(T.INT16), 5), (rank_above(4), 4),
    (input_type(T.BOOL), 3), (input_type(T.INT8), 2))


OPS = (
    # Not per sample: a permutation may move dim 0 (and [N, N] keeps leading with N).
    OpDef("TRANSPOSE", shape_operands=(1,), int16=TYPE_GENERIC,
          float=Kernel(prepare, eval), integer=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT, version=_VERSION),
)
