"""Arithmetic: Add/AddV2/Sub/Mul -> ADD/SUB/MUL, MatMul -> MATMUL (pseudo), Mean -> MEAN."""

from __future__ import annotations

import numpy as np

from ..ir import Activation
from .context import LowerCtx, attr_bool


def _binary(tfl_type: str):
    def rule(ctx: LowerCtx, node) -> None:
        ctx.emit(tfl_type, node, ctx.inputs(node)[:2],
                 dict(fused_activation_function=Activation.NONE))
    rule.__name__ = tfl_type.lower()
    return rule


def matmul(ctx: LowerCtx, node) -> None:
    """MATMUL is converter-only; matmul_to_fully_connected turns it into FULLY_CONNECTED."""
    ctx.emit("MATMUL", node, ctx.inputs(node)[:2], dict(
        transpose_a=attr_bool(node, "transpose_a", False),
        transpose_b=attr_bool(node, "transpose_b", False)))


def mean(ctx: LowerCtx, node) -> None:
    axes = ctx.const_input(node, 1, "the reduction axes")
    ctx.emit("MEAN", node, [ctx.input(node, 0),
                            ctx.const(node, "axes", np.atleast_1d(axes).astype(np.int32))],
             dict(keep_dims=attr_bool(node, "keep_dims", False)))


RULES = {
    "Add": _binary("ADD"),
    "AddV2": _binary("ADD"),
    "Sub": _binary("SUB"),
    "Mul": _binary("MUL"),
    "MatMul": matmul,
    "Mean": mean,
}
