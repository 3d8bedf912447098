"""Shape inference: every IR tensor's shape, as edgelite's own interpreter computes it.

The converter has no second execution engine. To learn shapes it gives the graph to the
interpreter (unknown shapes as rank 0; the interpreter's prepare() recomputes every op's
output shape from its inputs) and reads the planned shapes back (constant folding runs ops
the same way: passes/fold_constants.py). The interpreter gets the graph's Model built
directly (graph_model.py: no file written and parsed again, the time of a large graph), or
the exported file where that does not cover the graph.
"""

from __future__ import annotations

from .graph_model import graph_interpreter, interpreter_model
from edgelite.interpreter import blas
from edgelite.interpreter.allocation import propagate_shapes
from edgelite.errors import EdgeliteError
from edgelite.names import quoted
from .control_flow.shapes import infer_graph, infer_op
from . import value_shapes
from .ir import Graph, Op, has_subgraphs


def infer_shapes(graph: Graph, strict: bool = True) -> None:
    """Fill in the shape of every tensor, as the interpreter computes it.

    A graph calling subgraphs (WHILE / IF) or holding CUSTOM ops is inferred op by op
    (control_flow/shapes.py), its subgraphs too. strict=False (between passes) leaves the
    shapes that cannot be inferred yet unknown instead of failing."""
    if any(t.shape is None for t in graph.inputs):
        if strict and not graph.is_subgraph:  # (a subgraph's come from its caller)
            raise EdgeliteError(f"internal: an input of graph {quoted(graph.name)} has no shape")
        return
    if has_subgraphs(graph) or any(op.type == "CUSTOM" for op in graph.ops):
        static = frozenset() if graph.is_subgraph else frozenset(id(t) for t in graph.inputs)
        infer_graph(graph, _prepare_one, strict, static)
        return
    tensors = graph.tensors()  # (the graph does not change below: listed once)
    unknown = [t for t in tensors if t.shape is None]
    for t in unknown:
        t.shape = ()
    try:
        shapes = _propagated(graph, tensors)
    finally:
        for t in unknown:
            t.shape = None
    if any(-1 in s for s in shapes):  # an op whose output shape values tell
        static = frozenset() if graph.is_subgraph else frozenset(id(t) for t in graph.inputs)
        infer_graph(graph, _prepare_one, strict, static)  # (WHERE): op by op, -1 dims kept
        return
    for t, shape in zip(tensors, shapes):
        t.shape = shape


def _propagated(graph: Graph, tensors: list) -> list[tuple[int, ...]]:
    """The shape of each of `tensors` after the interpreter prepared the graph: its Model
    prepared alone (allocation.propagate_shapes: no arena, no invoke steps), or -- where
    that model does not cover the graph or preparing it fails -- a whole interpreter
    allocated, whose errors say what is wrong as the interpreter says it."""
    model = interpreter_model(graph, tensors=tensors)
    if model is not None:
        try:
            with blas.threads(1):  # (constant folding runs kernels)
                return propagate_shapes(model.subgraphs[0])
        except EdgeliteError:
            pass  # (reported by the interpreter below)
    interp = graph_interpreter(graph, tensors)
    interp.allocate_tensors()
    return [tuple(int(d) for d in interp._current_shape(i)) for i in range(len(tensors))]


def infer_op_shapes(op: Op) -> None:
    """Output shapes of one op from its inputs' shapes (and constant values); a WHILE / IF
    infers its subgraphs. Nothing happens while an input's shape is unknown."""
    if any(t is not None and t.shape is None for t in op.inputs):
        return
    infer_op(op, _prepare_one, strict=False)


def _prepare_one(op: Op) -> None:
    """Prepare one builtin op alone in the interpreter; its outputs take the shapes found."""
    g = Graph()
    copy = value_shapes.with_values(op)  # computed shape operands as their values
    g.inputs = [t for t in copy.inputs if t is not None and not t.is_const]
    saved = [t.shape for t in op.outputs]
    for t in op.outputs:
        t.shape = ()
    g.insert_op(copy)
    g.outputs = list(op.outputs)
    try:
        interp = graph_interpreter(g)
        interp.allocate_tensors()
    except Exception:
        for t, s in zip(op.outputs, saved):
            t.shape = s
        raise
    shapes = [tuple(int(x) for x in d["shape"]) for d in interp.get_output_details()]
    for t, s in zip(op.outputs, shapes):
        # A -1 dim is one only the values tell (WHERE's rows, UNIQUE's values): it takes
        # 1 as its shape and stays -1 in the signature (control_flow/shapes.py keeps it).
        t.shape = tuple(1 if d == -1 else d for d in s)
        t.shape_signature = s if -1 in s else None
    from .passes.fold_constants import evaluate_op  # (the passes import this module)
    value_shapes.note(copy, evaluate_op)
