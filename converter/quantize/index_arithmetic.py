"""Float arithmetic that computes indices stays float in a quantized model.

A lowering rule may compute gather indices from float values in the graph: CropAndResize
(converter/lower/crop.py) computes each sample's position from its boxes, then FLOOR / CEIL
and a CAST to int32. Quantized over its calibrated range, a position in [0, H - 1] would move
in steps of about H / 255 pixels and pick other pixels; TFLite has no integer kernel such a
computation could match. So, among the ops lowered from one TF node (one op.name):

* every op on a float path into a float -> integer CAST (followed back from the CAST through
  the node's own ops) stays float;
* so does every op of the node whose computed float operands all come from those (the
  interpolation weight p - floor(p), the comparisons p >= 0 that mask samples outside).

An op reading other float data too (the interpolation of the gathered pixels) stays
integer: the float-kept operand is quantized where it meets it (a weight in [0, 1] to
1/255). A TF Cast node on its own is one op: nothing else is kept.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Op

F32 = np.dtype(np.float32)


def _computed_floats(op: Op) -> list:
    return [t for t in op.inputs if t is not None and not t.is_const and t.dtype == F32]


def _to_index(op: Op) -> bool:
    return (op.type == "CAST" and op.inputs[0] is not None and op.inputs[0].dtype == F32
            and op.outputs[0].dtype.kind in "iu")


def index_arithmetic(graph: Graph) -> frozenset[str]:
    """Output names (--keep-float patterns) of the ops that compute indices in float."""
    kept: set[int] = set()
    for cast in filter(_to_index, graph.ops):
        stack = [cast]
        while stack:
            op = stack.pop()
            if id(op) in kept:
                continue
            kept.add(id(op))
            for t in _computed_floats(op):
                producer = graph.producer(t)
                if producer is not None and producer.name == cast.name:
                    stack.append(producer)
    for op in graph.ops:  # in order: an op's producers are decided before it
        floats = _computed_floats(op)
        producers = [graph.producer(t) for t in floats]
        if floats and id(op) not in kept and all(
                p is not None and id(p) in kept and p.name == op.name for p in producers):
            kept.add(id(op))
    return frozenset(op.outputs[0].name for op in graph.ops if id(op) in kept)
