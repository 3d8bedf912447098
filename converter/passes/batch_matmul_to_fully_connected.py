"""BATCH_MATMUL of a tensor and a constant matrix -> FULLY_CONNECTED(keep_num_dims).

x [..., M, K] @ W [K, N] (W [N, K] read with adj_y) is a dense layer over x's last axis:
FULLY_CONNECTED with weights [N, K] and keep_num_dims gives the same [..., M, N], with
per-channel int8 weights and a bias ADD to fuse, as TFLite's converter writes it (Keras 3's
projections and tf.matmul of a 3-D tensor with a weight matrix freeze to BatchMatMulV2).
"""

from __future__ import annotations

import numpy as np

from ..ir import Activation, Graph


def run(graph: Graph) -> int:
    n = 0
    for op in graph.ops_of("BATCH_MATMUL"):
        x, w = op.inputs[:2]
        if x.is_const or not w.is_const or w.data.ndim != 2 or op.options.get("adj_x") \
                or w.dtype != np.float32 or x.shape is None or len(x.shape) < 2:
            continue
        weights = w.data if op.options.get("adj_y") else w.data.T
        op.type = "FULLY_CONNECTED"
        op.inputs = [x, graph.const(f"{w.name}/weights", np.ascontiguousarray(weights)), None]
        op.options = dict(fused_activation_function=Activation.NONE, keep_num_dims=True)
        n += 1
    return n
