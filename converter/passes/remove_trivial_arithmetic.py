"""Remove arithmetic that does nothing: x * 1, x / 1, x + 0, x - 0 (constants all 1 or 0
that broadcast without growing x), and a SELECT / SELECT_V2 whose condition is a constant
all true or all false (the operand it picks, when it has the output's shape).

Keras' swish computes x * sigmoid(beta * x) with beta = 1.0 frozen in; this leaves
x * sigmoid(x), which is what TFLite's converter writes too. Dropout with keep_prob bound
to 1 leaves where(all true, x, 0) (lower/random.py).
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph
from .patterns import const_operand

NEUTRAL = {"MUL": 1.0, "DIV": 1.0, "ADD": 0.0, "SUB": 0.0}


def run(graph: Graph) -> int:
    n = _selects(graph)
    for op in [op for op in graph.ops if op.type in NEUTRAL]:
        args = const_operand(op)
        if not args or op.options.get("fused_activation_function", 0):
            continue
        x, c = args
        if op.type in ("DIV", "SUB") and op.inputs[1] is not c:
            continue
        if c.data.dtype.kind not in "fiu" or not np.all(c.data == NEUTRAL[op.type]):
            continue
        if c.data.size > 1 and (x.shape is None or
                                np.broadcast_shapes(x.shape, c.data.shape) != tuple(x.shape)):
            continue
        if x.dtype != op.outputs[0].dtype:
            continue
        graph.bypass(op, x)
        n += 1
    return n


def _selects(graph: Graph) -> int:
    n = 0
    for op in [op for op in graph.ops if op.type in ("SELECT", "SELECT_V2")]:
        cond, out = op.inputs[0], op.outputs[0]
        if not cond.is_const or cond.data.size == 0 or graph.is_output(out):
            continue
        if cond.data.all():
            pick = op.inputs[1]
        elif not cond.data.any():
            pick = op.inputs[2]
        else:
            continue
        if pick.dtype == out.dtype and pick.shape is not None and out.shape is not None \
                and tuple(pick.shape) == tuple(out.shape):
            graph.bypass(op, pick)
            n += 1
    return n

