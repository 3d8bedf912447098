"""Fold a per-channel constant MUL in front of a conv / fully-connected op into its weights.

Pattern: MUL(x, c) -> {CONV_2D | DEPTHWISE_CONV_2D | FULLY_CONNECTED} where c varies only
along the last (input-channel) axis and the product feeds nothing else. Scaling input
channel i by c[i] equals scaling the weights' input axis by c[i]; zero padding stays zero,
so this is exact (unlike an ADD, which padding would break). Keras' Rescaling(1/255) in
front of the first conv disappears this way, as in TFLite's converter.
"""

from __future__ import annotations

import numpy as np

from ...interpreter.kernels import OPS
from ..ir import Graph
from .patterns import AFFINE, const_operand

# Axis of the weights that indexes input channels.
INPUT_AXIS = {n: op.affine.in_axis for n, op in OPS.items() if n in AFFINE}


# The op types the pattern is made of (passes/__init__.py skips the pass without them).
REQUIRES = ("MUL", tuple(AFFINE))


def run(graph: Graph) -> int:
    n = 0
    for mul in graph.ops_of("MUL"):
        args = const_operand(mul)
        out = mul.outputs[0]
        if not args or mul.options.get("fused_activation_function") or graph.is_output(out):
            continue
        readers = graph.consumers(out)
        if len(readers) != 1 or readers[0].type not in AFFINE or readers[0].inputs[0] is not out:
            continue
        affine, (x, c) = readers[0], args
        w = affine.inputs[1]
        if not w.is_const or c.data.dtype.kind != "f" or x.shape is None:
            continue
        axis = INPUT_AXIS[affine.type]
        channels = w.data.shape[axis] if affine.type != "DEPTHWISE_CONV_2D" else x.shape[-1]
        d = c.data
        if any(s != 1 for s in d.shape[:-1]) or d.ndim > len(x.shape) or \
                (d.size != 1 and d.shape[-1] != channels):
            continue
        scale = np.broadcast_to(d.reshape(-1).astype(np.float64), (channels,))
        if affine.type == "DEPTHWISE_CONV_2D":  # output channel k reads input k // multiplier
            scale = np.repeat(scale, w.data.shape[3] // channels)
        shape = [1] * w.data.ndim
        shape[axis] = -1
        graph.set_const_input(affine, 1, w.data * scale.reshape(shape))
        affine.inputs[0] = x
        graph.remove_op(mul)
        n += 1
    return n
