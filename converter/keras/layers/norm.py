"""Normalization layers at inference: BatchNormalization (its moving statistics, folded to a
per-channel multiply-add, which the converter folds into the conv or dense before it) and
LayerNormalization (moments over the normalized axes, as tf.keras computes them)."""

from __future__ import annotations

import numpy as np

from ..context import KTensor, LayerCtx, static


def _axes(ctx: LayerCtx, x: KTensor) -> list[int]:
    axes = ctx.cfg("axis", -1)
    axes = [axes] if isinstance(axes, int) else list(axes)
    out = sorted({int(a) % x.rank for a in axes})
    if not out or 0 in out:
        ctx.fail(f"normalizes over axes {axes} of a rank-{x.rank} input")
    return out


def _broadcast(value: np.ndarray, x: KTensor, axes: list[int]) -> np.ndarray:
    shape = [1] * x.rank
    for a in axes:
        shape[a] = x.shape[a]
    return value.reshape(shape[1:]) if axes != [x.rank - 1] else value


def batch_norm(ctx: LayerCtx) -> KTensor:
    """x * inv + (beta - mean * inv), inv = gamma / sqrt(moving_variance + epsilon)."""
    x = ctx.input()
    axes = _axes(ctx, x)
    names = (["gamma"] if ctx.cfg("scale", True) else []) + \
        (["beta"] if ctx.cfg("center", True) else []) + ["moving_mean", "moving_variance"]
    w = dict(zip(names, ctx.weights(names)))
    mean, var = w["moving_mean"], w["moving_variance"]
    eps = np.float32(ctx.cfg("epsilon", 1e-3))
    inv = (np.float32(1) / np.sqrt(var + eps)).astype(np.float32)
    if "gamma" in w:
        inv = inv * w["gamma"]
    offset = w.get("beta", np.zeros_like(mean)) - mean * inv
    if any(x.shape[a] is None for a in axes) or inv.size != np.prod([x.shape[a] for a in axes]):
        ctx.fail(f"{inv.size} statistics do not fit an input of shape {list(x.shape)}")
    y = ctx.op("batchnorm/mul", "Mul", [x.ref, ctx.const("inv", _broadcast(inv, x, axes))])
    y = ctx.op("batchnorm/add", "AddV2", [y, ctx.const("offset", _broadcast(offset, x, axes))])
    return KTensor(y, x.shape, x.dtype, x.mask)


def layer_norm(ctx: LayerCtx) -> KTensor:
    """(x - mean) * rsqrt(variance + epsilon) * gamma + beta over the layer's axes (or
    x * rsqrt(mean(x^2) + epsilon) * gamma with rms_scaling)."""
    x = ctx.input()
    axes = _axes(ctx, x)
    axis_ref = ctx.int_const("axes", axes)
    names = (["gamma"] if ctx.cfg("scale", True) else []) + \
        (["beta"] if ctx.cfg("center", True) and not ctx.cfg("rms_scaling", False) else [])
    w = dict(zip(names, ctx.weights(names)))
    eps = ctx.g.const(f"{ctx.prefix}/epsilon", np.float32(ctx.cfg("epsilon", 1e-3)))
    if ctx.cfg("rms_scaling", False):
        centered = x.ref
        var = ctx.op("moments/variance", "Mean", [ctx.op("square", "Square", [x.ref]),
                                                   axis_ref], keep_dims=True,
                     Tidx=np.dtype(np.int32))
    else:
        mean = ctx.op("moments/mean", "Mean", [x.ref, axis_ref], keep_dims=True,
                      Tidx=np.dtype(np.int32))
        centered = ctx.op("sub", "Sub", [x.ref, mean])
        var = ctx.op("moments/variance", "Mean",
                     [ctx.op("moments/SquaredDifference", "SquaredDifference", [x.ref, mean]),
                      axis_ref], keep_dims=True, Tidx=np.dtype(np.int32))
    inv = ctx.op("Rsqrt", "Rsqrt", [ctx.op("add_eps", "AddV2", [var, eps])])
    y = ctx.op("mul", "Mul", [centered, inv])
    if "gamma" in w:
        y = ctx.op("mul_gamma", "Mul", [y, ctx.const("gamma", _broadcast(w["gamma"], x, axes))])
    if "beta" in w:
        y = ctx.op("add_beta", "AddV2", [y, ctx.const("beta", _broadcast(w["beta"], x, axes))])
    return KTensor(y, x.shape, x.dtype, x.mask)


def group_norm(ctx: LayerCtx) -> KTensor:
    """keras GroupNormalization (channels last): the channels split into `groups`, each
    normalized over its channels and every non-batch axis, then gamma / beta per channel."""
    x = ctx.input()
    dims = static(ctx, x)
    groups, channels = int(ctx.cfg("groups", 32)), dims[-1]
    axis = ctx.cfg("axis", -1)
    if axis not in (-1, x.rank - 1) or groups <= 0 or channels % groups:
        ctx.fail(f"{groups} groups over axis {axis} of an input of shape {list(x.shape)}")
    names = (["gamma"] if ctx.cfg("scale", True) else []) + \
        (["beta"] if ctx.cfg("center", True) else [])
    w = dict(zip(names, ctx.weights(names)))
    grouped = ctx.reshape(x, (None, *dims[:-1], groups, channels // groups), "Reshape_groups")
    axes = ctx.int_const("axes", list(range(1, x.rank - 1)) + [x.rank])
    mean = ctx.op("moments/mean", "Mean", [grouped.ref, axes], keep_dims=True,
                  Tidx=np.dtype(np.int32))
    var = ctx.op("moments/variance", "Mean",
                 [ctx.op("moments/SquaredDifference", "SquaredDifference", [grouped.ref, mean]),
                  axes], keep_dims=True, Tidx=np.dtype(np.int32))
    eps = ctx.g.const(f"{ctx.prefix}/epsilon", np.float32(ctx.cfg("epsilon", 1e-3)))
    inv = ctx.op("Rsqrt", "Rsqrt", [ctx.op("add_eps", "AddV2", [var, eps])])
    y = ctx.op("mul", "Mul", [ctx.op("sub", "Sub", [grouped.ref, mean]), inv])
    y = ctx.reshape(KTensor(y, grouped.shape), x.shape, "Reshape_back").ref
    if "gamma" in w:
        y = ctx.op("mul_gamma", "Mul", [y, ctx.const("gamma", w["gamma"])])
    if "beta" in w:
        y = ctx.op("add_beta", "AddV2", [y, ctx.const("beta", w["beta"])])
    return KTensor(y, x.shape, x.dtype, x.mask)


RULES = {
    "GroupNormalization": group_norm,
    "BatchNormalization": batch_norm,
    "LayerNormalization": layer_norm,
}
