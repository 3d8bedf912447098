"""Identify clamps written as MINIMUM/MAXIMUM with constants as RELU, RELU6, RELU_N1_TO_1.

Patterns: min(max(x, lo), hi) or max(min(x, hi), lo) with (lo, hi) = (0, 6) -> RELU6,
(-1, 1) -> RELU_N1_TO_1; a lone max(x, 0) -> RELU.
"""

from __future__ import annotations

from ..ir import Graph
from .patterns import const_operand, replace_with, scalar, sole_producer

CLAMPS = {(0.0, 6.0): "RELU6", (-1.0, 1.0): "RELU_N1_TO_1"}


def _bound(op):
    """(variable input, scalar constant) of a MINIMUM/MAXIMUM, or None."""
    args = const_operand(op)
    if args is None or scalar(args[1]) is None:
        return None
    return args[0], scalar(args[1])


def run(graph: Graph) -> int:
    n = 0
    # last op first, so min(max(x, 0), 6) is seen as a clamp before max(x, 0) as a RELU
    for outer in graph.ops_of("MINIMUM", "MAXIMUM")[::-1]:
        if graph.use_count(outer.outputs[0]) == 0:
            continue
        b = _bound(outer)
        if b is None:
            continue
        inner_type = "MAXIMUM" if outer.type == "MINIMUM" else "MINIMUM"
        inner = sole_producer(graph, b[0], {inner_type})
        ib = inner and _bound(inner)
        if ib:
            lo, hi = (ib[1], b[1]) if outer.type == "MINIMUM" else (b[1], ib[1])
            if (lo, hi) in CLAMPS:
                replace_with(graph, outer, CLAMPS[(lo, hi)], [ib[0]])
                n += 1
                continue
        if outer.type == "MAXIMUM" and b[1] == 0.0:
            replace_with(graph, outer, "RELU", [b[0]])
            n += 1
    return n
