"""Element-wise activations and unary math: one TF op -> one TFLite op (Softplus: three)."""

from __future__ import annotations

import numpy as np

from .context import LowerCtx, attr_float

UNARY = {
    "Relu": "RELU", "Relu6": "RELU6", "Elu": "ELU", "Sigmoid": "LOGISTIC", "Tanh": "TANH",
    "Exp": "EXP", "Log": "LOG", "Sqrt": "SQRT", "Rsqrt": "RSQRT", "Square": "SQUARE",
    "Abs": "ABS", "Neg": "NEG", "Floor": "FLOOR", "Ceil": "CEIL", "Sin": "SIN", "Cos": "COS",
    "Round": "ROUND", "Sign": "SIGN", "LogicalNot": "LOGICAL_NOT", "ZerosLike": "ZEROS_LIKE",
}


def _unary(tfl_type: str):
    def rule(ctx: LowerCtx, node) -> None:
        ctx.emit(tfl_type, node, [ctx.input(node, 0)])
    rule.__name__ = tfl_type.lower()
    return rule


def leaky_relu(ctx: LowerCtx, node) -> None:
    ctx.emit("LEAKY_RELU", node, [ctx.input(node, 0)],
             dict(alpha=attr_float(node, "alpha", 0.2)))


def softmax(ctx: LowerCtx, node) -> None:
    ctx.emit("SOFTMAX", node, [ctx.input(node, 0)], dict(beta=1.0))


def log_softmax(ctx: LowerCtx, node) -> None:
    ctx.emit("LOG_SOFTMAX", node, [ctx.input(node, 0)])


def softplus(ctx: LowerCtx, node) -> None:
    """TFLite has no SOFTPLUS: log(1 + exp(x)) as EXP, ADD 1, LOG (fine below x ~ 88)."""
    x = ctx.input(node, 0)
    e = ctx.graph.tensor(f"{node.name}/exp", x.dtype)
    ctx.graph.add_op("EXP", [x], [e], name=node.name)
    e1 = ctx.graph.tensor(f"{node.name}/add", x.dtype)
    ctx.graph.add_op("ADD", [e, ctx.const(node, "one", np.float32(1), x.dtype)], [e1],
                     dict(fused_activation_function=0), name=node.name)
    ctx.emit("LOG", node, [e1])


RULES = {
    **{tf_op: _unary(tfl) for tf_op, tfl in UNARY.items()},
    "LeakyRelu": leaky_relu,
    "Softmax": softmax,
    "LogSoftmax": log_softmax,
    "Softplus": softplus,
}
