"""Element-wise activations and unary math: one TF op -> one TFLite op (Softplus: three)."""

from __future__ import annotations

import numpy as np

from .context import LowerCtx, attr_float
from .spec import ANY, BOOL, FLOAT, REAL, Attr, In, Lowering, spec

# TF op -> (TFLite op, the input dtypes TF's op definition allows; no complex types).
UNARY = {
    "Relu": ("RELU", REAL), "Relu6": ("RELU6", REAL), "Elu": ("ELU", FLOAT),
    "Sigmoid": ("LOGISTIC", FLOAT), "Tanh": ("TANH", FLOAT), "Exp": ("EXP", FLOAT),
    "Log": ("LOG", FLOAT), "Sqrt": ("SQRT", FLOAT), "Rsqrt": ("RSQRT", FLOAT),
    "Square": ("SQUARE", REAL), "Abs": ("ABS", REAL), "Neg": ("NEG", REAL),
    "Floor": ("FLOOR", FLOAT), "Ceil": ("CEIL", FLOAT), "Sin": ("SIN", FLOAT),
    "Cos": ("COS", FLOAT), "Round": ("ROUND", REAL), "Sign": ("SIGN", REAL),
    "LogicalNot": ("LOGICAL_NOT", BOOL), "ZerosLike": ("ZEROS_LIKE", ANY),
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


_FLOAT_IN = spec(In("the input", FLOAT))
RULES = {
    **{tf_op: Lowering(_unary(tfl), spec(In("the input", dtypes)))
       for tf_op, (tfl, dtypes) in UNARY.items()},
    "LeakyRelu": Lowering(leaky_relu, spec(In("the input", FLOAT),
                                           attrs=(Attr("alpha", "f", lo=-1e30, hi=1e30),))),
    "Softmax": Lowering(softmax, _FLOAT_IN),
    "LogSoftmax": Lowering(log_softmax, _FLOAT_IN),
    "Softplus": Lowering(softplus, _FLOAT_IN),
}
