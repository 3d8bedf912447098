"""CropAndResize (tf.image.crop_and_resize) on TFLite builtins; TensorFlow's converter has no
lowering for it.

TF's kernel (tensorflow/core/kernels/image/crop_and_resize_op.cc CropAndResizePerBox), for
box b = (y1, x1, y2, x2) of image box_index[b] and crop row y (columns alike), in float32:

    in_y = y1 * (H - 1) + y * ((y2 - y1) * (H - 1) / (crop_h - 1))   if crop_h > 1
         = 0.5 * (y1 + y2) * (H - 1)                                  if crop_h == 1
    outside [0, H - 1] (in either axis): extrapolation_value
    bilinear: the 4 pixels at floor / ceil of (in_y, in_x), y_lerp = in_y - floor(in_y):
              top + (bottom - top) * y_lerp of rows top / bottom = left + (right - left) * x_lerp
    nearest:  the pixel at roundf(in_y), roundf(in_x) (halves away from zero)

The boxes and box indices may be computed (a detector's): the positions are computed in the
graph with the same float32 operations in the same order (so a box edge on a pixel lands on
it, and the test against H - 1 decides as TF's does), as [boxes, crop_h, 1, 1] and
[boxes, 1, crop_w, 1] tensors that broadcast to the crop. The pixels come from the image
flattened to [batch * H * W, C] by GATHER_ND with flat indices (b * H + row) * W + column;
positions outside the image are clamped for the gather and replaced by SELECT_V2. roundf
of a position >= 0 is floor(p) + (p - floor(p) >= 0.5) (TFLite's ROUND rounds halves to
even). With constant boxes and indices every position, weight and index folds to a constant
here, leaving the gathers and the interpolation (and no SELECT_V2 when every sample is
inside).

The division by crop_h - 1 stays a DIV (a MUL by the reciprocal can move a box edge off
the image: passes/div_to_mul.py leaves this op's DIV alone); in an int8 model the position
arithmetic stays float (quantize/index_arithmetic.py) while the gathers and the
interpolation run in int8.
"""

from __future__ import annotations

import numpy as np

from edgelite.errors import ShapeError
from ..passes.fold_constants import try_fold
from .context import LowerCtx, attr_float, attr_str, fail
from .einsum import static_shape
from .spec import REAL, Attr, In, Lowering, spec

F32, I32 = np.dtype(np.float32), np.dtype(np.int32)
_NONE = dict(fused_activation_function=0)
# image dtypes GATHER_ND moves as they are (gather_nd.cc); others are made float32 first
_GATHERED = frozenset(map(np.dtype, (np.float32, np.uint8, np.int8, np.int16, np.int32,
                                     np.int64)))


class _Builder:
    """Ops of one node's lowering, each folded at once when its inputs are constants."""

    def __init__(self, ctx: LowerCtx, node) -> None:
        self.ctx, self.node, self.n = ctx, node, 0

    def op(self, tfl: str, inputs, dtype=F32, options=None, n_outputs: int = 1):
        """The op's output (a list of n_outputs if more than one)."""
        self.n += 1
        outs = [self.ctx.graph.tensor(f"{self.node.name}/{tfl.lower()}_{self.n}", dtype)
                for _ in range(n_outputs)]
        op = self.ctx.graph.add_op(tfl, [self._tensor(t) for t in inputs], outs, options,
                                   name=self.node.name)
        try_fold(self.ctx.graph, op)
        return outs if n_outputs > 1 else outs[0]

    def _tensor(self, t):
        """A numpy value becomes a constant (float32 or int32 like the arithmetic)."""
        if isinstance(t, (int, float, np.ndarray, np.generic)):
            value = np.asarray(t)
            value = value.astype(I32 if value.dtype.kind in "iu" else F32)
            self.n += 1
            return self.ctx.const(self.node, f"c{self.n}", value)
        return t

    def arith(self, tfl: str, a, b, dtype=F32):
        return self.op(tfl, [a, b], dtype, _NONE if tfl in ("ADD", "SUB", "MUL", "DIV")
                       else None)

    def reshape(self, x, shape):
        shape = np.array(shape, np.int32)
        return self.op("RESHAPE", [x, shape], x.dtype, dict(new_shape=shape.tolist()))


def _positions(b: _Builder, lo, hi, n_in: int, n_crop: int, axis: int):
    """in_y (or in_x) of every crop row (column), shaped [boxes, n_crop, 1, 1] (axis 1) or
    [boxes, 1, n_crop, 1] (axis 2); lo / hi are [boxes, 1, 1, 1]."""
    span = float(n_in - 1)
    if n_crop == 1:
        return b.arith("MUL", b.arith("MUL", b.arith("ADD", lo, hi), 0.5), span)
    step = b.arith("DIV", b.arith("MUL", b.arith("SUB", hi, lo), span), float(n_crop - 1))
    grid = np.arange(n_crop, dtype=np.float32).reshape([1] + [n_crop if a == axis else 1
                                                              for a in (1, 2)] + [1])
    return b.arith("ADD", b.arith("MUL", lo, span), b.arith("MUL", grid, step))


def _clamp(b: _Builder, p, n_in: int):
    """(p clamped to [0, n_in - 1], whether it was inside: clamp(p) == p)."""
    clamped = b.arith("MINIMUM", b.arith("MAXIMUM", p, 0.0), float(n_in - 1))
    return clamped, b.arith("EQUAL", clamped, p, np.bool_)


def _index(b: _Builder, p):
    return b.op("CAST", [p], I32)


def _nearest(b: _Builder, p):
    """roundf(p) for p >= 0, as int32: floor(p) + (p - floor(p) >= 0.5)."""
    down = b.op("FLOOR", [p])
    up = b.arith("GREATER_EQUAL", b.arith("SUB", p, down), 0.5, np.bool_)
    return b.arith("ADD", _index(b, down), b.op("CAST", [up], I32), I32)


def _floor_ceil(b: _Builder, p):
    """(floor(p), ceil(p)) as int32, and the weight p - floor(p); ceil(p) is floor(p) +
    (p - floor(p) > 0) (LiteRT's reference kernels have no CEIL)."""
    down = b.op("FLOOR", [p])
    lerp = b.arith("SUB", p, down)
    low = _index(b, down)
    up = b.op("CAST", [b.arith("GREATER", lerp, 0.0, np.bool_)], I32)
    return low, b.arith("ADD", low, up, I32), lerp


def _lerp(b: _Builder, a, c, t):
    """a + (c - a) * t, TF's order."""
    return b.arith("ADD", a, b.arith("MUL", b.arith("SUB", c, a), t))


def crop_and_resize(ctx: LowerCtx, node) -> None:
    image, boxes, box_index = (ctx.input(node, i) for i in range(3))
    crop = np.asarray(ctx.const_input(node, 3, "crop_size")).reshape(-1)
    if crop.shape != (2,) or np.any(crop < 1):
        raise fail(ShapeError, node, f"crop_size {crop.tolist()[:8]} must be two positive "
                   "values [crop_height, crop_width]")
    crop_h, crop_w = int(crop[0]), int(crop[1])
    shape = static_shape(ctx, node, image)
    if len(shape) != 4 or min(shape[1:]) < 1:
        raise fail(ShapeError, node, f"the image has shape {list(shape)}; a 4-D [batch, "
                   "height, width, depth] image of known height, width and depth is needed "
                   "(give the input's shape with --input-shape)")
    _check_boxes(node, _static(boxes), _static(box_index))
    h, w, depth = shape[1:]
    b = _Builder(ctx, node)
    corners = b.reshape(boxes, [-1, 1, 1, 4])
    y1, x1, y2, x2 = b.op("SPLIT", [3, corners], F32, dict(num_splits=4),
                          n_outputs=4)  # each [boxes, 1, 1, 1]
    ys, rows_inside = _clamp(b, _positions(b, y1, y2, h, crop_h, 1), h)  # [boxes, crop_h, 1, 1]
    xs, cols_inside = _clamp(b, _positions(b, x1, x2, w, crop_w, 2), w)  # [boxes, 1, crop_w, 1]
    inside = b.arith("LOGICAL_AND", rows_inside, cols_inside, np.bool_)
    first_row = b.arith("MUL", b.reshape(box_index, [-1, 1, 1, 1]), h, I32)  # b * H
    pixels = image if image.dtype in _GATHERED else b.op("CAST", [image])
    table = b.reshape(pixels, [-1, depth])  # [batch * H * W, depth]

    def gather(row, col):  # [boxes, crop_h, crop_w, depth], float32
        flat = b.arith("ADD", b.arith("MUL", b.arith("ADD", first_row, row, I32), w, I32),
                       col, I32)
        got = b.op("GATHER_ND", [table, flat], table.dtype)
        return got if got.dtype == F32 else b.op("CAST", [got])

    if attr_str(node, "method", "bilinear") == "nearest":
        value = gather(_nearest(b, ys), _nearest(b, xs))
    else:
        top, bottom, y_lerp = _floor_ceil(b, ys)
        left, right, x_lerp = _floor_ceil(b, xs)
        upper = _lerp(b, gather(top, left), gather(top, right), x_lerp)
        lower = _lerp(b, gather(bottom, left), gather(bottom, right), x_lerp)
        value = _lerp(b, upper, lower, y_lerp)
    if inside.is_const and inside.data.all():
        ctx.emit("IDENTITY", node, [value])
        return
    fill = ctx.const(node, "extrapolation_value",
                     np.float32(attr_float(node, "extrapolation_value", 0.0)))
    ctx.emit("SELECT_V2", node, [inside, value, fill], dtype=F32)


def _static(t):
    """t's shape where every dim is known when converting (a count only the values tell,
    Where's, is -1 in the signature)."""
    sig = t.shape_signature
    return None if t.shape is None or (sig is not None and -1 in sig) else t.shape


def _check_boxes(node, boxes, index) -> None:
    """boxes [num_boxes, 4] and box_index [num_boxes], where the shapes are known."""
    if boxes is not None and boxes[1] != 4:
        raise fail(ShapeError, node, f"the boxes have shape {list(boxes)}; they must be "
                   "[num_boxes, 4]")
    if boxes is not None and index is not None and index[0] != boxes[0]:
        raise fail(ShapeError, node, f"box_index has shape {list(index)}; the {boxes[0]} "
                   f"boxes need [{boxes[0]}]")


# -- spec (TF op definition: image_ops.cc) ------------------------------------------------------
RULES = {
    "CropAndResize": Lowering(crop_and_resize, spec(
        In("the image", REAL, ranks=(4,)),
        In("the boxes", frozenset({F32}), None, ranks=(2,)),
        In("box_index", frozenset({I32}), None, ranks=(1,)),
        In("crop_size", frozenset({I32}), None, const=True, ranks=(1,)),
        attrs=(Attr("method", "s", choices=("bilinear", "nearest")),
               Attr("extrapolation_value", "f", lo=-np.inf, hi=np.inf)))),
}
