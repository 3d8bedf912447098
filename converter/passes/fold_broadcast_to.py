"""Drop a BROADCAST_TO that a broadcasting op would do itself, as TF's converter does.

TF's converter (optimize_broadcast_like_pass.cc, ConvertResultsBroadcastableShapeOp) rewires a
binary op with implicit broadcasting to read a BROADCAST_TO's input directly when
  - the op has two operands and a fully known output shape,
  - its rank is one TFLite's kernel broadcasts: ADD / SUB / MUL up to 6, DIV up to 5,
    the others up to 4,
  - the BROADCAST_TO's input and the other operand have fully known shapes, and
  - broadcasting those two gives the op's output shape.
The BROADCAST_TO then goes away once nothing else reads it. Values are unchanged (the kernel
repeats the same elements the BROADCAST_TO would have written). The same holds for SELECT_V2
(three operands, up to rank 5: select.cc) and for a TILE that only repeats axes of size 1
(a broadcast written as tf.tile: Keras' masked RNN step tiles its [B, 1] mask to [B, units]
for the SELECT_V2s that keep the state of finished sequences).
"""

from __future__ import annotations

import numpy as np

from ...interpreter.kernels import OPS
from ..ir import Graph

# The ops with the ResultsBroadcastableShape trait, and the output rank up to which each
# one's kernel broadcasts (OpDef.broadcast_rank).
MAX_RANK = {n: op.broadcast_rank for n, op in OPS.items() if op.broadcast_rank}
BROADCASTING = frozenset(MAX_RANK)


def _known(shape) -> bool:
    return shape is not None and all(d is not None and d >= 0 for d in shape)


def _broadcast_source(graph: Graph, t):
    """(op, its input x) when `t` is BROADCAST_TO(x, ...) or a TILE of x repeating only axes
    of size 1; else None."""
    src = graph.producer(t)
    if src is None or src.type not in ("BROADCAST_TO", "TILE"):
        return None
    x = src.inputs[0]
    if src.type == "TILE":
        reps = src.inputs[1]
        if not reps.is_const or not _known(x.shape) or \
                any(int(r) != 1 and d != 1 for r, d in zip(np.asarray(reps.data).reshape(-1),
                                                            x.shape)):
            return None
    return src, x


def run(graph: Graph) -> int:
    n = 0
    for op in graph.ops_of(*BROADCASTING):
        if len(op.inputs) != (3 if op.type == "SELECT_V2" else 2) or len(op.outputs) != 1 \
                or None in op.inputs:
            continue
        out = op.outputs[0].shape
        if not _known(out) or len(out) > MAX_RANK[op.type]:
            continue
        for i in range(len(op.inputs)):
            found = _broadcast_source(graph, op.inputs[i])
            if found is None:
                continue
            src, x = found
            others = [t for k, t in enumerate(op.inputs) if k != i]
            if not (_known(x.shape) and all(_known(t.shape) for t in others)):
                continue
            try:
                shape = np.broadcast_shapes(tuple(x.shape), *(tuple(t.shape) for t in others))
            except ValueError:
                continue
            if tuple(shape) != tuple(out):
                continue
            op.inputs[i] = x
            graph.remove_dead_ops([src.outputs[0]])
            n += 1
    return n
