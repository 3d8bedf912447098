"""Pooling: MaxPooling1D / 2D, AveragePooling1D / 2D (MaxPool / AvgPool, 1-D on
[N, 1, W, C] as tf.keras writes it) and the global poolings (Mean / Max over the spatial
axes; GlobalAveragePooling1D honours a mask: the mean over unmasked steps)."""

from __future__ import annotations

import numpy as np

from ..context import KTensor, LayerCtx, channels_last, static
from .conv import _pair, out_length


def pool(op_type: str, rank: int):
    def rule(ctx: LayerCtx) -> KTensor:
        x = ctx.input()
        channels_last(ctx, x, rank)
        size = _pair(ctx.cfg("pool_size", 2), rank)
        strides = _pair(ctx.cfg("strides") or size, rank)
        padding = str(ctx.cfg("padding", "valid")).lower()
        if rank == 1:
            static(ctx, x)
            ref = ctx.op("ExpandDims", "ExpandDims", [x.ref, ctx.int_const("dim", 1)],
                         Tdim=np.dtype(np.int32))
            size, strides = (1,) + size, (1,) + strides
        else:
            ref = x.ref
        y = ctx.op(op_type, op_type, [ref], ksize=[1, *size, 1], strides=[1, *strides, 1],
                   padding=padding.upper(), data_format="NHWC")
        dims = [None if n is None else out_length(n, k, s, 1, padding)
                for n, k, s in zip(x.shape[1:-1], size[-rank:], strides[-rank:])]
        if rank == 1:
            y = ctx.op("Squeeze", "Squeeze", [y], squeeze_dims=[1])
        return KTensor(y, (x.shape[0], *dims, x.shape[-1]), x.dtype)
    return rule


def global_pool(op_type: str, rank: int):
    def rule(ctx: LayerCtx) -> KTensor:
        x = ctx.input()
        channels_last(ctx, x, rank)
        keep = bool(ctx.cfg("keepdims", False))
        axes = ctx.int_const("reduction_indices", list(range(1, rank + 1)))
        shape = (x.shape[0],) + ((1,) * rank if keep else ()) + (x.shape[-1],)
        if op_type == "Mean" and x.mask is not None and rank == 1:
            return KTensor(_masked_mean(ctx, x, axes, keep), shape, x.dtype)
        y = ctx.op(op_type, op_type, [x.ref, axes], keep_dims=keep, Tidx=np.dtype(np.int32))
        return KTensor(y, shape, x.dtype)
    return rule


def _masked_mean(ctx: LayerCtx, x: KTensor, axes: str, keep: bool) -> str:
    """sum(x * mask) / sum(mask) over the steps (Keras GlobalAveragePooling1D with a mask)."""
    m = ctx.op("mask/Cast", "Cast", [x.mask.ref], dtype=None, SrcT=np.dtype(bool),
               DstT=np.dtype(np.float32))
    m = ctx.op("mask/ExpandDims", "ExpandDims", [m, ctx.int_const("mask/dim", -1)],
               Tdim=np.dtype(np.int32))
    total = ctx.op("Sum", "Sum", [ctx.op("mul", "Mul", [x.ref, m]), axes], keep_dims=keep,
                   Tidx=np.dtype(np.int32))
    count = ctx.op("count", "Sum", [m, axes], keep_dims=keep, Tidx=np.dtype(np.int32))
    return ctx.op("truediv", "RealDiv", [total, count])


RULES = {
    "MaxPooling1D": pool("MaxPool", 1), "MaxPooling2D": pool("MaxPool", 2),
    "AveragePooling1D": pool("AvgPool", 1), "AveragePooling2D": pool("AvgPool", 2),
    "GlobalAveragePooling1D": global_pool("Mean", 1),
    "GlobalAveragePooling2D": global_pool("Mean", 2),
    "GlobalMaxPooling1D": global_pool("Max", 1), "GlobalMaxPooling2D": global_pool("Max", 2),
}
