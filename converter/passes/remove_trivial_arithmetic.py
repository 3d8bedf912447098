"""Remove arithmetic that does nothing: x * 1, x / 1, x + 0, x - 0 (constants all 1 or 0
that broadcast without growing x).

Keras' swish computes x * sigmoid(beta * x) with beta = 1.0 frozen in; this leaves
x * sigmoid(x), which is what TFLite's converter writes too.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph
from .patterns import const_operand

NEUTRAL = {"MUL": 1.0, "DIV": 1.0, "ADD": 0.0, "SUB": 0.0}


def run(graph: Graph) -> int:
    n = 0
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
