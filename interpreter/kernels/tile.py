"""TILE and BROADCAST_TO: repeat the input (any element type).

* TILE (tensorflow/lite/kernels/tile.cc): multiples is a 1-D int32 / int64 tensor with
  one entry per input dimension, constant here; output dimension i = d_i * m_i.
  eval() writes through a view of the output as (m_0, d_0, m_1, d_1, ...), into which the
  input broadcasts as (1, d_0, 1, d_1, ...): one copy, no temporary.
* BROADCAST_TO (tensorflow/lite/kernels/broadcast_to.cc): shape is a 1-D int32 / int64
  tensor, constant here, of rank >= the input's; the input's dimensions, aligned to the
  right, must be 1 or equal to the target's (numpy's rules).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Kernel, OpContext, OutputSpec
from .opdef import TYPE_GENERIC, OpDef, QuantRule
from .versions import T, by_input_type
from edgelite.names import quoted


@dataclass(frozen=True)
class TileRecord:
    out_view: tuple[int, ...]  # shape to view the output as
    in_view: tuple[int, ...]  # shape to view the input as (broadcasts into out_view)


def _int_vector(ctx: OpContext, i: int, what: str) -> tuple[int, ...]:
    t = ctx.input(i)
    ctx.require_dtype(t, (np.int32, np.int64), what)
    if t.rank != 1:
        raise ctx.shape_error(f"{what} {quoted(t.name)} must be 1-D, has shape {list(t.shape)}")
    return tuple(int(v) for v in ctx.constant_input(i, what))


def prepare_tile(ctx: OpContext):
    ctx.check_arity(2, 2)
    x = ctx.input(0)
    multiples = _int_vector(ctx, 1, "multiples")
    if len(multiples) != x.rank or any(m < 0 for m in multiples):
        raise ctx.shape_error(
            f"multiples {list(multiples)} must hold one entry >= 0 per dimension of "
            f"{list(x.shape)}"
        )
    shape = tuple(d * m for d, m in zip(x.shape, multiples))
    out_view = tuple(v for d, m in zip(x.shape, multiples) for v in (m, d))
    in_view = tuple(v for d in x.shape for v in (1, d))
    return (OutputSpec(shape, x.dtype),), TileRecord(out_view, in_view)


def eval_tile(rec: TileRecord, inputs, outputs) -> None:
    np.copyto(outputs[0].reshape(rec.out_view), inputs[0].reshape(rec.in_view))


def prepare_broadcast_to(ctx: OpContext):
    ctx.check_arity(2, 2)
    x = ctx.input(0)
    shape = _int_vector(ctx, 1, "shape")
    ok = len(shape) >= x.rank and all(d >= 0 for d in shape)
    ok = ok and all(a in (1, b) for a, b in zip(x.shape[::-1], shape[::-1]))
    if not ok:
        raise ctx.shape_error(f"cannot broadcast {quoted(x.name)} {list(x.shape)} to {list(shape)}")
    return (OutputSpec(shape, x.dtype),), None


def eval_broadcast_to(rec, inputs, outputs) -> None:
    np.copyto(outputs[0], inputs[0])


OPS = (
    # TILE keeps the input's rank: a multiple on dim 0 changes its size.
    # op_version.cc, TILE: int8 3, string 2.
    # Both copy bits: int8 / uint8 / int16 keep the input's parameters.
    OpDef("TILE", shape_operands=(1,), float=Kernel(prepare_tile, eval_tile), integer=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT, exact=True, per_sample=True,
          version=by_input_type({T.INT8: 3, T.STRING: 2})),
    # BROADCAST_TO may add leading dimensions: [N] -> [N, N] repeats every sample.
    # op_version.cc: int8 / int16 3, everything else 2 -- version 1 was rolled back when
    # the op got a new builtin code, and LiteRT registers it only from 2.
    OpDef("BROADCAST_TO", shape_operands=(1,),
          float=Kernel(prepare_broadcast_to, eval_broadcast_to),
          integer=TYPE_GENERIC, quant=QuantRule.SAME_AS_INPUT, exact=True,
          version=by_input_type({T.INT8: 3, T.INT16: 3}, default=2)),
)
