"""Drop a RESHAPE (Keras' Flatten) in front of a FULLY_CONNECTED that flattens by itself.

FULLY_CONNECTED with keep_num_dims false reads any input as [size / K, K] (K: the weights'
input depth) and writes [size / K, N] (fully_connected.cc), so

  FULLY_CONNECTED(RESHAPE(x, [.., K]))  ->  FULLY_CONNECTED(x)     x: [.., K]

both see the same rows in the same order. As TFLite's converter
(RemoveReshapeBeforeFullyConnected: a DS-CNN's AveragePooling2D [1, 1, 1, C] -> Flatten ->
Dense is AVERAGE_POOL_2D -> FULLY_CONNECTED in TF's file), only where the RESHAPE keeps the
last dimension: a Flatten of [N, H, W, C] into [N, H * W * C] stays (FULLY_CONNECTED would
compute the same, but some runtimes expect the input's last dimension to be K). The RESHAPE
must feed only the FULLY_CONNECTED; with keep_num_dims the FULLY_CONNECTED keeps the
RESHAPE's leading dimensions, and is left alone.
"""

from __future__ import annotations

from ..ir import Graph
from .patterns import sole_producer


def run(graph: Graph) -> int:
    n = 0
    for fc in graph.ops_of("FULLY_CONNECTED"):
        if fc.options.get("keep_num_dims"):
            continue
        flat = sole_producer(graph, fc.inputs[0], {"RESHAPE"})
        w = fc.inputs[1]
        if flat is None or w is None or w.shape is None or len(w.shape) != 2:
            continue
        x, y = flat.inputs[0], flat.outputs[0]
        if not (x.shape and y.shape and x.shape[-1] == y.shape[-1] == w.shape[1]):
            continue
        fc.inputs[0] = x
        graph.remove_op(flat)
        n += 1
    return n
