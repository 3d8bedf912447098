"""Identify max(x, alpha * x), 0 <= alpha <= 1, as LEAKY_RELU(alpha)."""

from __future__ import annotations

from ..ir import Graph
from .patterns import const_operand, replace_with, scalar, sole_producer


# The op types the pattern is made of (passes/__init__.py skips the pass without them).
REQUIRES = ("MAXIMUM", "MUL")


def run(graph: Graph) -> int:
    n = 0
    for mx in graph.ops_of("MAXIMUM"):
        for x, scaled in (mx.inputs[:2], mx.inputs[1::-1]):
            mul = sole_producer(graph, scaled, {"MUL"})
            args = mul and const_operand(mul)
            if (not args or args[0] is not x or mul.options.get("fused_activation_function")):
                continue
            alpha = scalar(args[1])
            if alpha is not None and 0.0 <= alpha <= 1.0:
                replace_with(graph, mx, "LEAKY_RELU", [x], dict(alpha=alpha))
                n += 1
                break
    return n
