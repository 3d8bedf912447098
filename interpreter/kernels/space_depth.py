"""DEPTH_TO_SPACE and SPACE_TO_DEPTH (NHWC, any element type).

Match tensorflow/lite/kernels/depth_to_space.cc / space_to_depth.cc and the reference
loops in tensorflow/lite/kernels/internal/reference/depth_to_space.h /
space_to_depth.h, with block size b (DepthToSpaceOptions / SpaceToDepthOptions,
>= 1) and TensorFlow's "DCR" channel order:

    DEPTH_TO_SPACE: out[n, h*b + i, w*b + j, c] = in[n, h, w, (i*b + j) * C_out + c]
                    (input channels must be a multiple of b*b)
    SPACE_TO_DEPTH: out[n, h, w, (i*b + j) * C + c] = in[n, h*b + i, w*b + j, c]
                    (height and width must be multiples of b)

Both are one reshape -> transpose(0, 1, 3, 2, 4, 5) -> reshape, i.e. a single copy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Kernel, OpContext, OutputSpec
from .opdef import TYPE_GENERIC, OpDef, QuantRule
from .versions import INT8_2
from edgelite.names import quoted


@dataclass(frozen=True)
class BlockRecord:
    split: tuple[int, ...]  # 6-D view of the input
    out_view: tuple[int, ...]  # 6-D view of the output (after the transpose)


def _check(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    if x.rank != 4:
        raise ctx.shape_error(f"input {quoted(x.name)} must be 4-D (NHWC), is {list(x.shape)}")
    if x.dtype.kind not in "biuf":
        raise ctx.unsupported(f"input {quoted(x.name)} has type {x.dtype.name}")
    b = int(ctx.option("block_size", 0))
    if b < 1:
        raise ctx.shape_error(f"block_size must be >= 1, got {b}")
    return x, b


def prepare_depth_to_space(ctx: OpContext):
    x, b = _check(ctx)
    n, h, w, c = x.shape
    if c % (b * b):
        raise ctx.shape_error(f"input channels ({c}) must be a multiple of block_size^2 ({b * b})")
    co = c // (b * b)
    record = BlockRecord((n, h, w, b, b, co), (n, h, b, w, b, co))
    return (OutputSpec((n, h * b, w * b, co), x.dtype),), record


def prepare_space_to_depth(ctx: OpContext):
    x, b = _check(ctx)
    n, h, w, c = x.shape
    if h % b or w % b:
        raise ctx.shape_error(f"height and width {h}x{w} must be multiples of block_size {b}")
    record = BlockRecord((n, h // b, b, w // b, b, c), (n, h // b, w // b, b, b, c))
    return (OutputSpec((n, h // b, w // b, b * b * c), x.dtype),), record


def eval(rec: BlockRecord, inputs, outputs) -> None:
    np.copyto(outputs[0].reshape(rec.out_view),
              inputs[0].reshape(rec.split).transpose(0, 1, 3, 2, 4, 5))


OPS = (
    # op_version.cc, both: int8 2
    # Both copy bits: int8 / uint8 keep the input's parameters.
    OpDef("DEPTH_TO_SPACE", float=Kernel(prepare_depth_to_space, eval), integer=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT, exact=True, per_sample=True,
          version=INT8_2),
    OpDef("SPACE_TO_DEPTH", float=Kernel(prepare_space_to_depth, eval), integer=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT, exact=True, per_sample=True,
          version=INT8_2),
)
