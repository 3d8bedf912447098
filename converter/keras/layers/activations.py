"""Activations: the `activation=` argument of every layer, and the activation layers (ReLU,
LeakyReLU, PReLU, ELU, Softmax, Activation). Each is written as the TF ops tf.keras emits,
so the converter's passes see the same patterns (identify_gelu, identify_hard_swish,
identify_relu_clamps, identify_prelu) and write the same TFLite ops TF's converter does."""

from __future__ import annotations

import math

import numpy as np

from ..context import KTensor, LayerCtx

SELU_ALPHA = 1.6732632423543772
SELU_SCALE = 1.0507009873554805


def _scalar(ctx: LayerCtx, suffix: str, value: float) -> str:
    return ctx.g.const(f"{ctx.prefix}/{suffix}", np.float32(value))


def _unary(ctx, x: str, op: str, suffix=None) -> str:
    return ctx.op(suffix or op, op, [x])


def _binary(ctx, op: str, a: str, b: str, suffix=None) -> str:
    return ctx.op(suffix or op, op, [a, b])


def activation_name(spec) -> str:
    """'relu', or the function name a serialized activation dict holds."""
    if isinstance(spec, dict):
        inner = spec.get("config")
        spec = inner if isinstance(inner, str) else spec.get("class_name", "linear")
    return str(spec or "linear")


def activate(ctx: LayerCtx, x: KTensor, spec) -> KTensor:
    """x through the named activation (Keras' `activations.get`)."""
    name = activation_name(spec)
    if name in ("linear", "None"):
        return x
    fn = FUNCTIONS.get(name)
    if fn is None:
        ctx.fail(f"activation {name!r} is not one edgelite writes")
    return KTensor(fn(ctx, x.ref, x), x.shape, x.dtype, x.mask)


def _relu_family(ctx, x, negative_slope=0.0, max_value=None, threshold=0.0):
    """keras ReLU(max_value, negative_slope, threshold) in the ops tf.keras writes."""
    if threshold == 0.0 and negative_slope == 0.0:
        if max_value is None:
            return _unary(ctx, x, "Relu")
        if max_value == 6.0:
            return _unary(ctx, x, "Relu6")
        return _binary(ctx, "Minimum", _unary(ctx, x, "Relu"), _scalar(ctx, "max", max_value))
    if threshold == 0.0 and max_value is None:
        return ctx.op("LeakyRelu", "LeakyRelu", [x], alpha=float(negative_slope))
    # general form: x >= threshold ? x : slope * (x - threshold), clipped above at max_value
    below = _binary(ctx, "Mul", _binary(ctx, "Sub", x, _scalar(ctx, "threshold", threshold)),
                    _scalar(ctx, "slope", negative_slope), "slope_mul")
    keep = ctx.op("GreaterEqual", "GreaterEqual", [x, _scalar(ctx, "thr", threshold)])
    y = ctx.op("SelectV2", "SelectV2", [keep, x, below])
    if max_value is not None:
        y = _binary(ctx, "Minimum", y, _scalar(ctx, "max", max_value))
    return y


def _hard_sigmoid(ctx, x):
    if ctx.keras2:  # tf.keras: clip(0.2 x + 0.5, 0, 1)
        y = _binary(ctx, "AddV2", _binary(ctx, "Mul", x, _scalar(ctx, "slope", 0.2)),
                    _scalar(ctx, "half", 0.5))
        return _binary(ctx, "Maximum", _binary(ctx, "Minimum", y, _scalar(ctx, "one", 1.0)),
                       _scalar(ctx, "zero", 0.0))
    return _relu6_plus3_over6(ctx, x)


def _relu6_plus3_over6(ctx, x):
    """relu6(x + 3) / 6 (Keras 3 hard_sigmoid; MobileNetV3's hard sigmoid)."""
    shifted = _binary(ctx, "AddV2", x, _scalar(ctx, "three", 3.0))
    return _binary(ctx, "Mul", _unary(ctx, shifted, "Relu6"), _scalar(ctx, "sixth", 1 / 6))


def _gelu(ctx, x, approximate=False):
    half_x = _binary(ctx, "Mul", x, _scalar(ctx, "half", 0.5))
    if approximate:
        cube = _binary(ctx, "Mul", _binary(ctx, "Mul", x, x, "square"), x, "cube")
        inner = _binary(ctx, "AddV2", x, _binary(ctx, "Mul", cube,
                                                  _scalar(ctx, "c", 0.044715), "cube_c"))
        gate = _unary(ctx, _binary(ctx, "Mul", inner,
                                   _scalar(ctx, "k", math.sqrt(2 / math.pi)), "scaled"), "Tanh")
    else:
        gate = _unary(ctx, _binary(ctx, "Mul", x, _scalar(ctx, "rsqrt2", 1 / math.sqrt(2)),
                                   "scaled"), "Erf")
    return _binary(ctx, "Mul", half_x, _binary(ctx, "AddV2", gate, _scalar(ctx, "one", 1.0)),
                   "gelu")


def _selu(ctx, x):
    negative = _binary(ctx, "Mul", _unary(ctx, x, "Elu"), _scalar(ctx, "alpha", SELU_ALPHA))
    positive = ctx.op("Greater", "Greater", [x, _scalar(ctx, "zero", 0.0)])
    y = ctx.op("SelectV2", "SelectV2", [positive, x, negative])
    return _binary(ctx, "Mul", y, _scalar(ctx, "scale", SELU_SCALE), "selu")


def _softsign(ctx, x):
    return _binary(ctx, "RealDiv", x, _binary(ctx, "AddV2", _unary(ctx, x, "Abs"),
                                              _scalar(ctx, "one", 1.0)))


def _swish(ctx, x):
    return _binary(ctx, "Mul", x, _unary(ctx, x, "Sigmoid"), "swish")


def _softmax_last(ctx, x, t=None):
    return _unary(ctx, x, "Softmax")


FUNCTIONS = {
    "relu": lambda ctx, x, t: _relu_family(ctx, x),
    "relu6": lambda ctx, x, t: _unary(ctx, x, "Relu6"),
    "leaky_relu": lambda ctx, x, t: _relu_family(ctx, x, 0.2),
    "sigmoid": lambda ctx, x, t: _unary(ctx, x, "Sigmoid"),
    "tanh": lambda ctx, x, t: _unary(ctx, x, "Tanh"),
    "softmax": lambda ctx, x, t: _softmax_last(ctx, x),
    "log_softmax": lambda ctx, x, t: _unary(ctx, x, "LogSoftmax"),
    "elu": lambda ctx, x, t: _unary(ctx, x, "Elu"),
    "selu": lambda ctx, x, t: _selu(ctx, x),
    "softplus": lambda ctx, x, t: _unary(ctx, x, "Softplus"),
    "softsign": lambda ctx, x, t: _softsign(ctx, x),
    "swish": lambda ctx, x, t: _swish(ctx, x),
    "silu": lambda ctx, x, t: _swish(ctx, x),
    "gelu": lambda ctx, x, t: _gelu(ctx, x),
    "hard_sigmoid": lambda ctx, x, t: _hard_sigmoid(ctx, x),
    "hard_swish": lambda ctx, x, t: _binary(ctx, "Mul", x, _relu6_plus3_over6(ctx, x), "hswish"),
    "hard_silu": lambda ctx, x, t: _binary(ctx, "Mul", x, _relu6_plus3_over6(ctx, x), "hswish"),
    "exponential": lambda ctx, x, t: _unary(ctx, x, "Exp"),
    "mish": lambda ctx, x, t: _binary(ctx, "Mul", x, _unary(ctx, _unary(ctx, x, "Softplus"),
                                                            "Tanh"), "mish"),
}


# the activation layers -------------------------------------------------------------------
def activation_layer(ctx: LayerCtx) -> KTensor:
    return activate(ctx, ctx.input(), ctx.cfg("activation", "linear"))


def relu_layer(ctx: LayerCtx) -> KTensor:
    x = ctx.input()
    max_value = ctx.config.get("max_value")
    ref = _relu_family(ctx, x.ref, float(ctx.cfg("negative_slope", 0.0)),
                       None if max_value is None else float(max_value),
                       float(ctx.cfg("threshold", 0.0)))
    return KTensor(ref, x.shape, x.dtype, x.mask)


def leaky_relu_layer(ctx: LayerCtx) -> KTensor:
    x = ctx.input()
    slope = ctx.config.get("negative_slope", ctx.config.get("alpha", 0.3))
    return KTensor(_relu_family(ctx, x.ref, float(slope)), x.shape, x.dtype, x.mask)


def elu_layer(ctx: LayerCtx) -> KTensor:
    x = ctx.input()
    alpha = float(ctx.cfg("alpha", 1.0))
    ref = _unary(ctx, x.ref, "Elu")
    if alpha != 1.0:  # alpha * elu(x) below zero, x above
        positive = ctx.op("Greater", "Greater", [x.ref, _scalar(ctx, "zero", 0.0)])
        ref = ctx.op("SelectV2", "SelectV2",
                     [positive, x.ref, _binary(ctx, "Mul", ref, _scalar(ctx, "alpha", alpha))])
    return KTensor(ref, x.shape, x.dtype, x.mask)


def prelu_layer(ctx: LayerCtx) -> KTensor:
    """relu(x) - alpha * relu(-x), as tf.keras writes it (identify_prelu matches it)."""
    x = ctx.input()
    (alpha,) = ctx.weights(["alpha"])
    pos = _unary(ctx, x.ref, "Relu")
    neg = _binary(ctx, "Mul", ctx.op("Neg", "Neg", [ctx.const("alpha", alpha)]),
                  _unary(ctx, ctx.op("Neg_x", "Neg", [x.ref]), "Relu", "Relu_neg"))
    return KTensor(_binary(ctx, "AddV2", pos, neg), x.shape, x.dtype, x.mask)


def softmax_layer(ctx: LayerCtx) -> KTensor:
    x = ctx.input()
    axis = ctx.cfg("axis", -1)
    axis = axis[0] if isinstance(axis, list) and len(axis) == 1 else axis
    if not isinstance(axis, int) or axis not in (-1, x.rank - 1):
        ctx.fail(f"softmax over axis {axis}: edgelite writes the last axis only")
    return KTensor(_softmax_last(ctx, x.ref), x.shape, x.dtype, x.mask)


RULES = {
    "Activation": activation_layer,
    "ReLU": relu_layer,
    "LeakyReLU": leaky_relu_layer,
    "ELU": elu_layer,
    "PReLU": prelu_layer,
    "Softmax": softmax_layer,
}
