"""Image ops: ResizeBilinear / ResizeNearestNeighbor, DepthToSpace / SpaceToDepth,
SpaceToBatchND / BatchToSpaceND."""

from __future__ import annotations

import numpy as np

from edgelite.errors import GraphError, ShapeError, UnsupportedOpError
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


def _space_batch(tfl_type: str, what: str):
    """SpaceToBatchND(input, block_shape, paddings) / BatchToSpaceND(input, block_shape,
    crops). TFLite's kernels take a 3-D [N, H, C] or 4-D [N, H, W, C] input with one block
    entry per dimension between N and C; a 4-D input with a 1-entry block (H only) gets a
    block of 1 and no padding on W, which is the same op. The constants become int32."""
    def rule(ctx: LowerCtx, node) -> None:
        x = ctx.input(node, 0)
        block = np.asarray(ctx.const_input(node, 1, "the block shape")).reshape(-1)
        amounts = np.asarray(ctx.const_input(node, 2, f"the {what}"))
        m = block.size
        if amounts.shape != (m, 2):
            raise fail(ShapeError, node, f"the {what} have shape {list(amounts.shape)}; a "
                       f"block of {m} entries needs [{m}, 2]")
        if np.any(block < 1):
            raise fail(ShapeError, node, f"the block shape {block.tolist()[:8]} must hold "
                       "values >= 1")
        if np.any(amounts < 0):
            raise fail(ShapeError, node, f"the {what} {amounts.tolist()[:8]} must hold values "
                       ">= 0")
        rank = None if x.shape is None else len(x.shape)
        if rank == 4 and m == 1:
            block, amounts = np.append(block, 1), np.vstack([amounts, [[0, 0]]])
        elif rank is not None and (rank not in (3, 4) or m != rank - 2):
            raise fail(UnsupportedOpError, node, f"has a rank-{rank} input and a block of {m} "
                       "entries; TFLite's kernels take 3-D [N, H, C] or 4-D [N, H, W, C] "
                       "inputs with a block over the dimensions between N and C")
        ctx.emit(tfl_type, node, [x, ctx.const(node, "block_shape", block.astype(np.int32)),
                                  ctx.const(node, what, amounts.astype(np.int32))],
                 dtype=x.dtype)
    rule.__name__ = tfl_type.lower()
    return rule


# -- specs (TF op definitions: image_ops.cc, array_ops.cc) -------------------------------------
_RESIZE = spec(In("the images", REAL, ranks=(4,)),
               In("the size", INDEX, None, const=True, ranks=(1,)),
               attrs=(Attr("align_corners", "b"), Attr("half_pixel_centers", "b")))
# TF requires block_size >= 2 (DepthToSpaceOp / SpaceToDepthOp).
_SPACE = spec(In("the input", ANY, ranks=(4,)), attrs=(
    DATA_FORMAT, Attr("block_size", "i", True, lo=2, hi=MAX_WINDOW)))


def _space_batch_spec(what: str, type_attr: str):
    return spec(In("the input", REAL),
                In("the block shape", INDEX, "Tblock_shape", const=True, ranks=(1,)),
                In(f"the {what}", INDEX, type_attr, const=True, ranks=(2,)))


RULES = {
    "ResizeBilinear": Lowering(_resize("RESIZE_BILINEAR"), _RESIZE),
    "ResizeNearestNeighbor": Lowering(_resize("RESIZE_NEAREST_NEIGHBOR"), _RESIZE),
    "DepthToSpace": Lowering(_space("DEPTH_TO_SPACE"), _SPACE),
    "SpaceToDepth": Lowering(_space("SPACE_TO_DEPTH"), _SPACE),
    "SpaceToBatchND": Lowering(_space_batch("SPACE_TO_BATCH_ND", "paddings"),
                               _space_batch_spec("paddings", "Tpaddings")),
    "BatchToSpaceND": Lowering(_space_batch("BATCH_TO_SPACE_ND", "crops"),
                               _space_batch_spec("crops", "Tcrops")),
}
