"""Shape and layout ops: Reshape, Squeeze, Pad, ConcatV2."""

from __future__ import annotations

import numpy as np

from ..ir import Activation
from .context import LowerCtx, attr_ints


def reshape(ctx: LowerCtx, node) -> None:
    x, shape = ctx.input(node, 0), ctx.input(node, 1)
    options = {}
    if shape.is_const:  # TFLite's converter stores the target shape in the options too
        shape = ctx.const(node, "shape", shape.data.astype(np.int32).reshape(-1))
        options["new_shape"] = [int(d) for d in shape.data]
    ctx.emit("RESHAPE", node, [x, shape], options, dtype=x.dtype)


def squeeze(ctx: LowerCtx, node) -> None:
    ctx.emit("SQUEEZE", node, [ctx.input(node, 0)],
             dict(squeeze_dims=attr_ints(node, "squeeze_dims", [])))


def pad(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    paddings = ctx.const_input(node, 1, "the paddings").astype(np.int32)
    ctx.emit("PAD", node, [x, ctx.const(node, "paddings", paddings)], dtype=x.dtype)


def concat_v2(ctx: LowerCtx, node) -> None:
    inputs = ctx.inputs(node)
    axis = int(ctx.const_input(node, len(inputs) - 1, "the axis"))
    ctx.emit("CONCATENATION", node, inputs[:-1],
             dict(axis=axis, fused_activation_function=Activation.NONE), dtype=inputs[0].dtype)


RULES = {
    "Reshape": reshape,
    "Squeeze": squeeze,
    "Pad": pad,
    "ConcatV2": concat_v2,
}
