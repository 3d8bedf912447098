"""Resamplers TFLite has no builtin for: ResizeArea, ResizeBicubic and ScaleAndTranslate
(what tf.image.resize writes for method="area", "bicubic", and for every method but
"nearest" with antialias=True or "lanczos3" / "lanczos5" / "gaussian" / "mitchellcubic").
TensorFlow's converter cannot convert them with builtins.

All three are separable and linear in the image: out = R . image . C^T per sample and
channel, with constant matrices R [out_h, in_h] and C [out_w, in_w] that depend only on the
sizes and the op's attributes (sampling.py computes them as TF's kernels do). They become
two BATCH_MATMULs with a constant left operand, with no transposes:

    x [N, H, W, C] -> RESHAPE [-1, H, W*C] -> BATCH_MATMUL(R, .) [-1, out_h, W*C]
      -> RESHAPE [-1, W, C] -> BATCH_MATMUL(C, .) [-1, out_w, C] -> RESHAPE [N, out_h, out_w, C]

A large matrix whose nonzeros lie in a narrow band (k taps per output: 4 for bicubic, about
2 r / scale for an antialiased shrink) is applied by its band instead -- the work and the
constant shrink from out * in to out * k: the k source rows of each output are gathered and
weighed by one BATCH_MATMUL of a constant [out, 1, k]:

    [-1, H, W*C] -> GATHER(axis 1, indices [out_h, k]) [-1, out_h, k, W*C]
      -> BATCH_MATMUL(weights [out_h, 1, k], .) [-1, out_h, 1, W*C]

and the columns' band between two TRANSPOSEs ([N, W, out_h, C]), so that its products are as
large as the rows' rather than one per pixel.

An axis whose matrix is the identity is skipped; integer images are CAST to float32 first
(TF's kernels read static_cast<float>(value) and output float32). ResizeArea shrinking each
axis by a whole factor without align_corners is AVERAGE_POOL_2D (each output the mean of a
k_h x k_w block, as TF's sums with weights 1 and scale 1 / (k_h k_w)).

In an int8 model the matrices (bands) are constants of an int8 BATCH_MATMUL (per-tensor
parameters from their values); GATHER and AVERAGE_POOL_2D keep the input's parameters.
"""

from __future__ import annotations

import numpy as np

from edgelite.errors import GraphError, ShapeError, UnsupportedOpError
from ..passes import fold_shapes
from .context import LowerCtx, attr_bool, attr_str, fail
from .einsum import static_shape
from .spec import REAL, Attr, In, Lowering, spec
from . import sampling

F32 = np.float32
# Values of one interpolation matrix (built whole while converting, 32 MB as float64; the
# model stores it whole only while small, else its band): 2048 x 2048 pixels; a larger
# resample is refused.
MAX_MATRIX_VALUES = 1 << 22
# A matrix of up to this many values is applied whole (one op); a larger one by its band
# when the band is at most a quarter of the input.
DENSE_VALUES = 4096
BAND_FRACTION = 4


def _image_shape(ctx: LowerCtx, node, x) -> tuple[int, int, int]:
    """(H, W, C) of a 4-D image, which the matrices need."""
    shape = static_shape(ctx, node, x)
    if len(shape) != 4 or min(shape[1:]) < 1:
        raise fail(ShapeError, node, f"the images have shape {list(shape)}; a 4-D [batch, "
                   "height, width, channels] image with a known height, width and channels "
                   "is needed (give the input's shape with --input-shape)")
    return shape[1], shape[2], shape[3]


def _value(ctx: LowerCtx, node, i: int, what: str) -> np.ndarray:
    """Input i's value: a constant, or computed from static shapes -- tf.image.resize divides
    the size by tf.shape(images)[1:3] -- folded here as the fold_shapes pass folds it."""
    if not ctx.input(node, i).is_const:
        fold_shapes.run(ctx.graph)
    return np.asarray(ctx.const_input(node, i, what))


def _size(ctx: LowerCtx, node) -> tuple[int, int]:
    size = _value(ctx, node, 1, "the size").reshape(-1)
    if size.shape != (2,) or np.any(size < 1):
        raise fail(ShapeError, node, f"the size {size.tolist()[:8]} must be two positive "
                   "values [height, width]")
    return int(size[0]), int(size[1])


def _axes(ctx: LowerCtx, node, x) -> tuple[tuple[int, int], tuple[int, int]]:
    """((H, out_h), (W, out_w)) of the node; each axis's matrix checked against the bound."""
    h, w, _ = _image_shape(ctx, node, x)
    out_h, out_w = _size(ctx, node)
    for n_in, n_out in ((h, out_h), (w, out_w)):
        if n_in * n_out > MAX_MATRIX_VALUES:
            raise fail(UnsupportedOpError, node, f"resamples {n_in} pixels to {n_out}: its "
                       f"interpolation matrix would hold {n_in * n_out} values (limit "
                       f"{MAX_MATRIX_VALUES})")
    return (h, out_h), (w, out_w)


def _step(ctx: LowerCtx, node, tfl: str, inputs, suffix: str, options=None,
          dtype=F32):
    out = ctx.graph.tensor(f"{node.name}/{suffix}", dtype)
    ctx.graph.add_op(tfl, inputs, [out], options, name=node.name)
    return out


def _reshape(ctx: LowerCtx, node, x, shape, suffix: str):
    shape = np.array(shape, np.int32)
    return _step(ctx, node, "RESHAPE", [x, ctx.const(node, f"{suffix}/shape", shape)], suffix,
                 dict(new_shape=shape.tolist()), dtype=x.dtype)


def _as_float(ctx: LowerCtx, node, x):
    return x if x.dtype == F32 else _step(ctx, node, "CAST", [x], "float")


def _is_identity(m: np.ndarray) -> bool:
    return m.shape[0] == m.shape[1] and np.array_equal(m, np.eye(len(m)))


def _band(m: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(indices [n_out, k], weights [n_out, 1, k]): the k consecutive inputs of each output
    that hold all its nonzero weights (an output with none reads inputs 0..k-1, weighed 0);
    None where m is applied whole (small, or a wide band)."""
    if m.size <= DENSE_VALUES:
        return None
    nonzero = m != 0
    some = nonzero.any(axis=1)
    first = np.where(some, nonzero.argmax(axis=1), 0)
    last = np.where(some, m.shape[1] - 1 - nonzero[:, ::-1].argmax(axis=1), 0)
    k = int((last - first).max()) + 1
    if BAND_FRACTION * k > m.shape[1]:
        return None
    start = np.maximum(np.minimum(first, m.shape[1] - k), 0)
    indices = start[:, None] + np.arange(k)
    return indices, np.take_along_axis(m, indices, axis=1)[:, None, :]


def _along(ctx: LowerCtx, node, y, m: np.ndarray, name: str):
    """m applied along axis 1 of y [-1, n_in, rest]: [-1, n_out, rest] (by its band:
    [-1, n_out, 1, rest])."""
    band = _band(m)
    if band is not None:
        indices, m = band
        y = _step(ctx, node, "GATHER", [y, ctx.const(node, f"{name}/taps",
                                                     indices.astype(np.int32))],
                  f"{name}/taps", dict(axis=1, batch_dims=0))
    return _step(ctx, node, "BATCH_MATMUL", [ctx.const(node, name, m.astype(F32)), y], name,
                 dict(adj_x=False, adj_y=False))


def _swap(ctx: LowerCtx, node, y, shape, name: str):
    """y as `shape` [N, a, b, C], transposed to [N, b, a, C]."""
    y = _reshape(ctx, node, y, shape, f"{name}/in")
    perm = ctx.const(node, f"{name}/perm", np.array([0, 2, 1, 3], np.int32))
    return _step(ctx, node, "TRANSPOSE", [y, perm], name, dtype=y.dtype)


def separable(ctx: LowerCtx, node, x, axes, matrix) -> None:
    """The node's output: matrix(n_in, n_out, 0) [out_h, H] applied along H, then
    matrix(n_in, n_out, 1) [out_w, W] along W (axes: _axes)."""
    h, w, c = _image_shape(ctx, node, x)
    rows, cols = (matrix(n_in, n_out, k) for k, (n_in, n_out) in enumerate(axes))
    if _is_identity(rows) and _is_identity(cols):  # the same size: the float conversion
        ctx.emit("IDENTITY" if x.dtype == F32 else "CAST", node, [x], dtype=F32)
        return
    y = _as_float(ctx, node, x)
    out_h, out_w = len(rows), len(cols)
    if not _is_identity(rows):
        y = _along(ctx, node, _reshape(ctx, node, y, [-1, h, w * c], "rows_in"), rows, "rows")
    if _is_identity(cols):
        pass
    elif _band(cols) is None:
        y = _along(ctx, node, _reshape(ctx, node, y, [-1, w, c], "cols_in"), cols, "cols")
    else:  # [N, W, out_h, C]: a band's gathers and products as large as the rows'
        y = _swap(ctx, node, y, [-1, out_h, w, c], "cols_in")
        y = _along(ctx, node, _reshape(ctx, node, y, [-1, w, out_h * c], "cols_in/flat"),
                   cols, "cols")
        y = _swap(ctx, node, y, [-1, out_w, out_h, c], "cols_out")
    shape = np.array([-1, out_h, out_w, c], np.int32)
    ctx.emit("RESHAPE", node, [y, ctx.const(node, "shape", shape)],
             dict(new_shape=shape.tolist()), dtype=F32)


def resize_area(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    (h, out_h), (w, out_w) = axes = _axes(ctx, node, x)
    align_corners = attr_bool(node, "align_corners", False)
    if not align_corners and h % out_h == 0 and w % out_w == 0 and (h, w) != (out_h, out_w):
        kh, kw = h // out_h, w // out_w  # whole blocks: their mean
        ctx.emit("AVERAGE_POOL_2D", node, [_as_float(ctx, node, x)], dict(
            padding="VALID", stride_h=kh, stride_w=kw, filter_height=kh, filter_width=kw,
            fused_activation_function=0), dtype=F32)
        return
    separable(ctx, node, x, axes, lambda n_in, n_out, _: sampling.area(n_in, n_out,
                                                                      align_corners))


def resize_bicubic(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    axes = _axes(ctx, node, x)
    align_corners = attr_bool(node, "align_corners", False)
    half_pixel = attr_bool(node, "half_pixel_centers", False)
    if align_corners and half_pixel:  # image_resizer_state.h refuses it too
        raise fail(GraphError, node, "align_corners and half_pixel_centers are both true; "
                   "TensorFlow allows at most one of them")
    separable(ctx, node, x, axes, lambda n_in, n_out, _: sampling.bicubic(
        n_in, n_out, align_corners, half_pixel))


def _pair(ctx: LowerCtx, node, i: int, what: str) -> tuple[float, float]:
    v = _value(ctx, node, i, what).astype(np.float64).reshape(-1)
    if v.shape != (2,) or not np.all(np.isfinite(v)):
        raise fail(ShapeError, node, f"the {what} {v.tolist()[:8]} must be two finite values "
                   "[rows, columns]")
    return float(F32(v[0])), float(F32(v[1]))


def scale_and_translate(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    axes = _axes(ctx, node, x)
    scale, translation = _pair(ctx, node, 2, "scale"), _pair(ctx, node, 3, "translation")
    if min(scale) <= 0:
        raise fail(ShapeError, node, f"the scale {list(scale)} must be positive (TensorFlow's "
                   "kernel refuses it)")
    kernel = attr_str(node, "kernel_type", "lanczos3")
    antialias = attr_bool(node, "antialias", True)
    separable(ctx, node, x, axes, lambda n_in, n_out, k: sampling.scale_and_translate(
        n_in, n_out, scale[k], translation[k], kernel, antialias))


# -- specs (TF op definitions: image_ops.cc) ----------------------------------------------------
_IMAGES = In("the images", REAL, ranks=(4,))
# (the size, scale and translation must be constants once shapes are folded: _value)
_SIZE = In("the size", frozenset({np.dtype(np.int32)}), None, ranks=(1,))
_FLOAT_PAIR = frozenset({np.dtype(np.float32)})

RULES = {
    "ResizeArea": Lowering(resize_area, spec(_IMAGES, _SIZE, attrs=(
        Attr("align_corners", "b"),))),
    "ResizeBicubic": Lowering(resize_bicubic, spec(_IMAGES, _SIZE, attrs=(
        Attr("align_corners", "b"), Attr("half_pixel_centers", "b")))),
    "ScaleAndTranslate": Lowering(scale_and_translate, spec(
        _IMAGES, _SIZE, In("the scale", _FLOAT_PAIR, None, ranks=(1,)),
        In("the translation", _FLOAT_PAIR, None, ranks=(1,)),
        attrs=(Attr("kernel_type", "s", choices=tuple(sampling.KERNELS)),
               Attr("antialias", "b")))),
}
