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
from .opdef import OpDef
from .versions import OpSignature, T
from ..names import quoted


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


def version(sig: OpSignature) -> int:
    """op_version.cc, TRANSPOSE: more than 6 dimensions or bfloat16 8; int4 7; more than 5
    dimensions 6; int16 5; more than 4 dimensions 4; bool 3; int8 2."""
    x = sig.input(0)
    if x.rank > 6 or x.type == T.BFLOAT16:
        return 8
    if x.type == T.INT4:
        return 7
    if x.rank > 5:
        return 6
    if x.type == T.INT16:
        return 5
    if x.rank > 4:
        return 4
    return {T.BOOL: 3, T.INT8: 2}.get(x.type, 1)


OPS = (
    # Not per sample: a permutation may move dim 0 (and [N, N] keeps leading with N).
    OpDef("TRANSPOSE", float=Kernel(prepare, eval), version=version),
)
