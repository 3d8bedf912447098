"""BROADCAST_ARGS: the shape two shapes broadcast to.

Matches tensorflow/lite/kernels/broadcast_args.cc:

* inputs 0 and 1: 1-D shapes, both int32 or both int64;
* output: 1-D, of the inputs' type, as long as the longer one; aligned at the end, each
  dimension is the pair's common value, or the other one where one of them is 1;
* a pair that is neither equal nor has a 1 does not broadcast: an error (at invoke when
  the shapes are computed, as LiteRT's Eval).

The converter's constant folding runs it on constant shapes (tf.signal's mel matrix
computes two BroadcastArgs from constants).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.errors import ShapeError
from edgelite.names import quoted
from .base import Kernel, OpContext, OutputSpec
from .opdef import OpDef


@dataclass(frozen=True)
class BroadcastArgsRecord:
    where: str  # the op, for errors raised by invoke()


def prepare(ctx: OpContext):
    ctx.check_arity(2, 2)
    a, b = ctx.input(0), ctx.input(1)
    ctx.require_dtype(a, (np.int32, np.int64), "shape")
    if b.dtype != a.dtype:
        raise ctx.dtype_error(f"shapes {quoted(a.name)} ({a.dtype.name}) and {quoted(b.name)} "
                              f"({b.dtype.name}) must have the same type")
    for t in (a, b):
        if t.rank != 1:
            raise ctx.shape_error(f"shape {quoted(t.name)} has shape {list(t.shape)}; it must "
                                  "be 1-D")
    n = max(a.shape[0], b.shape[0])
    return (OutputSpec((n,), a.dtype),), BroadcastArgsRecord(ctx.describe())


def eval(rec: BroadcastArgsRecord, inputs, outputs) -> None:
    a, b = (x.tolist() for x in inputs)
    n = len(outputs[0])
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and 1 not in (x, y):
            raise ShapeError(f"{rec.where}: shapes {a[:8]} and {b[:8]} do not broadcast "
                             f"(dimension {i}: {x} vs {y})")
        outputs[0][i] = y if x == 1 else x


OPS = (
    # Shapes, not data: no integer kernel, never quantized.
    OpDef("BROADCAST_ARGS", float=Kernel(prepare, eval)),
)
