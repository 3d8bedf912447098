"""Fold a scalar MUL / DIV / ADD / SUB behind a RESHAPE or TRANSPOSE into the conv /
fully-connected op before it.

Pattern: {CONV_2D | DEPTHWISE_CONV_2D | FULLY_CONNECTED} (no fused activation, constant
weights) -> RESHAPE | TRANSPOSE -> op(c), c one number. A layout op moves values, so
op(layout(y), c) = layout(op(y, c)), and a scalar is the same for every output channel:
W' = W * c, b' = b * c (MUL; DIV by 1 / c), b' = b + c (ADD; SUB -c), as fold_affine_constants
does without the layout op between. Keras' MultiHeadAttention scales the query projection
this way (EinsumDense, reshaped to heads, then * 1 / sqrt(key_dim)); TFLite's converter
folds it too.
"""

from __future__ import annotations

import numpy as np

from ..ir import Activation, Graph
from .patterns import (AFFINE, add_to_bias, const_operand, out_channels, scalar,
                       scale_output_channels, sole_producer)


def run(graph: Graph) -> int:
    n = 0
    for op in [op for op in graph.ops if op.type in ("MUL", "DIV", "ADD", "SUB")]:
        if op not in graph.ops or op.options.get("fused_activation_function", 0):
            continue
        args = const_operand(op)
        c = args and scalar(args[1])
        if c is None or c is False \
                or (op.type in ("DIV", "SUB") and op.inputs[0] is not args[0]) \
                or (op.type == "DIV" and c == 0.0):
            continue
        layout = sole_producer(graph, args[0], {"RESHAPE", "TRANSPOSE"})
        affine = layout and sole_producer(graph, layout.inputs[0], AFFINE)
        if not affine or affine.options.get("fused_activation_function") != Activation.NONE \
                or not affine.inputs[1].is_const:
            continue
        v = np.full(out_channels(affine), c, np.float64)
        if op.type in ("MUL", "DIV"):
            scale_output_channels(affine, graph, v if op.type == "MUL" else 1.0 / v)
        else:
            add_to_bias(affine, graph, v if op.type == "ADD" else -v)
        graph.bypass(op, layout.outputs[0])
        n += 1
    return n
