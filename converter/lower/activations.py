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
        x = ctx.input(node, 0)
        integer = _INTEGER.get(tfl_type) if x.dtype.kind in "iu" else None
        if integer is not None:
            integer(ctx, node, x)
        elif tfl_type == "ZEROS_LIKE" and x.dtype == np.bool_:
            # TFLite's ZEROS_LIKE takes int32/int64/float32 only (zeros_like.cc); x != x is
            # false everywhere.
            ctx.emit("NOT_EQUAL", node, [x, x], dtype=np.dtype(np.bool_))
        else:
            ctx.emit(tfl_type, node, [x])
    rule.__name__ = tfl_type.lower()
    return rule


# TF defines Relu, Relu6, Square and Round on integers; TFLite's RELU, RELU6 (activations.cc),
# SQUARE (elementwise.cc) and ROUND (round.cc) kernels take floats (or quantized int8) only,
# so integer tensors get the same values from integer-capable ops.
def _int_relu(ctx: LowerCtx, node, x, top=None) -> None:
    zero = ctx.const(node, "zero", np.zeros((), x.dtype))
    if top is None:
        ctx.emit("MAXIMUM", node, [x, zero])
        return
    low = ctx.graph.tensor(f"{node.name}/max", x.dtype)
    ctx.graph.add_op("MAXIMUM", [x, zero], [low], name=node.name)
    ctx.emit("MINIMUM", node, [low, ctx.const(node, "six", np.full((), top, x.dtype))])


_INTEGER = {
    "RELU": _int_relu,
    "RELU6": lambda ctx, node, x: _int_relu(ctx, node, x, top=6),
    "SQUARE": lambda ctx, node, x: ctx.emit("MUL", node, [x, x],
                                            dict(fused_activation_function=0)),
    "ROUND": lambda ctx, node, x: ctx.alias(node, x),   # an integer is already round
}


def leaky_relu(ctx: LowerCtx, node) -> None:
    ctx.emit("LEAKY_RELU", node, [ctx.input(node, 0)],
             dict(alpha=attr_float(node, "alpha", 0.2)))


def softmax(ctx: LowerCtx, node) -> None:
    ctx.emit("SOFTMAX", node, [ctx.input(node, 0)], dict(beta=1.0))


def log_softmax(ctx: LowerCtx, node) -> None:
    ctx.emit("LOG_SOFTMAX", node, [ctx.input(node, 0)])


def softplus(ctx: LowerCtx, node) -> None:
    """TFLite has no SOFTPLUS: log(1 + exp(x)) as EXP, ADD 1, LOG, as TFLite's converter
    writes it. TF's kernel returns x where exp(x) overflows (softplus_op.h); this gives
    infinity there (x > ~88.7). Exact for all x would take a MINIMUM before the EXP and a
    MAXIMUM with x after the LOG: two more ops, over TFLite's op count."""
    x = ctx.input(node, 0)
    e = ctx.graph.tensor(f"{node.name}/exp", x.dtype)
    ctx.graph.add_op("EXP", [x], [e], name=node.name)
    e1 = ctx.graph.tensor(f"{node.name}/add", x.dtype)
    ctx.graph.add_op("ADD", [e, ctx.const(node, "one", np.float32(1), x.dtype)], [e1],
                     dict(fused_activation_function=0), name=node.name)
    ctx.emit("LOG", node, [e1])


def erf(ctx: LowerCtx, node) -> None:
    """Erf / Erfc -> the converter-only ERF / ERFC: TFLite has no such builtin (TF's converter
    needs FlexErf / FlexErfc for a bare one). identify_gelu turns GELU written with them into
    GELU; decompose_erf writes any other as builtins."""
    x = ctx.input(node, 0)
    y = ctx.emit(node.op.upper(), node, [x])
    y.shape = x.shape


_FLOAT_IN = spec(In("the input", FLOAT))
RULES = {
    **{tf_op: Lowering(_unary(tfl), spec(In("the input", dtypes)))
       for tf_op, (tfl, dtypes) in UNARY.items()},
    "LeakyRelu": Lowering(leaky_relu, spec(In("the input", FLOAT),
                                           attrs=(Attr("alpha", "f", lo=-1e30, hi=1e30),))),
    "Softmax": Lowering(softmax, _FLOAT_IN),
    "LogSoftmax": Lowering(log_softmax, _FLOAT_IN),
    "Softplus": Lowering(softplus, _FLOAT_IN),
    "Erf": Lowering(erf, _FLOAT_IN),
    "Erfc": Lowering(erf, _FLOAT_IN),
}
