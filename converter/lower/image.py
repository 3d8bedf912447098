"""Image ops: ResizeBilinear / ResizeNearestNeighbor, DepthToSpace / SpaceToDepth."""

from __future__ import annotations

import numpy as np

from ...interpreter.errors import GraphError, ShapeError
from .context import LowerCtx, attr_bool, attr_int, fail, require_nhwc
from .spec import (ANY, DATA_FORMAT, INDEX, MAX_WINDOW, REAL, Attr, In, Lowering, spec)


def _resize(tfl_type: str):
    def rule(ctx: LowerCtx, node) -> None:
        x = ctx.input(node, 0)
        size = ctx.const_input(node, 1, "the size")
        if size.shape != (2,) or np.any(size < 1):
            raise fail(ShapeError, node, f"the size {size.tolist()[:8]} must be two positive "
                       "values [height, width]")
        align_corners = attr_bool(node, "align_corners", False)
        half_pixel_centers = attr_bool(node, "half_pixel_centers", False)
        if align_corners and half_pixel_centers:  # image_resizer_state.h refuses it too
            raise fail(GraphError, node, "align_corners and half_pixel_centers are both true; "
                       "TensorFlow allows at most one of them")
        if tfl_type == "RESIZE_BILINEAR" and x.dtype.kind in "iu":
            # TF's ResizeBilinear interpolates integer images in float and outputs float32
            # (image_ops.cc: "resized_images: float"); TFLite's float kernel does the same.
            as_float = ctx.graph.tensor(f"{node.name}/float", np.float32)
            ctx.graph.add_op("CAST", [x], [as_float], name=node.name)
            x = as_float
        ctx.emit(tfl_type, node, [x, ctx.const(node, "size", size.astype(np.int32))], dict(
            align_corners=align_corners, half_pixel_centers=half_pixel_centers),
            dtype=x.dtype)
    rule.__name__ = tfl_type.lower()
    return rule


def _space(tfl_type: str):
    def rule(ctx: LowerCtx, node) -> None:
        require_nhwc(node)
        ctx.emit(tfl_type, node, [ctx.input(node, 0)],
                 dict(block_size=attr_int(node, "block_size")))
    rule.__name__ = tfl_type.lower()
    return rule


# -- specs (TF op definitions: image_ops.cc, array_ops.cc) -------------------------------------
_RESIZE = spec(In("the images", REAL, ranks=(4,)),
               In("the size", INDEX, None, const=True, ranks=(1,)),
               attrs=(Attr("align_corners", "b"), Attr("half_pixel_centers", "b")))
# TF requires block_size >= 2 (DepthToSpaceOp / SpaceToDepthOp).
_SPACE = spec(In("the input", ANY, ranks=(4,)), attrs=(
    DATA_FORMAT, Attr("block_size", "i", True, lo=2, hi=MAX_WINDOW)))

RULES = {
    "ResizeBilinear": Lowering(_resize("RESIZE_BILINEAR"), _RESIZE),
    "ResizeNearestNeighbor": Lowering(_resize("RESIZE_NEAREST_NEIGHBOR"), _RESIZE),
    "DepthToSpace": Lowering(_space("DEPTH_TO_SPACE"), _SPACE),
    "SpaceToDepth": Lowering(_space("SPACE_TO_DEPTH"), _SPACE),
}
