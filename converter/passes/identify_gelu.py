"""Identify GELU, x * P(X <= x) for X ~ N(0, 1), as GELU (GeluOptions.approximate).

Accepted spellings: a product of x, 0.5 and one of (any grouping of the three MULs, the
constants folded or not, x / sqrt 2 written as a MUL or a DIV):
  erfc(-x / sqrt 2)                              tf.nn.gelu(approximate=False) in TF >= 2.16
  1 + erf(x / sqrt 2)                            older TF, Hugging Face, BERT's own code
  1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))    approximate=True (x^3 as POW or MULs)
TFLite's converter fuses the same three (optimize_patterns.td: MatchGeluApproximate and the
erf / erfc forms) into GELU with approximate false / true; its kernel computes exactly these
formulas (reference/gelu.h).
"""

from __future__ import annotations

import math

from ..ir import Graph
from .patterns import const_operand, replace_with, scalar, sole_producer

INV_SQRT2 = 1.0 / math.sqrt(2.0)
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
CUBIC = 0.044715
MAX_FACTORS = 6  # leaves of one product tree (x, 0.5, the gate; constants split up)


def _product_leaves(graph: Graph, t, top: bool = True) -> list:
    """The factors of t = MUL(MUL(..), ..) (inner MULs read by nothing else)."""
    op = graph.producer(t) if top else sole_producer(graph, t, {"MUL"})
    if op is None or op.type != "MUL" or op.options.get("fused_activation_function", 0):
        return [t]
    return [leaf for u in op.inputs[:2] for leaf in _product_leaves(graph, u, top=False)]


def _scaled(graph: Graph, t, x) -> tuple[object, float]:
    """(v, c) with t = c * v, peeling MUL / DIV by scalar constants and NEG down to x at
    the most (x may itself be a scaled tensor)."""
    factor = 1.0
    while True:
        op = None if t is x else graph.producer(t)
        if op is None or op.options.get("fused_activation_function", 0):
            return t, factor
        if op.type == "NEG":
            t, factor = op.inputs[0], -factor
            continue
        args = const_operand(op) if op.type in ("MUL", "DIV") else None
        c = args and scalar(args[1])
        if not c or (op.type == "DIV" and op.inputs[1] is not args[1]):
            return t, factor
        t, factor = args[0], factor * (c if op.type == "MUL" else 1.0 / c)


def _close(v: float, expect: float) -> bool:
    return abs(v - expect) <= 1e-5 * abs(expect)


def _one_plus(graph: Graph, t, types):
    """The op of `types` producing u when t = 1 + u."""
    add = graph.producer(t)
    args = add is not None and add.type == "ADD" and const_operand(add)
    if not args or add.options.get("fused_activation_function", 0) \
            or scalar(args[1], 1.0) is None:
        return None
    inner = graph.producer(args[0])
    return inner if inner is not None and inner.type in types else None


def _is_cube_of(graph: Graph, t, x) -> bool:
    op = graph.producer(t)
    if op is not None and op.type == "POW" and op.inputs[0] is x:
        return scalar(op.inputs[1], 3.0) is not None
    leaves = _product_leaves(graph, t)
    return len(leaves) == 3 and all(leaf is x for leaf in leaves)


def _tanh_argument_is(graph: Graph, t, x) -> bool:
    """t = sqrt(2 / pi) * (x + 0.044715 x^3)?"""
    inner, c = _scaled(graph, t, x)
    add = graph.producer(inner)
    if not _close(c, SQRT_2_OVER_PI) or add is None or add.type != "ADD" \
            or add.options.get("fused_activation_function", 0):
        return False
    for u, v in (add.inputs[:2], add.inputs[1::-1]):
        cube, k = _scaled(graph, v, x)
        if u is x and _close(k, CUBIC) and _is_cube_of(graph, cube, x):
            return True
    return False


def _gate(graph: Graph, g, x) -> bool | None:
    """approximate (True / False) if g is the gate 2 P(X <= x) of x, else None."""
    op = graph.producer(g)
    if op is not None and op.type == "ERFC":
        v, c = _scaled(graph, op.inputs[0], x)
        return False if v is x and _close(c, -INV_SQRT2) else None
    erf = _one_plus(graph, g, {"ERF"})
    if erf is not None:
        v, c = _scaled(graph, erf.inputs[0], x)
        return False if v is x and _close(c, INV_SQRT2) else None
    tanh = _one_plus(graph, g, {"TANH"})
    if tanh is not None and _tanh_argument_is(graph, tanh.inputs[0], x):
        return True
    return None


def _match(graph: Graph, op):
    """(x, approximate) if op is the last MUL of a GELU of x."""
    leaves = _product_leaves(graph, op.outputs[0])
    if len(leaves) > MAX_FACTORS:
        return None
    half = 1.0
    tensors = []
    for leaf in leaves:
        v = scalar(leaf)
        if v is None:
            tensors.append(leaf)
        else:
            half *= v
    if len(tensors) != 2 or not _close(half, 0.5):
        return None
    for x, g in (tensors, tensors[::-1]):
        approximate = _gate(graph, g, x)
        if approximate is not None:
            return x, approximate
    return None


# The op types the pattern is made of (passes/__init__.py skips the pass without them):
# the MULs and one of the gates.
REQUIRES = ("MUL", ("ERF", "ERFC", "TANH"))


def run(graph: Graph) -> int:
    n = 0
    for op in graph.ops_of("MUL"):
        if op not in graph.ops or op.options.get("fused_activation_function", 0):
            continue
        found = _match(graph, op)
        if found is not None:
            x, approximate = found
            replace_with(graph, op, "GELU", [x], dict(approximate=approximate))
            n += 1
    return n
