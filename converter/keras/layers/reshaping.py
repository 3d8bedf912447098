"""Shape layers: Flatten, Reshape, Permute, RepeatVector, ZeroPadding1D / 2D,
Cropping1D / 2D, UpSampling1D / 2D (nearest and bilinear)."""

from __future__ import annotations

import numpy as np

from ..context import KTensor, LayerCtx, channels_last, static
from .conv import _pair

I32 = np.dtype(np.int32)


def flatten(ctx: LayerCtx) -> KTensor:
    x = ctx.input()
    if ctx.cfg("data_format", "channels_last") != "channels_last" and x.rank > 2:
        ctx.fail("data_format channels_first: edgelite reads channels_last models")
    return ctx.reshape(x, (x.shape[0], int(np.prod(static(ctx, x)))))


def reshape(ctx: LayerCtx) -> KTensor:
    x = ctx.input()
    target = [int(d) for d in ctx.cfg("target_shape", [])]
    total = int(np.prod(static(ctx, x)))
    if target.count(-1) == 1:
        known = int(np.prod([d for d in target if d != -1]))
        if known <= 0 or total % known:
            ctx.fail(f"cannot reshape {list(x.shape)} to {target}")
        target[target.index(-1)] = total // known
    if int(np.prod(target)) != total or any(d < 0 for d in target):
        ctx.fail(f"cannot reshape {list(x.shape)} to {target}")
    return ctx.reshape(x, (x.shape[0], *target))


def permute(ctx: LayerCtx) -> KTensor:
    x = ctx.input()
    dims = [int(d) for d in ctx.cfg("dims", [])]
    if sorted(dims) != list(range(1, x.rank)):
        ctx.fail(f"dims {dims} do not permute the axes of a rank-{x.rank} input")
    perm = [0] + dims
    ref = ctx.op("transpose", "Transpose", [x.ref, ctx.int_const("perm", perm)], Tperm=I32)
    return KTensor(ref, tuple(x.shape[p] for p in perm), x.dtype)


def repeat_vector(ctx: LayerCtx) -> KTensor:
    x = ctx.input()
    n = int(ctx.cfg("n", 1))
    if x.rank != 2:
        ctx.fail(f"expects a rank-2 input, got shape {list(x.shape)}")
    y = ctx.op("ExpandDims", "ExpandDims", [x.ref, ctx.int_const("dim", 1)], Tdim=I32)
    y = ctx.op("Tile", "Tile", [y, ctx.int_const("multiples", [1, n, 1])], Tmultiples=I32)
    return KTensor(y, (x.shape[0], n, x.shape[1]), x.dtype)


def _edges(ctx: LayerCtx, key: str, rank: int, default) -> list[tuple[int, int]]:
    """Keras' padding / cropping argument as (before, after) per spatial axis."""
    value = ctx.cfg(key, default)
    if isinstance(value, int):
        return [(value, value)] * rank
    value = list(value)
    if rank == 1:
        return [(int(value[0]), int(value[1]))] if len(value) == 2 else [(int(value[0]),) * 2]
    out = []
    for v in value:
        out.append((int(v), int(v)) if isinstance(v, int) else (int(v[0]), int(v[1])))
    return out


def _spatial_input(ctx: LayerCtx, key: str, rank: int) -> tuple[KTensor, list[tuple[int, int]]]:
    """The layer's channels-last input and its (before, after) edges per spatial axis."""
    x = ctx.input()
    channels_last(ctx, x, rank)
    return x, _edges(ctx, key, rank, 1)


def zero_padding(rank: int):
    def rule(ctx: LayerCtx) -> KTensor:
        x, edges = _spatial_input(ctx, "padding", rank)
        pads = [[0, 0]] + [list(e) for e in edges] + [[0, 0]]
        y = ctx.op("Pad", "Pad", [x.ref, ctx.int_const("paddings", pads)], Tpaddings=I32)
        shape = (x.shape[0], *[None if n is None else n + a + b
                               for n, (a, b) in zip(x.shape[1:-1], edges)], x.shape[-1])
        return KTensor(y, shape, x.dtype)
    return rule


def cropping(rank: int):
    def rule(ctx: LayerCtx) -> KTensor:
        x, edges = _spatial_input(ctx, "cropping", rank)
        dims = static(ctx, x)[:-1]
        sizes = [n - a - b for n, (a, b) in zip(dims, edges)]
        if any(s <= 0 for s in sizes):
            ctx.fail(f"cropping {edges} leaves nothing of {list(x.shape)}")
        y = ctx.op("Slice", "Slice", [x.ref,
                                      ctx.int_const("begin", [0, *[a for a, _ in edges], 0]),
                                      ctx.int_const("size", [-1, *sizes, -1])], Index=I32)
        return KTensor(y, (x.shape[0], *sizes, x.shape[-1]), x.dtype)
    return rule


def upsampling1d(ctx: LayerCtx) -> KTensor:
    """Each step repeated `size` times: Reshape, Tile, Reshape."""
    x = ctx.input()
    n = int(ctx.cfg("size", 2))
    steps, channels = static(ctx, x)
    y = ctx.reshape(x, (None, steps, 1, channels), "Reshape_in")
    y = ctx.op("Tile", "Tile", [y.ref, ctx.int_const("multiples", [1, 1, n, 1])],
               Tmultiples=I32)
    return ctx.reshape(KTensor(y, (None, steps, n, channels)), (x.shape[0], steps * n, channels))


def upsampling2d(ctx: LayerCtx) -> KTensor:
    """ResizeNearestNeighbor / ResizeBilinear to size * input, half-pixel centers
    (tf.image.resize)."""
    x = ctx.input()
    channels_last(ctx, x, 2)
    sh, sw = _pair(ctx.cfg("size", 2), 2)
    h, w, c = static(ctx, x)
    method = ctx.cfg("interpolation", "nearest")
    ops = {"nearest": "ResizeNearestNeighbor", "bilinear": "ResizeBilinear"}
    if method not in ops:
        ctx.fail(f"interpolation {method!r}: edgelite writes nearest and bilinear")
    y = ctx.op(method, ops[method], [x.ref, ctx.int_const("size", [h * sh, w * sw])],
               align_corners=False, half_pixel_centers=True)
    return KTensor(y, (x.shape[0], h * sh, w * sw, c), x.dtype)


def resizing(ctx: LayerCtx) -> KTensor:
    """keras Resizing: tf.image.resize (half-pixel centers, no antialiasing) to
    (height, width), bilinear or nearest."""
    x = ctx.input()
    channels_last(ctx, x, 2)
    h, w, c = static(ctx, x)
    if ctx.cfg("crop_to_aspect_ratio", False) or ctx.cfg("pad_to_aspect_ratio", False):
        ctx.fail("crop_to_aspect_ratio / pad_to_aspect_ratio are not written by edgelite")
    size = [int(ctx.cfg("height")), int(ctx.cfg("width"))]
    method = ctx.cfg("interpolation", "bilinear")
    ops = {"nearest": "ResizeNearestNeighbor", "bilinear": "ResizeBilinear"}
    if method not in ops:
        ctx.fail(f"interpolation {method!r}: edgelite writes nearest and bilinear")
    y = ctx.op(method, ops[method], [x.ref, ctx.int_const("size", size)],
               align_corners=False, half_pixel_centers=True)
    return KTensor(y, (x.shape[0], *size, c), x.dtype)


def center_crop(ctx: LayerCtx) -> KTensor:
    """keras CenterCrop of an input at least as large as (height, width)."""
    x = ctx.input()
    channels_last(ctx, x, 2)
    h, w, c = static(ctx, x)
    th, tw = int(ctx.cfg("height")), int(ctx.cfg("width"))
    if th > h or tw > w:
        ctx.fail(f"crops {th}x{tw} out of {h}x{w}: edgelite crops, it does not resize up")
    top, left = (h - th) // 2, (w - tw) // 2
    y = ctx.op("Slice", "Slice", [x.ref, ctx.int_const("begin", [0, top, left, 0]),
                                  ctx.int_const("size", [-1, th, tw, -1])], Index=I32)
    return KTensor(y, (x.shape[0], th, tw, c), x.dtype)


RULES = {
    "Resizing": resizing, "CenterCrop": center_crop,
    "Flatten": flatten, "Reshape": reshape, "Permute": permute, "RepeatVector": repeat_vector,
    "ZeroPadding1D": zero_padding(1), "ZeroPadding2D": zero_padding(2),
    "Cropping1D": cropping(1), "Cropping2D": cropping(2),
    "UpSampling1D": upsampling1d, "UpSampling2D": upsampling2d,
}
