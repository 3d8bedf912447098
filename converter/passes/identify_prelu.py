"""Identify Keras' PReLU, relu(x) + c * relu(-x), as PRELU(x, alpha = -c).

(Keras computes pos + (-alpha) * relu(-x); the negated alpha is folded to the constant c.)
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph
from .patterns import const_operand, replace_with, sole_producer


# The op types the pattern is made of (passes/__init__.py skips the pass without them).
REQUIRES = ("ADD", "RELU", "MUL", "NEG")


def run(graph: Graph) -> int:
    n = 0
    for add in graph.ops_of("ADD"):
        if add.options.get("fused_activation_function"):
            continue
        for pos_t, neg_t in (add.inputs[:2], add.inputs[1::-1]):
            pos = sole_producer(graph, pos_t, {"RELU"})
            mul = sole_producer(graph, neg_t, {"MUL"})
            args = mul and const_operand(mul)
            relu_neg = args and sole_producer(graph, args[0], {"RELU"})
            neg = relu_neg and sole_producer(graph, relu_neg.inputs[0], {"NEG"})
            if not (pos and neg and neg.inputs[0] is pos.inputs[0]) or \
                    args[1].data.dtype.kind != "f" or mul.options.get("fused_activation_function"):
                continue
            alpha = graph.const(f"{add.outputs[0].name}/alpha", -np.asarray(args[1].data))
            replace_with(graph, add, "PRELU", [pos.inputs[0], alpha])
            n += 1
            break
    return n
