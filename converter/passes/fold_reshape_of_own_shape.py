"""Fold RESHAPE(x, CONCATENATION(SHAPE(x), constants)) of a vector x into a constant shape.

TF code that gives a vector a trailing unit axis for broadcasting writes
``tf.reshape(w, tf.concat([tf.shape(w), ones], 0))`` (tf.nn.embedding_lookup_sparse
does, for its weights). When x's length is only known at run time (it follows a WHERE),
SHAPE cannot be folded, and the RESHAPE reads a shape computed on every invoke. For a
vector x the new shape is [len(x)] + constants, which RESHAPE takes as the constant
[-1] + constants: the same result, without the SHAPE and CONCATENATION.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph


def run(graph: Graph) -> int:
    n = 0
    for op in [op for op in graph.ops_of("RESHAPE") if len(op.inputs) > 1]:
        x, shape = op.inputs[0], op.inputs[1]
        cat = graph.producer(shape)
        if shape is None or cat is None or cat.type != "CONCATENATION" or \
                cat.options.get("axis", 0) not in (0, -1) or x.shape is None or len(x.shape) != 1:
            continue
        parts = []
        for t in cat.inputs:
            src = graph.producer(t) if not t.is_const else None
            if t.is_const and t.data.ndim == 1:
                parts.extend(int(v) for v in t.data)
            elif src is not None and src.type == "SHAPE" and src.inputs[0] is x:
                parts.append(-1)
            else:
                break
        else:
            if parts.count(-1) == 1:
                op.inputs[1] = graph.const(f"{shape.name}/folded", np.asarray(parts, np.int32))
                n += 1
    return n
