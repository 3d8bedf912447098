"""Neural-net layer ops: BiasAdd, FusedBatchNorm*, MaxPool/AvgPool."""

from __future__ import annotations

import numpy as np

from ...interpreter.errors import UnsupportedOpError
from ..ir import Activation, Padding
from .context import (LowerCtx, attr_bool, attr_float, attr_str, nhwc_pair,
                      require_nhwc)


def bias_add(ctx: LowerCtx, node) -> None:
    """BiasAdd is an ADD broadcast over the last (channel) axis; fuse_bias folds it."""
    require_nhwc(node)
    ctx.emit("ADD", node, ctx.inputs(node)[:2],
             dict(fused_activation_function=Activation.NONE))


def fused_batch_norm(ctx: LowerCtx, node) -> None:
    """Inference batch norm y = (x - mean) * gamma / sqrt(var + eps) + beta as MUL then ADD.

    With s = gamma / sqrt(var + eps) and b = beta - mean * s this is y = x * s + b; the
    fold_batchnorm pass then moves s into the preceding conv's weights and b into its bias.
    """
    require_nhwc(node)
    if attr_bool(node, "is_training", False):
        raise UnsupportedOpError(
            f"node {node.name!r} ({node.op}) is in training mode (is_training=true); export "
            "the graph for inference (Keras: call the model with training=False).")
    x = ctx.input(node, 0)
    gamma, beta, mean, var = (ctx.const_input(node, i, what).astype(np.float64) for i, what in
                              enumerate(("scale", "offset", "mean", "variance"), start=1))
    eps = attr_float(node, "epsilon", 1e-4)
    s = gamma / np.sqrt(var + eps)
    b = beta - mean * s
    scaled = ctx.graph.tensor(f"{node.name}/mul", x.dtype)
    ctx.graph.add_op("MUL", [x, ctx.const(node, "scale", s, x.dtype)], [scaled],
                     dict(fused_activation_function=Activation.NONE), name=node.name)
    ctx.emit("ADD", node, [scaled, ctx.const(node, "offset", b, x.dtype)],
             dict(fused_activation_function=Activation.NONE))


def _pool(tfl_type: str):
    def rule(ctx: LowerCtx, node) -> None:
        require_nhwc(node)
        kh, kw = nhwc_pair(node, "ksize")
        sh, sw = nhwc_pair(node, "strides")
        pad = attr_str(node, "padding")
        if pad not in ("SAME", "VALID"):
            raise UnsupportedOpError(f"node {node.name!r} ({node.op}): padding {pad!r}")
        ctx.emit(tfl_type, node, [ctx.input(node, 0)], dict(
            padding=Padding[pad], stride_h=sh, stride_w=sw, filter_height=kh, filter_width=kw,
            fused_activation_function=Activation.NONE))
    rule.__name__ = tfl_type.lower()
    return rule


RULES = {
    "BiasAdd": bias_add,
    "FusedBatchNorm": fused_batch_norm,
    "FusedBatchNormV2": fused_batch_norm,
    "FusedBatchNormV3": fused_batch_norm,
    "MaxPool": _pool("MAX_POOL_2D"),
    "AvgPool": _pool("AVERAGE_POOL_2D"),
}
