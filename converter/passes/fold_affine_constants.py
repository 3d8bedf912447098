"""Fold a per-channel constant MUL / DIV / ADD / SUB after a conv or fully-connected op.

Pattern: {CONV_2D | DEPTHWISE_CONV_2D | FULLY_CONNECTED} (no fused activation) -> op(c):
  MUL c: W' = W * c, b' = b * c        DIV c: the same with 1 / c
  ADD c: b' = b + c                     SUB c (affine - c): b' = b - c
A scalar c also folds through a RESHAPE / TRANSPOSE between them (a layout op moves values;
a scalar is the same for every channel): Keras' MultiHeadAttention scales its query
projection after reshaping it to heads, and TFLite's converter folds that too.
A MUL / ADD lowered from FusedBatchNorm is left to fold_batchnorm, so disabling that pass
keeps batch norm visible.
"""

from __future__ import annotations

from ..ir import Activation, Graph
from .patterns import (AFFINE, add_to_bias, channel_vector, const_operand, scalar,
                       scale_output_channels, sole_producer)

BATCH_NORM = frozenset({"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"})


# The op types the pattern is made of (passes/__init__.py skips the pass without them).
REQUIRES = (("MUL", "DIV", "ADD", "SUB"), tuple(AFFINE))


def run(graph: Graph) -> int:
    n = 0
    for op in graph.ops_of("MUL", "DIV", "ADD", "SUB"):
        if op.origin in BATCH_NORM or op.options.get("fused_activation_function", 0):
            continue
        args = const_operand(op)
        affine = args and sole_producer(graph, args[0], AFFINE)
        layout = None
        if args and not affine and scalar(args[1]) is not None:
            layout = sole_producer(graph, args[0], {"RESHAPE", "TRANSPOSE"})
            affine = layout and sole_producer(graph, layout.inputs[0], AFFINE)
        if not affine or affine.options.get("fused_activation_function") != Activation.NONE \
                or not affine.inputs[1].is_const:
            continue
        if op.type in ("DIV", "SUB") and op.inputs[0] is not args[0]:
            continue  # c / y and c - y are not affine in y's channels
        c = channel_vector(args[1], affine)
        if c is None or (op.type == "DIV" and not c.all()):
            continue
        if op.type in ("MUL", "DIV"):
            scale_output_channels(affine, graph, c if op.type == "MUL" else 1.0 / c)
        else:
            add_to_bias(affine, graph, c if op.type == "ADD" else -c)
        graph.bypass(op, (layout or affine).outputs[0])
        n += 1
    return n
