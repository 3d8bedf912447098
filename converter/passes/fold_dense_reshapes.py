"""A dense layer over the last axis written as Tensordot -> one FULLY_CONNECTED(keep_num_dims).

Keras' Dense on a [..., K] input (the feed-forward block of a transformer) freezes to
tf.tensordot: TRANSPOSE with the identity permutation, RESHAPE to [rows, K], MatMul, RESHAPE
back to [..., N]. FULLY_CONNECTED with keep_num_dims reads [..., K] and writes [..., N] itself
(fully_connected.cc), which is what TFLite's converter writes:

  TRANSPOSE(x, [0, 1, .., n-1])                       -> x
  RESHAPE(FULLY_CONNECTED(RESHAPE(x, [-1, K])), [..., N]), the reshapes of x's leading dims
                                                      -> FULLY_CONNECTED(x, keep_num_dims)
"""

from __future__ import annotations

import math

import numpy as np

from ..ir import Graph
from .patterns import sole_producer


def _identity_transpose(op) -> bool:
    perm = op.inputs[1]
    return perm.is_const and np.array_equal(np.asarray(perm.data).reshape(-1),
                                            np.arange(perm.data.size))


def _fold_reshapes(graph: Graph, fc) -> bool:
    inner = sole_producer(graph, fc.inputs[0], {"RESHAPE"})
    y = fc.outputs[0]
    readers = graph.consumers(y)
    if inner is None or fc.options.get("keep_num_dims") or graph.is_output(y) \
            or len(readers) != 1 or readers[0].type != "RESHAPE":
        return False
    outer, x = readers[0], inner.inputs[0]
    shapes = (x.shape, fc.inputs[0].shape, y.shape, outer.outputs[0].shape)
    if any(s is None for s in shapes) or len(x.shape) < 2:
        return False
    x_shape, flat, y_shape, out_shape = shapes
    k, n = x_shape[-1], y_shape[-1]
    if flat != (math.prod(x_shape[:-1]), k) or tuple(out_shape) != tuple(x_shape[:-1]) + (n,):
        return False
    fc.inputs[0] = x
    fc.options["keep_num_dims"] = True
    graph.remove_op(inner)
    y.shape = tuple(out_shape)
    graph.bypass(outer, y)
    return True


def run(graph: Graph) -> int:
    n = 0
    for op in graph.ops_of("TRANSPOSE"):
        if _identity_transpose(op) and not graph.is_output(op.outputs[0]):
            graph.bypass(op, op.inputs[0])
            n += 1
    for fc in graph.ops_of("FULLY_CONNECTED"):
        n += _fold_reshapes(graph, fc)
    return n
