"""Fold ops whose inputs are all constant into constants, computed by edgelite's interpreter.
"""

from __future__ import annotations

from ..evaluate import evaluate_op
from ..ir import PSEUDO_OPS, Graph

# Never folded: they exist to be executed (or are handled by other passes).
KEEP = PSEUDO_OPS | {"QUANTIZE", "DEQUANTIZE", "CUSTOM"}


def run(graph: Graph) -> int:
    n = 0
    for op in list(graph.ops):
        if op.type in KEEP or not all(t is None or t.is_const for t in op.inputs):
            continue
        if any(graph.is_output(t) for t in op.outputs):
            continue  # graph outputs stay computed tensors
        values = evaluate_op(op)
        graph.ops.remove(op)
        for t, v in zip(op.outputs, values):
            t.data, t.shape = v, tuple(v.shape)
        n += 1
    return n
