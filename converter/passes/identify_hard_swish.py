"""Identify hard-swish, x * relu6(x + 3) / 6, as HARD_SWISH.

Accepted spellings (as TF graphs write them):
  x * (relu6(x + 3) * (1/6))       Keras MobileNetV3 (hard_sigmoid then multiply)
  (x * relu6(x + 3)) * (1/6)       and the same with  / 6
relu6(x + 3) may be an ADD with fused RELU6 if fuse_activation already ran.
"""

from __future__ import annotations

from ..ir import Activation, Graph
from .patterns import const_operand, other_input, replace_with, scalar, sole_producer


def _relu6_of_x_plus_3(graph: Graph, t):
    """x if t = relu6(x + 3), else None."""
    relu6 = sole_producer(graph, t, {"RELU6"})
    if relu6 is not None:
        add = sole_producer(graph, relu6.inputs[0], {"ADD"})
        fused = Activation.NONE
    else:
        add = sole_producer(graph, t, {"ADD"})
        fused = Activation.RELU6
    args = add and const_operand(add)
    if not args or add.options.get("fused_activation_function", 0) != fused:
        return None
    return args[0] if scalar(args[1], 3.0) is not None else None


def _times_sixth(graph: Graph, op):
    """The variable input v if op computes v * (1/6) or v / 6."""
    args = const_operand(op) if op.type in ("MUL", "DIV") else None
    if not args or op.options.get("fused_activation_function"):
        return None
    if op.type == "MUL" and scalar(args[1], 1 / 6) is not None:
        return args[0]
    if op.type == "DIV" and op.inputs[1] is args[1] and scalar(args[1], 6.0) is not None:
        return args[0]
    return None


def _match(graph: Graph, op):
    """x if op is the last op of a hard-swish of x."""
    if op.options.get("fused_activation_function"):
        return None
    if op.type == "MUL":  # x * (relu6(x + 3) * 1/6)
        for t in op.inputs[:2]:
            sixth = sole_producer(graph, t, {"MUL", "DIV"})
            r = sixth and _times_sixth(graph, sixth)
            x = r is not None and _relu6_of_x_plus_3(graph, r)
            if x is not None and x is not False and other_input(op, t) is x:
                return x
    v = _times_sixth(graph, op)  # (x * relu6(x + 3)) * 1/6
    prod = v is not None and sole_producer(graph, v, {"MUL"})
    if prod and not prod.options.get("fused_activation_function"):
        for t in prod.inputs[:2]:
            x = _relu6_of_x_plus_3(graph, t)
            if x is not None and other_input(prod, t) is x:
                return x
    return None


# The op types the pattern is made of (passes/__init__.py skips the pass without them):
# the product and the x + 3 (RELU6 may be fused into the ADD).
REQUIRES = (("MUL", "DIV"), "ADD")


def run(graph: Graph) -> int:
    n = 0
    for op in graph.ops_of("MUL", "DIV"):
        if op not in graph.ops:
            continue
        x = _match(graph, op)
        if x is not None:
            replace_with(graph, op, "HARD_SWISH", [x])
            n += 1
    return n
