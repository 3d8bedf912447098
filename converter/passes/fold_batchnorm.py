"""Fold inference batch norm (MUL by a per-channel constant, then ADD) into the conv before it.

Pattern: {CONV_2D | DEPTHWISE_CONV_2D | FULLY_CONNECTED} -> MUL(c1) -> ADD(c2), where the
affine op has no fused activation and each intermediate feeds only the next (an activation
already fused into the ADD moves to the affine op). lower/nn.py
turns FusedBatchNorm* into exactly this MUL + ADD; the result is W' = W * c1, b' = b * c1 + c2.
"""

from __future__ import annotations

from ..ir import Activation, Graph
from .patterns import (AFFINE, add_to_bias, channel_vector, const_operand,
                       scale_output_channels, sole_producer)


# The op types the pattern is made of (passes/__init__.py skips the pass without them).
REQUIRES = ("ADD", "MUL", tuple(AFFINE))


def run(graph: Graph) -> int:
    n = 0
    for add in graph.ops_of("ADD"):
        if add not in graph.ops:
            continue
        add_args = const_operand(add)
        mul = add_args and sole_producer(graph, add_args[0], {"MUL"})
        if not mul or mul.options.get("fused_activation_function", 0):
            continue
        mul_args = const_operand(mul)
        affine = mul_args and sole_producer(graph, mul_args[0], AFFINE)
        if (not affine or affine.options.get("fused_activation_function") != Activation.NONE
                or not affine.inputs[1].is_const):
            continue
        scale = channel_vector(mul_args[1], affine)
        shift = channel_vector(add_args[1], affine)
        if scale is None or shift is None:
            continue
        scale_output_channels(affine, graph, scale)
        add_to_bias(affine, graph, shift)
        # an activation fused into the ADD now applies to the affine op's output
        affine.options["fused_activation_function"] = add.options.get(
            "fused_activation_function", Activation.NONE)
        graph.remove_op(mul)
        graph.bypass(add, affine.outputs[0])
        n += 1
    return n
