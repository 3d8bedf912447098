"""Arithmetic: binary ops, MatMul/BatchMatMul, reductions, ArgMax, Cast."""

from __future__ import annotations

import numpy as np

from ..ir import Activation
from .context import LowerCtx, attr_bool, attr_dtype


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


def _plain_binary(tfl_type: str):
    """Binary ops whose TFLite options carry no fused activation."""
    def rule(ctx: LowerCtx, node) -> None:
        ctx.emit(tfl_type, node, ctx.inputs(node)[:2])
    rule.__name__ = tfl_type.lower()
    return rule


def _comparison(tfl_type: str):
    """Comparisons and logical binary ops: bool outputs, no options."""
    def rule(ctx: LowerCtx, node) -> None:
        ctx.emit(tfl_type, node, ctx.inputs(node)[:2], dtype=np.bool_)
    rule.__name__ = tfl_type.lower()
    return rule


def batch_matmul(ctx: LowerCtx, node) -> None:
    ctx.emit("BATCH_MATMUL", node, ctx.inputs(node)[:2], dict(
        adj_x=attr_bool(node, "adj_x", False), adj_y=attr_bool(node, "adj_y", False)))


def _reduce(tfl_type: str):
    def rule(ctx: LowerCtx, node) -> None:
        axes = ctx.const_input(node, 1, "the reduction axes")
        ctx.emit(tfl_type, node, [ctx.input(node, 0),
                                  ctx.const(node, "axes", np.atleast_1d(axes).astype(np.int32))],
                 dict(keep_dims=attr_bool(node, "keep_dims", False)))
    rule.__name__ = tfl_type.lower()
    return rule


def _arg(tfl_type: str):
    def rule(ctx: LowerCtx, node) -> None:
        out_type = attr_dtype(node, "output_type", np.dtype(np.int64))
        axis = ctx.const_input(node, 1, "the axis").astype(np.int32).reshape(1)
        ctx.emit(tfl_type, node, [ctx.input(node, 0), ctx.const(node, "axis", axis)],
                 dict(output_type=_TFL_TYPE[out_type]), dtype=out_type)
    rule.__name__ = tfl_type.lower()
    return rule


_TFL_TYPE = {np.dtype(np.int32): 2, np.dtype(np.int64): 4}  # tflite TensorType INT32, INT64


def cast(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    dst = attr_dtype(node, "DstT")
    if dst == x.dtype:
        ctx.alias(node, x)
        return
    ctx.emit("CAST", node, [x], dtype=dst)


RULES = {
    "Add": _binary("ADD"),
    "AddV2": _binary("ADD"),
    "Sub": _binary("SUB"),
    "Mul": _binary("MUL"),
    "RealDiv": _binary("DIV"),
    "Div": _binary("DIV"),
    "FloorDiv": _plain_binary("FLOOR_DIV"),
    "Maximum": _plain_binary("MAXIMUM"),
    "Minimum": _plain_binary("MINIMUM"),
    "SquaredDifference": _plain_binary("SQUARED_DIFFERENCE"),
    "Pow": _plain_binary("POW"),
    "MatMul": matmul,
    "BatchMatMul": batch_matmul,
    "BatchMatMulV2": batch_matmul,
    "BatchMatMulV3": batch_matmul,
    "Mean": _reduce("MEAN"),
    "Sum": _reduce("SUM"),
    "Max": _reduce("REDUCE_MAX"),
    "Min": _reduce("REDUCE_MIN"),
    "Prod": _reduce("REDUCE_PROD"),
    "ArgMax": _arg("ARG_MAX"),
    "ArgMin": _arg("ARG_MIN"),
    "Cast": cast,
    **{tf_op: _comparison(tfl) for tf_op, tfl in (
        ("Greater", "GREATER"), ("GreaterEqual", "GREATER_EQUAL"), ("Less", "LESS"),
        ("LessEqual", "LESS_EQUAL"), ("Equal", "EQUAL"), ("NotEqual", "NOT_EQUAL"),
        ("LogicalAnd", "LOGICAL_AND"), ("LogicalOr", "LOGICAL_OR"))},
}
