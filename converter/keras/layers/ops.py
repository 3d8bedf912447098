"""Op layers: functions called on symbolic tensors in a Functional model. Keras 3 stores
`keras.ops` calls as layers of module keras.src.ops.* (a mask's `not_equal(tokens, 0)`,
`x * 2`); tf.keras stores `tf.*` calls as TFOpLambda layers naming the function
(`math.multiply`, `__operators__.add`, `nn.relu6`). The elementwise ones and reductions are
written here; an argument may be a tensor or a number."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..context import KTensor, LayerCtx
from .merge import _broadcast_shape

BOOL = np.dtype(bool)


def _operand(ctx: LayerCtx, value, like: KTensor, k: int) -> KTensor:
    if isinstance(value, KTensor):
        return value
    if isinstance(value, (bool, int, float)):
        ref = ctx.g.const(f"{ctx.prefix}/y{k}", np.asarray(value, like.dtype))
        return KTensor(ref, (), like.dtype)
    ctx.fail(f"argument {k} is a {type(value).__name__}: edgelite reads tensors and numbers")


def binary(op_type: str, out_bool: bool = False):
    def rule(ctx: LayerCtx) -> KTensor:
        args = list(ctx.args)
        tensors = [a for a in args if isinstance(a, KTensor)]
        if len(args) != 2 or not tensors:
            ctx.fail(f"called with {len(args)} arguments, {len(tensors)} tensors")
        a, b = (_operand(ctx, v, tensors[0], k) for k, v in enumerate(args))
        ref = ctx.op(op_type, op_type, [a.ref, b.ref],
                     dtype=None if a.dtype == BOOL else a.dtype)
        shape = _broadcast_shape(ctx, [a.shape, b.shape])
        return KTensor(ref, shape, BOOL if out_bool else a.dtype)
    return rule


def reduction(op_type: str):
    """keras.ops any / all / mean / sum / max / min over `axis` (None: all), `keepdims`."""
    def rule(ctx: LayerCtx) -> KTensor:
        x = ctx.input()
        axis = ctx.config.get("axis")
        axes = list(range(x.rank)) if axis is None else \
            [axis] if isinstance(axis, int) else list(axis)
        axes = sorted({int(a) % x.rank for a in axes})
        keep = bool(ctx.cfg("keepdims", False))
        ref = ctx.op(op_type, op_type, [x.ref, ctx.int_const("axis", axes)],
                     dtype=None if x.dtype == BOOL else x.dtype, keep_dims=keep,
                     Tidx=np.dtype(np.int32))
        shape = tuple(1 if a in axes else d for a, d in enumerate(x.shape)) if keep else \
            tuple(d for a, d in enumerate(x.shape) if a not in axes)
        return KTensor(ref, shape, x.dtype)
    return rule


# tf.keras TFOpLambda functions: binary ones (x and y), unary ones (x)
TF_BINARY = {"__operators__.add": "AddV2", "math.add": "AddV2", "math.multiply": "Mul",
             "math.subtract": "Sub", "math.truediv": "RealDiv", "math.maximum": "Maximum",
             "math.minimum": "Minimum"}
TF_UNARY = {"nn.relu": "Relu", "nn.relu6": "Relu6", "math.sigmoid": "Sigmoid",
            "math.tanh": "Tanh", "math.exp": "Exp", "math.sqrt": "Sqrt", "math.square": "Square",
            "math.abs": "Abs", "math.negative": "Neg"}


def tf_op_lambda(ctx: LayerCtx) -> KTensor:
    """A tf.keras TFOpLambda: tf.<function>(x, y=...) for the functions above."""
    function = str(ctx.cfg("function", ""))
    x = ctx.input()
    if function in TF_UNARY:
        return KTensor(ctx.op(TF_UNARY[function], TF_UNARY[function], [x.ref]), x.shape,
                       x.dtype, x.mask)
    if function in TF_BINARY:
        y = ctx.kwargs.get("y", ctx.args[1] if len(ctx.args) > 1 else None)
        if y is None:
            ctx.fail(f"tf.{function} called without its second operand")
        return binary(TF_BINARY[function])(replace(ctx, args=[x, y]))
    ctx.fail(f"tf.{function} is not a function edgelite reads in a TFOpLambda layer")


def convert_to_tensor(ctx: LayerCtx) -> KTensor:
    """keras.ops.convert_to_tensor on a tensor: itself."""
    return ctx.input()


RULES = {
    "ConvertToTensor": convert_to_tensor,
    "LogicalOr": binary("LogicalOr", True),
    "Any": reduction("Any"), "Mean": reduction("Mean"),
    "Sum": reduction("Sum"), "Max": reduction("Max"), "Min": reduction("Min"),
    "NotEqual": binary("NotEqual", True),
    "Add": binary("AddV2"), "Subtract": binary("Sub"), "Multiply": binary("Mul"),
    "TrueDivide": binary("RealDiv"),
    "Maximum": binary("Maximum"), "Minimum": binary("Minimum"),
}
