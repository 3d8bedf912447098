"""MATMUL with a constant right-hand side -> FULLY_CONNECTED; otherwise BATCH_MATMUL.

TF MatMul computes a @ b with b [I, O] (or [O, I] when transpose_b); TFLite's
FULLY_CONNECTED wants weights [O, I], so b is transposed unless transpose_b was set.
A transposed left operand (transpose_a) gets a TRANSPOSE op first.
"""

from __future__ import annotations

import numpy as np

from ..ir import Activation, Graph, Op


def run(graph: Graph) -> int:
    n = 0
    for op in graph.ops_of("MATMUL"):
        a, b = op.inputs
        ta, tb = op.options["transpose_a"], op.options["transpose_b"]
        if ta:
            at = graph.tensor(f"{a.name}/transposed", a.dtype)
            perm = graph.const(f"{op.name}/perm", np.array([1, 0], np.int32))
            graph.insert_op(Op("TRANSPOSE", [a, perm], [at], {}, op.name), before=op)
            a = at
        if b.is_const:
            w = b.data if tb else b.data.T
            weights = graph.const(f"{b.name}/weights" if not tb else b.name,
                                  np.ascontiguousarray(w), b.dtype)
            op.type, op.inputs = "FULLY_CONNECTED", [a, weights, None]  # bias: see fuse_bias
            op.options = dict(fused_activation_function=Activation.NONE, keep_num_dims=False)
        else:
            op.type, op.inputs = "BATCH_MATMUL", [a, b]
            op.options = dict(adj_x=False, adj_y=tb)
        n += 1
    return n

