"""Neural-net layer ops: BiasAdd, FusedBatchNorm*, MaxPool/AvgPool, LRN, TopKV2."""

from __future__ import annotations

import numpy as np

from edgelite.errors import GraphError, ShapeError, UnsupportedOpError
from ..ir import Activation, Padding
from .context import (LowerCtx, attr_bool, attr_dtype, attr_float, attr_int, attr_str, fail,
                      nhwc_pair, require_nhwc)
from .spec import (DATA_FORMAT, FLOAT, INDEX, REAL, Attr, In, Lowering, padding, scalar_input,
                   spec, window)


def bias_add(ctx: LowerCtx, node) -> None:
    """BiasAdd is an ADD broadcast over the last (channel) axis; fuse_bias folds it."""
    require_nhwc(node)
    x, bias = ctx.inputs(node)
    if x.shape is not None and bias.shape is not None and (
            not x.shape or x.shape[-1] != bias.shape[0]):
        raise fail(ShapeError, node, f"the bias has {bias.shape[0]} values but the input "
                   f"(shape {list(x.shape)}) has {x.shape[-1] if x.shape else 'no'} channels")
    ctx.emit("ADD", node, [x, bias], dict(fused_activation_function=Activation.NONE))


_BN_PARAMS = ("scale", "offset", "mean", "variance")


def fused_batch_norm(ctx: LowerCtx, node) -> None:
    """Inference batch norm y = (x - mean) * gamma / sqrt(var + eps) + beta as MUL then ADD.

    With s = gamma / sqrt(var + eps) and b = beta - mean * s this is y = x * s + b; the
    fold_batchnorm pass then moves s into the preceding conv's weights and b into its bias.
    """
    # TF's default is true (nn_ops.cc "is_training: bool = true"): a node without the
    # attribute -- a graph saved with default attributes stripped -- is in training mode.
    if attr_bool(node, "is_training", True):
        batch_norm_training(ctx, node)
        return
    require_nhwc(node)
    x = ctx.input(node, 0)
    gamma, beta, mean, var = params = [ctx.const_input(node, i, what).astype(np.float64)
                                       for i, what in enumerate(_BN_PARAMS, start=1)]
    channels = x.shape[-1] if x.shape else None
    for what, p in zip(_BN_PARAMS, params):
        if p.shape != gamma.shape or (channels is not None and p.shape != (channels,)):
            raise fail(ShapeError, node, f"the {what} has shape {list(p.shape)} but the input "
                       f"(shape {list(x.shape) if x.shape is not None else '?'}) has "
                       f"{channels if channels is not None else gamma.size} channels")
        if not np.all(np.isfinite(p)):
            raise fail(GraphError, node, f"the {what} holds NaN or infinity; the model's "
                       "weights are corrupt")
    eps = attr_float(node, "epsilon", 1e-4)
    if np.any(var + eps <= 0):
        raise fail(GraphError, node, f"variance + epsilon ({eps}) is not positive, so "
                   "1/sqrt(variance + epsilon) is undefined; the model's weights are corrupt")
    s = gamma / np.sqrt(var + eps)
    b = beta - mean * s
    scaled = ctx.graph.tensor(f"{node.name}/mul", x.dtype)
    ctx.graph.add_op("MUL", [x, ctx.const(node, "scale", s, x.dtype)], [scaled],
                     dict(fused_activation_function=Activation.NONE), name=node.name)
    ctx.emit("ADD", node, [scaled, ctx.const(node, "offset", b, x.dtype)],
             dict(fused_activation_function=Activation.NONE))


def batch_norm_training(ctx: LowerCtx, node) -> None:
    """Batch norm over the batch's own moments (is_training=true; Keras' LayerNormalization
    freezes to one: x reshaped to [1, rows, features, 1] NCHW, gamma 1 and beta 0, so each row
    is normalized over its features). y = (x - m) * gamma / sqrt(v + eps) + beta with m, v
    the mean and (biased) variance of each channel over the other three axes, as MEAN,
    SQUARED_DIFFERENCE, MEAN, ADD, RSQRT, SUB, MUL (+ MUL gamma, ADD beta unless 1 / 0): the
    moments TF's converter writes for it, without its NCHW <-> NHWC transposes. Only output
    0 (y) is lowered; a graph reading the batch statistics is refused by the reader."""
    x, gamma, beta = ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2)
    channel = 1 if attr_str(node, "data_format", "NHWC") == "NCHW" else 3
    for what, p in (("scale", gamma), ("offset", beta)):
        if x.shape is not None and p.shape is not None and p.shape != (x.shape[channel],):
            raise fail(ShapeError, node, f"the {what} has shape {list(p.shape)} but the input "
                       f"(shape {list(x.shape)}) has {x.shape[channel]} channels")
    axes = ctx.const(node, "axes", np.array([a for a in range(4) if a != channel], np.int32))
    eps = np.float32(attr_float(node, "epsilon", 1e-4))
    g = ctx.graph

    def op(type_, *inputs, **options):
        t = g.tensor(f"{node.name}/{type_.lower()}", x.dtype)
        if type_ in ("ADD", "SUB", "MUL"):
            options["fused_activation_function"] = Activation.NONE
        g.add_op(type_, list(inputs), [t], options, name=node.name)
        return t

    mean = op("MEAN", x, axes, keep_dims=True)
    var = op("MEAN", op("SQUARED_DIFFERENCE", x, mean), axes, keep_dims=True)
    inv = op("RSQRT", op("ADD", var, ctx.const(node, "epsilon", eps)))
    steps = [("MUL", inv)]
    # gamma and beta as [C, 1, 1] for NCHW; Keras' ones / zeros (FILLs of the input's shape
    # until fold_shapes runs) then go with remove_trivial_arithmetic.
    for type_, p, neutral in (("MUL", gamma, 1), ("ADD", beta, 0)):
        if p.is_const and np.all(p.data == neutral):
            continue
        if channel == 1:
            p = op("RESHAPE", p, ctx.const(node, "shape", np.array([-1, 1, 1], np.int32)))
        steps.append((type_, p))
    y = op("SUB", x, mean)
    for type_, operand in steps[:-1]:
        y = op(type_, y, operand)
    type_, operand = steps[-1]
    ctx.emit(type_, node, [y, operand], dict(fused_activation_function=Activation.NONE))


def _pool(tfl_type: str):
    def rule(ctx: LowerCtx, node) -> None:
        require_nhwc(node)
        kh, kw = nhwc_pair(node, "ksize")
        sh, sw = nhwc_pair(node, "strides")
        pad = attr_str(node, "padding")
        ctx.emit(tfl_type, node, [ctx.input(node, 0)], dict(
            padding=Padding[pad], stride_h=sh, stride_w=sw, filter_height=kh, filter_width=kw,
            fused_activation_function=Activation.NONE))
    rule.__name__ = tfl_type.lower()
    return rule


def lrn(ctx: LowerCtx, node) -> None:
    """LRN -> LOCAL_RESPONSE_NORMALIZATION, the attributes as they are (TF's converter
    does the same); the defaults are nn_ops.cc's."""
    ctx.emit("LOCAL_RESPONSE_NORMALIZATION", node, [ctx.input(node, 0)], dict(
        radius=attr_int(node, "depth_radius", 5), bias=attr_float(node, "bias", 1.0),
        alpha=attr_float(node, "alpha", 1.0), beta=attr_float(node, "beta", 0.5)))


def top_k_v2(ctx: LowerCtx, node) -> None:
    """TopKV2(x, k) -> (values, indices): the k largest entries of each row (last axis),
    largest first, equal values by lower index first (nn_ops.cc "TopKV2"). TOPK_V2 always
    returns that order, which sorted=false (any order) allows too. Its indices are int32
    or int16 (kernels/topk_v2.cc); int64 ones come from a CAST."""
    x = ctx.input(node, 0)
    k = int(np.asarray(ctx.const_input(node, 1, "k")).reshape(-1)[0])  # spec: scalar
    if x.shape is not None and not x.shape:
        raise fail(ShapeError, node, "the input is a scalar; TopKV2 needs at least one "
                   "dimension")
    n = None if x.shape is None else x.shape[-1]
    if k < 0 or (n is not None and k > n):
        raise fail(ShapeError, node, f"k = {k} must lie in [0, {n if n is not None else 'n'}], "
                   "n the size of the input's last dimension")
    index_type = attr_dtype(node, "index_type", np.dtype(np.int32))
    values = ctx.output(node, x.dtype, 0)
    if index_type == np.int64:
        indices = ctx.graph.tensor(f"{node.name}/indices_int32", np.int32)
    else:
        indices = ctx.output(node, index_type, 1)
    ctx.graph.add_op("TOPK_V2", [x, ctx.const(node, "k", np.int32(k))], [values, indices],
                     name=node.name)
    if index_type == np.int64:
        ctx.graph.add_op("CAST", [indices], [ctx.output(node, index_type, 1)], name=node.name)


# -- specs (TF op definitions: nn_ops.cc) ------------------------------------------------------
_BIAS_ADD = spec(In("the input", REAL), In("the bias", REAL, ranks=(1,)), attrs=(DATA_FORMAT,))
# FusedBatchNorm types everything T; V2/V3 type the four parameters U (float32 for half x).
_BN_ATTRS = (DATA_FORMAT, Attr("is_training", "b"), Attr("epsilon", "f", lo=0.0, hi=1e30))


def _batch_norm(param_type: str):
    # const: checked by the rules (training mode takes computed scale / offset: Keras' LN
    # fills them from the input's shape)
    params = (In(f"the {what}", FLOAT, param_type, ranks=(1,)) for what in _BN_PARAMS)
    return spec(In("the input", FLOAT, ranks=(4,)), *params, attrs=_BN_ATTRS)


# TOPK_V2 takes these values (kernels/topk_v2.cc); TF's k and indices may be int16 too.
_TOPK_VALUES = frozenset(map(np.dtype, (np.float32, np.int8, np.uint8, np.int16, np.int32,
                                        np.int64)))
_INDEX16 = INDEX | {np.dtype(np.int16)}
_TOPK = spec(In("the input", _TOPK_VALUES), scalar_input("k", _INDEX16, typed="Tk"),
             attrs=(Attr("sorted", "b"), Attr("index_type", "type", dtypes=_INDEX16)))

_POOL = spec(In("the input", REAL, ranks=(4,)),
             attrs=(DATA_FORMAT, window("ksize"), window("strides"), padding()))

# TFLite's kernel is float32 only (local_response_norm.cc); TF's also takes half types.
_LRN = spec(In("the input", frozenset({np.dtype(np.float32)}), ranks=(4,)), attrs=(
    Attr("depth_radius", "i", lo=0), *(Attr(a, "f", lo=-1e30, hi=1e30)
                                       for a in ("bias", "alpha", "beta"))))

RULES = {
    "BiasAdd": Lowering(bias_add, _BIAS_ADD),
    "FusedBatchNorm": Lowering(fused_batch_norm, _batch_norm("T")),
    "FusedBatchNormV2": Lowering(fused_batch_norm, _batch_norm("U")),
    "FusedBatchNormV3": Lowering(fused_batch_norm, _batch_norm("U")),
    "MaxPool": Lowering(_pool("MAX_POOL_2D"), _POOL),
    "AvgPool": Lowering(_pool("AVERAGE_POOL_2D"), _POOL),
    "LRN": Lowering(lrn, _LRN),
    "TopKV2": Lowering(top_k_v2, _TOPK),
}
