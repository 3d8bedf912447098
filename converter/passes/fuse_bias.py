"""Fuse ADD of a per-channel constant (BiasAdd) into the preceding conv / fully-connected bias.

Pattern: {CONV_2D | DEPTHWISE_CONV_2D | FULLY_CONNECTED | TRANSPOSE_CONV} (no fused
activation) -> ADD(c); an activation fused into the ADD moves to the affine op.
"""

from __future__ import annotations

from ..ir import Activation, Graph
from .patterns import BIAS_INDEX, add_to_bias, channel_vector, const_operand, sole_producer


# The op types the pattern is made of (passes/__init__.py skips the pass without them).
REQUIRES = ("ADD", tuple(BIAS_INDEX))


def run(graph: Graph) -> int:
    n = 0
    for add in graph.ops_of("ADD"):
        args = const_operand(add)
        affine = args and sole_producer(graph, args[0], BIAS_INDEX)
        if not affine or affine.options.get("fused_activation_function") != Activation.NONE:
            continue
        bias = channel_vector(args[1], affine)
        if bias is None:
            continue
        add_to_bias(affine, graph, bias)
        affine.options["fused_activation_function"] = add.options.get(
            "fused_activation_function", Activation.NONE)
        graph.bypass(add, affine.outputs[0])
        n += 1
    return n
