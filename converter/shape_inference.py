"""Shape inference: every IR tensor's shape, as edgelite's own interpreter computes it.

The converter has no second execution engine. To learn shapes it exports the graph (unknown
shapes written as rank 0; the interpreter's prepare() recomputes every op's output shape from
its inputs) and reads the planned shapes back (constant folding runs ops the same way:
passes/fold_constants.py).
"""

from __future__ import annotations

from ..interpreter import Interpreter
from .export import export_tflite
from .ir import Graph, Op


def infer_shapes(graph: Graph) -> None:
    """Fill in the shape of every tensor, as the interpreter computes it."""
    if any(op.type == "CUSTOM" for op in graph.ops):
        _infer_shapes_op_by_op(graph)
        return
    unknown = [t for t in graph.tensors() if t.shape is None]
    for t in unknown:
        t.shape = ()
    try:
        interp = Interpreter(model_content=export_tflite(graph))
        interp.allocate_tensors()
    finally:
        for t in unknown:
            t.shape = None
    for t, detail in zip(graph.tensors(), interp.get_tensor_details()):
        t.shape = tuple(int(d) for d in detail["shape"])


def _infer_shapes_op_by_op(graph: Graph) -> None:
    """Shapes around CUSTOM ops, which the interpreter cannot prepare: each builtin op is
    prepared alone; a CUSTOM op's outputs keep the shape lowering gave them (from the TF
    node's _output_shapes), else take input 0's."""
    for op in graph.ops:
        if op.type == "CUSTOM":
            for t in op.outputs:
                if t.shape is None:
                    t.shape = op.inputs[0].shape if op.inputs and op.inputs[0] else ()
        else:
            infer_op_shapes(op)


def infer_op_shapes(op: Op) -> None:
    """Output shapes of one op from its inputs' shapes (and constant values)."""
    g = Graph()
    g.inputs = [t for t in op.inputs if t is not None and not t.is_const]
    saved = [t.shape for t in op.outputs]
    for t in op.outputs:
        t.shape = ()
    g.insert_op(op.copy())
    g.outputs = list(op.outputs)
    try:
        interp = Interpreter(model_content=export_tflite(g))
        interp.allocate_tensors()
    except Exception:
        for t, s in zip(op.outputs, saved):
            t.shape = s
        raise
    shapes = [tuple(int(x) for x in d["shape"]) for d in interp.get_output_details()]
    for t, s in zip(op.outputs, shapes):
        t.shape = s
