"""Fold ops whose inputs are all constant into constants, computed by edgelite's interpreter
(the op alone, as a one-op model: the converter has no second execution engine). The model
is built directly (graph_model.py), not written to a file and read back: that took most of
the time of lowering a graph with many constant expressions.
"""

from __future__ import annotations

import numpy as np

from ...interpreter.kernels import OPS
from ..graph_model import graph_interpreter
from ..ir import Graph, Op

# Never folded: they exist to be executed, or cannot run in the interpreter (MATMUL is
# folded once matmul_to_fully_connected has made it a FULLY_CONNECTED).
# WHILE / IF run subgraphs (and a loop over constants may run for ever). UNIFORM_NOISE
# (lower/random.py) has no inputs and stands for values no kernel computes.
KEEP = frozenset({"CUSTOM", "MATMUL", "ERF", "ERFC", "UNIFORM_NOISE"}) | frozenset(
    n for n, op in OPS.items() if op.boundary or op.subgraphs)  # QUANTIZE, ..., WHILE, IF, ...


def try_fold(graph: Graph, op: Op) -> bool:
    """Replace `op` by constants if every input is constant; True if it did."""
    if op.type in KEEP or not all(t is None or t.is_const for t in op.inputs):
        return False
    if any(graph.is_output(t) for t in op.outputs):
        return False  # graph outputs stay computed tensors
    if op.type == "IDENTITY":
        values = [op.inputs[0].data]
    else:
        values = evaluate_op(op)
    graph.remove_op(op)
    for t, v in zip(op.outputs, values):
        t.data, t.shape = v, tuple(v.shape)
    return True


def run(graph: Graph) -> int:
    return sum(try_fold(graph, op) for op in list(graph.ops))


def evaluate_op(op: Op) -> list[np.ndarray]:
    """Outputs of one op whose inputs are all constant."""
    g = Graph()
    clones = [g.tensor(t.name, t.dtype, ()) for t in op.outputs]  # shapes: from prepare()
    g.add_op(op.type, op.inputs, clones, op.options, op.name)
    g.outputs = clones
    interp = graph_interpreter(g)
    interp.allocate_tensors()
    interp.invoke()
    return [interp.get_tensor(d["index"]) for d in interp.get_output_details()]
