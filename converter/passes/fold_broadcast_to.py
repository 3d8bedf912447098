"""Drop a BROADCAST_TO that a broadcasting binary op would do itself, as TF's converter does.

TF's converter (optimize_broadcast_like_pass.cc, ConvertResultsBroadcastableShapeOp) rewires a
binary op with implicit broadcasting to read a BROADCAST_TO's input directly when
  - the op has two operands and a fully known output shape,
  - its rank is one TFLite's kernel broadcasts: ADD / SUB / MUL up to 6, DIV up to 5,
    the others up to 4,
  - the BROADCAST_TO's input and the other operand have fully known shapes, and
  - broadcasting those two gives the op's output shape.
The BROADCAST_TO then goes away once nothing else reads it. Values are unchanged (the kernel
repeats the same elements the BROADCAST_TO would have written).
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph

MAX_RANK = {"ADD": 6, "SUB": 6, "MUL": 6, "DIV": 5}
BROADCASTING = frozenset({  # TFLite ops with the ResultsBroadcastableShape trait, two operands
    "ADD", "SUB", "MUL", "DIV", "FLOOR_DIV", "FLOOR_MOD", "MAXIMUM", "MINIMUM", "POW",
    "SQUARED_DIFFERENCE", "EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS",
    "LESS_EQUAL", "LOGICAL_AND", "LOGICAL_OR"})


def _known(shape) -> bool:
    return shape is not None and all(d is not None and d >= 0 for d in shape)


def run(graph: Graph) -> int:
    n = 0
    for op in [op for op in graph.ops if op.type in BROADCASTING]:
        if len(op.inputs) != 2 or len(op.outputs) != 1 or None in op.inputs:
            continue
        out = op.outputs[0].shape
        if not _known(out) or len(out) > MAX_RANK.get(op.type, 4):
            continue
        for i in (0, 1):
            src = graph.producer(op.inputs[i])
            if src is None or src.type != "BROADCAST_TO":
                continue
            x, other = src.inputs[0], op.inputs[1 - i]
            if not (_known(x.shape) and _known(other.shape)):
                continue
            try:
                shape = np.broadcast_shapes(tuple(x.shape), tuple(other.shape))
            except ValueError:
                continue
            if tuple(shape) != tuple(out):
                continue
            op.inputs[i] = x
            graph.remove_dead_ops([src.outputs[0]])
            n += 1
    return n
