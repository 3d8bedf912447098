"""Identify tf.math.l2_normalize over the last axis as L2_NORMALIZATION.

Pattern: x * rsqrt(max(sum(square(x), axis=-1, keep_dims=True), eps)). TFLite's kernel
divides by max(sqrt(sum x^2), 1e-6) instead of using TF's eps (default 1e-12): the two agree
except for vectors with a norm below 1e-6.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph
from .patterns import const_operand, other_input, replace_with, scalar, sole_producer


def _last_axis(op, x) -> bool:
    axes = op.inputs[1]
    if not axes.is_const or axes.data.size != 1 or not op.options.get("keep_dims"):
        return False
    axis = int(np.asarray(axes.data).reshape(-1)[0])
    return axis == -1 or (x.shape is not None and axis == len(x.shape) - 1)


# The op types the pattern is made of (passes/__init__.py skips the pass without them).
REQUIRES = ("MUL", "RSQRT", "MAXIMUM", "SUM", "SQUARE")


def run(graph: Graph) -> int:
    n = 0
    for mul in graph.ops_of("MUL"):
        if mul not in graph.ops or mul.options.get("fused_activation_function"):
            continue
        for t in mul.inputs[:2]:
            rsqrt = sole_producer(graph, t, {"RSQRT"})
            mx = rsqrt and sole_producer(graph, rsqrt.inputs[0], {"MAXIMUM"})
            args = mx and const_operand(mx)
            total = args and scalar(args[1]) is not None and \
                sole_producer(graph, args[0], {"SUM"})
            square = total and sole_producer(graph, total.inputs[0], {"SQUARE"})
            x = square and square.inputs[0]
            if x is not None and x is not False and other_input(mul, t) is x \
                    and _last_axis(total, x):
                replace_with(graph, mul, "L2_NORMALIZATION", [x],
                             dict(fused_activation_function=0))
                n += 1
                break
    return n
