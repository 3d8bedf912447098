"""Image ops: ResizeBilinear / ResizeNearestNeighbor, DepthToSpace / SpaceToDepth."""

from __future__ import annotations

import numpy as np

from .context import LowerCtx, attr_bool, attr_int, require_nhwc


def _resize(tfl_type: str):
    def rule(ctx: LowerCtx, node) -> None:
        x = ctx.input(node, 0)
        size = ctx.const(node, "size", ctx.const_input(node, 1, "the size").astype(np.int32))
        ctx.emit(tfl_type, node, [x, size], dict(
            align_corners=attr_bool(node, "align_corners", False),
            half_pixel_centers=attr_bool(node, "half_pixel_centers", False)), dtype=x.dtype)
    rule.__name__ = tfl_type.lower()
    return rule


def _space(tfl_type: str):
    def rule(ctx: LowerCtx, node) -> None:
        require_nhwc(node)
        ctx.emit(tfl_type, node, [ctx.input(node, 0)],
                 dict(block_size=attr_int(node, "block_size")))
    rule.__name__ = tfl_type.lower()
    return rule


RULES = {
    "ResizeBilinear": _resize("RESIZE_BILINEAR"),
    "ResizeNearestNeighbor": _resize("RESIZE_NEAREST_NEIGHBOR"),
    "DepthToSpace": _space("DEPTH_TO_SPACE"),
    "SpaceToDepth": _space("SPACE_TO_DEPTH"),
}
