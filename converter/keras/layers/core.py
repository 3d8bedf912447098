"""Core layers: Dense, Embedding, the pass-through layers (Dropout family, noise,
ActivityRegularization, Identity), Masking, Rescaling and Normalization."""

from __future__ import annotations

import numpy as np

from ..context import KTensor, LayerCtx, static
from .activations import activate


def dense(ctx: LayerCtx) -> KTensor:
    """x @ kernel + bias, then the activation; inputs of rank > 2 go through a 2-D MatMul
    between two Reshapes (tf.keras' Tensordot)."""
    x = ctx.input()
    units = int(ctx.cfg("units"))
    names = ["kernel", "bias"] if ctx.cfg("use_bias", True) else ["kernel"]
    w = ctx.weights(names)
    if x.rank < 2 or w[0].ndim != 2 or w[0].shape[0] != x.shape[-1]:
        ctx.fail(f"kernel {list(w[0].shape)} does not fit an input of shape {list(x.shape)}")
    flat = x if x.rank == 2 else ctx.reshape(x, (None, x.shape[-1]), "Tensordot/Reshape")
    y = ctx.op("MatMul", "MatMul", [flat.ref, ctx.const("kernel", w[0])],
               transpose_a=False, transpose_b=False)
    shape = x.shape[:-1] + (units,)
    if x.rank != 2:
        static(ctx, x, range(1, x.rank - 1))
        y = ctx.reshape(KTensor(y, (None, units)), shape, "Tensordot").ref
    if len(w) > 1:
        y = ctx.op("BiasAdd", "BiasAdd", [y, ctx.const("bias", w[1])])
    return activate(ctx, KTensor(y, shape, x.dtype, x.mask), ctx.cfg("activation", "linear"))


def einsum_dense(ctx: LayerCtx) -> KTensor:
    """Einsum(x, kernel) by the layer's equation, the bias on `bias_axes`, the activation
    (keras EinsumDense; the converter lowers Einsum to FULLY_CONNECTED / BATCH_MATMUL)."""
    x = ctx.input()
    equation = str(ctx.cfg("equation", "")).replace(" ", "")
    lhs, _, out = equation.partition("->")
    x_labels, _, k_labels = lhs.partition(",")
    bias_axes = ctx.config.get("bias_axes")
    names = ["kernel"] + (["bias"] if bias_axes else [])
    w = ctx.weights(names)
    if "." in equation or len(x_labels) != x.rank or len(k_labels) != w[0].ndim or not out:
        ctx.fail(f"equation {equation!r} does not fit input {list(x.shape)} and kernel "
                 f"{list(w[0].shape)}")
    sizes = dict(zip(k_labels, w[0].shape))
    sizes.update({a: d for a, d in zip(x_labels, x.shape) if d is not None or a not in sizes})
    y = ctx.op("einsum/Einsum", "Einsum", [x.ref, ctx.const("kernel", w[0])],
               equation=equation, N=2)
    if bias_axes:
        y = ctx.op("add", "AddV2", [y, ctx.const("bias", w[1])])
    shape = tuple(sizes.get(a) for a in out)
    return activate(ctx, KTensor(y, shape, x.dtype, x.mask), ctx.cfg("activation", "linear"))


def unit_normalization(ctx: LayerCtx) -> KTensor:
    """x / sqrt(max(sum(x^2, axis), 1e-12)) (keras UnitNormalization: l2_normalize)."""
    x = ctx.input()
    axes = ctx.cfg("axis", -1)
    axes = sorted({int(a) % x.rank for a in ([axes] if isinstance(axes, int) else axes)})
    sq = ctx.op("Sum", "Sum", [ctx.op("Square", "Square", [x.ref]), ctx.int_const("axis", axes)],
                keep_dims=True, Tidx=np.dtype(np.int32))
    inv = ctx.op("Rsqrt", "Rsqrt", [ctx.op("Maximum", "Maximum", [
        sq, ctx.g.const(f"{ctx.prefix}/epsilon", np.float32(1e-12))])])
    return KTensor(ctx.op("mul", "Mul", [x.ref, inv]), x.shape, x.dtype, x.mask)


def passthrough(ctx: LayerCtx) -> KTensor:
    """Inference-time identity: Dropout, SpatialDropout*, GaussianNoise, GaussianDropout,
    AlphaDropout, ActivityRegularization, Identity."""
    return ctx.input()


def masking(ctx: LayerCtx) -> KTensor:
    """x * any(x != mask_value, -1): masked steps zeroed, and the mask set."""
    x = ctx.input()
    value = ctx.g.const(f"{ctx.prefix}/mask_value", np.float32(ctx.cfg("mask_value", 0.0)))
    keep = ctx.op("Any", "Any", [ctx.op("NotEqual", "NotEqual", [x.ref, value]),
                                 ctx.int_const("axis", -1)], dtype=None, keep_dims=True)
    y = ctx.op("mul", "Mul", [x.ref, ctx.op("Cast", "Cast", [keep], dtype=None,
                                             SrcT=np.dtype(bool), DstT=np.dtype(np.float32))])
    mask = ctx.op("Squeeze", "Squeeze", [keep], dtype=np.dtype(bool), squeeze_dims=[-1])
    return KTensor(y, x.shape, x.dtype, KTensor(mask, x.shape[:-1], np.dtype(bool)))


def rescaling(ctx: LayerCtx) -> KTensor:
    x = ctx.input()
    scale = np.asarray(ctx.cfg("scale", 1.0), np.float32)
    offset = np.asarray(ctx.cfg("offset", 0.0), np.float32)
    y = ctx.op("mul", "Mul", [x.ref, ctx.const("scale", scale)])
    y = ctx.op("add", "AddV2", [y, ctx.const("offset", offset)])
    return KTensor(y, x.shape, x.dtype, x.mask)


def normalization(ctx: LayerCtx) -> KTensor:
    """(x - mean) / sqrt(variance) (or its inverse, `invert`), from the adapted weights or
    the mean / variance the config gives."""
    x = ctx.input()
    if ctx.config.get("mean") is not None:
        mean = np.asarray(ctx.config["mean"], np.float32)
        var = np.asarray(ctx.config["variance"], np.float32)
    else:
        mean, var, _ = ctx.weights(["mean", "variance", "count"])
    axes = ctx.cfg("axis", [-1])
    axes = [axes] if isinstance(axes, int) else list(axes)
    shape = [1] * x.rank
    for a in axes:
        a = a % x.rank
        shape[a] = x.shape[a]
    mean = mean.reshape(shape) if mean.size > 1 else mean.reshape(())
    std = np.maximum(np.sqrt(var), 1e-7).astype(np.float32)  # keras.backend.epsilon()
    std = std.reshape(shape) if std.size > 1 else std.reshape(())
    if ctx.cfg("invert", False):
        y = ctx.op("mul", "Mul", [x.ref, ctx.const("std", std)])
        y = ctx.op("add", "AddV2", [y, ctx.const("mean", mean)])
    else:
        y = ctx.op("sub", "Sub", [x.ref, ctx.const("mean", mean)])
        y = ctx.op("truediv", "RealDiv", [y, ctx.const("std", std)])
    return KTensor(y, x.shape, x.dtype, x.mask)


def embedding(ctx: LayerCtx) -> KTensor:
    """GatherV2 of the table by the ids (cast to int32); `mask_zero` sets the mask ids != 0."""
    x = ctx.input()
    (table,) = ctx.weights(["embeddings"])
    ids = x.ref
    if x.dtype != np.dtype(np.int32):
        ids = ctx.op("Cast", "Cast", [x.ref], dtype=None, SrcT=x.dtype,
                     DstT=np.dtype(np.int32))
    y = ctx.op("embedding_lookup", "GatherV2",
               [ctx.const("embeddings", table), ids, ctx.int_const("axis", 0)],
               dtype=None, Tparams=np.dtype(np.float32), Tindices=np.dtype(np.int32),
               Taxis=np.dtype(np.int32), batch_dims=0)
    mask = None
    if ctx.cfg("mask_zero", False):
        m = ctx.op("NotEqual", "NotEqual", [ids, ctx.int_const("zero", 0)],
                   dtype=np.dtype(np.int32))
        mask = KTensor(m, x.shape, np.dtype(bool))
    return KTensor(y, x.shape + (table.shape[1],), np.dtype(np.float32), mask)


def layer_scale(ctx: LayerCtx) -> KTensor:
    """keras.applications ConvNeXt's LayerScale: x * gamma (per channel)."""
    x = ctx.input()
    (gamma,) = ctx.weights(["gamma"])
    if gamma.shape != (x.shape[-1],):
        ctx.fail(f"gamma {list(gamma.shape)} does not fit input {list(x.shape)}")
    return KTensor(ctx.op("mul", "Mul", [x.ref, ctx.const("gamma", gamma)]), x.shape, x.dtype,
                   x.mask)


# layers keras.applications defines for itself, by module
APPLICATION_LAYERS = {("keras.src.applications.convnext", "LayerScale"): layer_scale}

PASSTHROUGH = ("Dropout", "SpatialDropout1D", "SpatialDropout2D",
               "GaussianNoise", "GaussianDropout", "AlphaDropout", "ActivityRegularization",
               "Identity")

RULES = {
    "Dense": dense,
    "EinsumDense": einsum_dense,
    "UnitNormalization": unit_normalization,
    "Embedding": embedding,
    "Masking": masking,
    "Rescaling": rescaling,
    "Normalization": normalization,
    **{name: passthrough for name in PASSTHROUGH},
}
