"""More keras.ops functions called on symbolic tensors (Keras 3 stores each call as a layer of
module keras.src.ops.*, named by the function's class): the elementwise math and
activations (`ops.sigmoid(x)`, `ops.sqrt(x)`, `x ** 2`), comparisons and `where` (masks
written by hand), `clip`, and the shape functions transpose / reshape / expand_dims /
squeeze / concatenate / matmul. Each writes the TensorFlow nodes tf's own implementation
of the function writes, so the converter's lowering and passes treat them as in a
SavedModel."""

from __future__ import annotations

import numpy as np

from ..context import KTensor, LayerCtx, static
from . import activations as act
from .merge import _broadcast_shape, concatenate
from .ops import BOOL, _operand, binary

I32 = np.dtype(np.int32)


def _elementwise(write):
    """A unary rule: `write(ctx, x_ref) -> ref`, same shape, dtype and mask as x."""
    def rule(ctx: LayerCtx) -> KTensor:
        x = ctx.input()
        return KTensor(write(ctx, x.ref), x.shape, x.dtype, x.mask)
    return rule


def _tf_unary(op_type: str):
    def rule(ctx: LayerCtx) -> KTensor:
        x = ctx.input()
        ref = ctx.op(op_type, op_type, [x.ref], dtype=None if x.dtype == BOOL else x.dtype)
        return KTensor(ref, x.shape, x.dtype, x.mask)
    return rule


def _activation(name: str):
    return _elementwise(lambda ctx, x: act.FUNCTIONS[name](ctx, x, None))


UNARY = {"Exp": "Exp", "Sqrt": "Sqrt", "Square": "Square", "Absolute": "Abs",
         "Negative": "Neg", "Log": "Log", "Rsqrt": "Rsqrt", "Tanh": "Tanh",
         "Floor": "Floor", "Ceil": "Ceil", "Sin": "Sin", "Cos": "Cos", "Sign": "Sign",
         "LogicalNot": "LogicalNot"}
ACTIVATIONS = {"Sigmoid": "sigmoid", "Relu": "relu", "Relu6": "relu6", "Silu": "silu",
               "Softplus": "softplus", "Softsign": "softsign", "Elu": "elu", "Selu": "selu"}
COMPARISONS = {"Equal": "Equal", "Greater": "Greater", "GreaterEqual": "GreaterEqual",
               "Less": "Less", "LessEqual": "LessEqual", "LogicalAnd": "LogicalAnd"}


def reciprocal(ctx: LayerCtx) -> KTensor:
    """1 / x (a RealDiv: TF's converter writes tf.math.reciprocal as a DIV too)."""
    return _elementwise(lambda c, x: act._binary(c, "RealDiv", act._scalar(c, "one", 1.0), x,
                                                 "reciprocal"))(ctx)


def gelu(ctx: LayerCtx) -> KTensor:
    approximate = bool(ctx.cfg("approximate", True))   # keras.ops.gelu's default
    return _elementwise(lambda c, x: act._gelu(c, x, approximate))(ctx)


def leaky_relu(ctx: LayerCtx) -> KTensor:
    slope = float(ctx.cfg("negative_slope", 0.2))
    return _elementwise(lambda c, x: act._relu_family(c, x, slope))(ctx)


def hard_silu(ctx: LayerCtx) -> KTensor:
    return _elementwise(lambda c, x: act._binary(c, "Mul", x, act._relu6_plus3_over6(c, x),
                                                 "hswish"))(ctx)


def clip(ctx: LayerCtx) -> KTensor:
    """clip(x, x_min, x_max): Minimum(Maximum(x, x_min), x_max), as tf.clip_by_value."""
    x = ctx.input()
    lo, hi = ctx.cfg("x_min"), ctx.cfg("x_max")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (lo, hi)):
        ctx.fail(f"clips to ({lo!r}, {hi!r}): edgelite reads constant numbers")
    low = ctx.op("Maximum", "Maximum", [x.ref, ctx.const("x_min", np.asarray(lo, x.dtype))],
                 dtype=x.dtype)
    ref = ctx.op("Minimum", "Minimum", [low, ctx.const("x_max", np.asarray(hi, x.dtype))],
                 dtype=x.dtype)
    return KTensor(ref, x.shape, x.dtype, x.mask)


def where(ctx: LayerCtx) -> KTensor:
    """where(condition, x1, x2) with a bool tensor condition: SelectV2 (numbers allowed)."""
    args = list(ctx.args)
    if len(args) != 3 or not isinstance(args[0], KTensor) or args[0].dtype != BOOL:
        ctx.fail("is not where(bool tensor, x1, x2)")
    values = [a for a in args[1:] if isinstance(a, KTensor)]
    if not values:
        ctx.fail("selects between two numbers: edgelite reads where() on a tensor")
    a, b = (_operand(ctx, v, values[0], k + 1) for k, v in enumerate(args[1:]))
    ref = ctx.op("SelectV2", "SelectV2", [args[0].ref, a.ref, b.ref], dtype=a.dtype)
    return KTensor(ref, _broadcast_shape(ctx, [args[0].shape, a.shape, b.shape]), a.dtype)


def _axis(ctx: LayerCtx, axis, rank: int) -> int:
    if not isinstance(axis, int) or isinstance(axis, bool) or not -rank <= axis < rank:
        ctx.fail(f"axis {axis!r} is not an axis of a rank-{rank} tensor")
    return axis % rank


def transpose(ctx: LayerCtx) -> KTensor:
    x = ctx.input()
    axes = ctx.cfg("axes")
    perm = list(range(x.rank))[::-1] if axes is None else [_axis(ctx, a, x.rank) for a in axes]
    if sorted(perm) != list(range(x.rank)):
        ctx.fail(f"axes {axes} do not permute the axes of a rank-{x.rank} tensor")
    ref = ctx.op("transpose", "Transpose", [x.ref, ctx.int_const("perm", perm)], dtype=x.dtype,
                 Tperm=I32)
    return KTensor(ref, tuple(x.shape[p] for p in perm), x.dtype)


def reshape(ctx: LayerCtx) -> KTensor:
    """reshape(x, newshape) keeping the batch: newshape's first entry is -1 (or None) or
    the batch's own size, and the other entries hold x's other elements."""
    x = ctx.input()
    target = [-1 if d is None else int(d) for d in ctx.cfg("newshape", [])]
    total = int(np.prod(static(ctx, x)))
    rest = target[1:]
    if rest.count(-1) == 1 and target[:1] != [-1]:
        known = int(np.prod([d for d in rest if d != -1]))
        if known > 0 and total % known == 0:
            rest[rest.index(-1)] = total // known
    if not target or target[0] not in (-1, x.shape[0]) or any(d < 0 for d in rest) or \
            int(np.prod(rest)) != total:
        shown = ["?" if d is None else d for d in x.shape]
        ctx.fail(f"reshapes {shown} to {target}: edgelite reads reshapes that keep the "
                 "batch axis")
    return ctx.reshape(x, (x.shape[0], *rest))


def expand_dims(ctx: LayerCtx) -> KTensor:
    x = ctx.input()
    axis = _axis(ctx, ctx.cfg("axis"), x.rank + 1)
    ref = ctx.op("ExpandDims", "ExpandDims", [x.ref, ctx.int_const("axis", axis)],
                 dtype=x.dtype, Tdim=I32)
    return KTensor(ref, x.shape[:axis] + (1,) + x.shape[axis:], x.dtype)


def squeeze(ctx: LayerCtx) -> KTensor:
    x = ctx.input()
    axis = ctx.cfg("axis")
    axes = [i for i, d in enumerate(x.shape) if d == 1] if axis is None else \
        sorted({_axis(ctx, a, x.rank) for a in (axis if isinstance(axis, list) else [axis])})
    if not axes or any(x.shape[a] != 1 for a in axes):
        ctx.fail(f"squeezes axes {axes} of shape {list(x.shape)}: each must have size 1")
    ref = ctx.op("Squeeze", "Squeeze", [x.ref], dtype=x.dtype, squeeze_dims=axes)
    return KTensor(ref, tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype)


def matmul(ctx: LayerCtx) -> KTensor:
    """matmul(a, b) of two tensors of rank >= 3 (batched): BatchMatMulV2."""
    tensors = ctx.inputs()
    if len(ctx.args) != 2 or len(tensors) != 2 or min(t.rank for t in tensors) < 3:
        ctx.fail("is not a batched matmul of two tensors of rank 3 or more")
    a, b = tensors
    if None not in (a.shape[-1], b.shape[-2]) and a.shape[-1] != b.shape[-2]:
        ctx.fail(f"multiplies shapes {list(a.shape)} and {list(b.shape)}")
    ref = ctx.op("MatMul", "BatchMatMulV2", [a.ref, b.ref], dtype=a.dtype, adj_x=False,
                 adj_y=False)
    batch = _broadcast_shape(ctx, [a.shape[:-2], b.shape[:-2]])
    return KTensor(ref, batch + (a.shape[-2], b.shape[-1]), a.dtype)


RULES = {
    **{cls: _tf_unary(op) for cls, op in UNARY.items()},
    **{cls: _activation(name) for cls, name in ACTIVATIONS.items()},
    **{cls: binary(op, True) for cls, op in COMPARISONS.items()},
    "Power": binary("Pow"), "Reciprocal": reciprocal, "Gelu": gelu, "LeakyRelu": leaky_relu,
    "HardSigmoid": _elementwise(act._relu6_plus3_over6), "HardSilu": hard_silu,
    "Softmax": act.softmax_layer, "Clip": clip, "Where": where,
    "Transpose": transpose, "Reshape": reshape, "ExpandDims": expand_dims,
    "Squeeze": squeeze, "Concatenate": concatenate, "Matmul": matmul,
}
