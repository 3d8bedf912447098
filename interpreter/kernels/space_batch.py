"""SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND: blocks of space moved into the batch and back
(any element type: the kernels only move values).

Match tensorflow/lite/kernels/space_to_batch_nd.cc / batch_to_space_nd.cc and their
reference loops (reference/space_to_batch_nd.h, reference/batch_to_space_nd.h). Inputs:

* the data, 3-D [N, H, C] or 4-D [N, H, W, C] (LiteRT's only ranks; a 3-D tensor is taken
  as [N, H, 1, C] with a block of 1 over that W);
* block_shape, int32 / int64 [rank - 2], every entry >= 1;
* paddings (SPACE_TO_BATCH_ND) / crops (BATCH_TO_SPACE_ND), int32 / int64 [rank - 2, 2] of
  (before, after) >= 0.

block_shape and paddings / crops must be constant here (LiteRT makes the output dynamic
otherwise). With block (bh, bw), batch b' = (i * bw + j) * N + n holds phase (i, j) of
sample n:

    SPACE_TO_BATCH_ND: out[(i*bw + j)*N + n, h, w, c] = padded[n, h*bh + i, w*bw + j, c]
        padded: the input with the paddings added around H and W, filled with 0, or with
        the output's zero point for int8 / uint8 (so it reads as 0.0); padded H and W must
        be multiples of bh and bw.
    BATCH_TO_SPACE_ND: the inverse, full[n, h*bh + i, w*bw + j, c] = in[(i*bw + j)*N + n,
        h, w, c], then the crops cut from full's H and W; the input batch must be a
        multiple of bh * bw.

Each is one reshape -> transpose(6-D) -> reshape copy, through a private padded buffer
(SPACE_TO_BATCH_ND with paddings, its pad cells written once) or a temporary assembled
one (BATCH_TO_SPACE_ND with crops). Samples move across the batch dimension: neither op
is per_sample.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Kernel, OpContext, OutputSpec, scratch, temporary
from .opdef import TYPE_GENERIC, OpDef, QuantRule
from .common.same_params import checked
from .versions import T, first_match, input_type
from edgelite.names import quoted

SUPPORTED = (np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64)
INT32_MAX = 2**31 - 1  # TFLite's dimensions are int32


@dataclass(frozen=True)
class Geometry:
    """The operands in 4-D terms: the data's [N, H, W, C], the block and the (before,
    after) amounts of H and W."""

    shape: tuple[int, int, int, int]
    block: tuple[int, int]
    amounts: tuple[tuple[int, int], tuple[int, int]]


def _constant_ints(ctx: OpContext, i: int, what: str, shape: tuple[int, ...]) -> np.ndarray:
    t = ctx.input(i)
    ctx.require_dtype(t, (np.int32, np.int64), what)
    value = np.asarray(ctx.constant_input(i, what))
    if value.shape != shape:
        raise ctx.shape_error(f"{what} {quoted(t.name)} has shape {list(value.shape)}; an "
                              f"input of rank {ctx.input(0).rank} needs {list(shape)}")
    return value.astype(np.int64)


def _geometry(ctx: OpContext, what: str) -> Geometry:
    """Check the three inputs; `what` names input 2 ("paddings" or "crops")."""
    ctx.check_arity(3, 3)
    x = ctx.input(0)
    ctx.require_dtype(x, SUPPORTED, "input")
    if x.rank not in (3, 4):
        raise ctx.shape_error(f"input {quoted(x.name)} must be 3-D [N, H, C] or 4-D "
                              f"[N, H, W, C], has shape {list(x.shape)}")
    m = x.rank - 2
    block = _constant_ints(ctx, 1, "block_shape", (m,))
    amounts = _constant_ints(ctx, 2, what, (m, 2))
    if (block < 1).any():
        raise ctx.shape_error(f"block_shape {block.tolist()} must hold values >= 1")
    if (amounts < 0).any() or (amounts > INT32_MAX).any():
        raise ctx.shape_error(f"{what} {amounts.tolist()} must hold values >= 0")
    if m == 1:  # [N, H, C] is [N, H, 1, C] with nothing done to that W
        block, amounts = np.append(block, 1), np.vstack([amounts, [0, 0]])
    n, h, *w, c = x.shape
    return Geometry((n, h, w[0] if w else 1, c), (int(block[0]), int(block[1])),
                    tuple((int(a), int(b)) for a, b in amounts))


def _output(ctx: OpContext, shape4: tuple[int, ...]) -> OutputSpec:
    if max(shape4) > INT32_MAX:
        raise ctx.shape_error(f"the output would have shape {list(shape4)}, a dimension over "
                              "TFLite's int32 limit")
    x = ctx.input(0)
    shape = shape4 if x.rank == 4 else (shape4[0], shape4[1], shape4[3])
    return OutputSpec(tuple(shape), x.dtype)


# --------------------------------------------------------------------------- SPACE_TO_BATCH_ND


@dataclass(frozen=True)
class SpaceToBatchRecord:
    in_shape: tuple[int, ...]  # the input as [N, H, W, C]
    padded: np.ndarray | None  # [N, H', W', C] with the pad values, or None: no paddings
    interior: tuple[slice, ...]  # where the input goes in padded
    split: tuple[int, ...]  # padded as [N, H'/bh, bh, W'/bw, bw, C]
    out_view: tuple[int, ...]  # the output as [bh, bw, N, H'/bh, W'/bw, C]


def _pad_value(ctx: OpContext, dtype: np.dtype):
    """0, or for 8-bit data the output's zero point (space_to_batch_nd.cc passes
    output->params.zero_point as the pad value of its 8-bit path)."""
    quant = ctx.outputs[0].quantization
    if dtype.itemsize == 1 and quant is not None and len(quant.zero_point) > 0:
        return dtype.type(quant.zero_point[0])
    return dtype.type(0)


def prepare_space_to_batch(ctx: OpContext):
    g = _geometry(ctx, "paddings")
    (n, h, w, c), (bh, bw), ((top, bottom), (left, right)) = g.shape, g.block, g.amounts
    hp, wp = h + top + bottom, w + left + right
    if hp % bh or wp % bw:
        raise ctx.shape_error(f"the padded height and width {hp}x{wp} must be multiples of "
                              f"the block {bh}x{bw}")
    ho, wo = hp // bh, wp // bw
    spec = _output(ctx, (n * bh * bw, ho, wo, c))
    padded = None
    if top or bottom or left or right:
        padded = scratch(ctx, (n, hp, wp, c), spec.dtype, fill=_pad_value(ctx, spec.dtype))
    record = SpaceToBatchRecord(g.shape, padded,
                                (slice(None), slice(top, top + h), slice(left, left + w)),
                                (n, ho, bh, wo, bw, c), (bh, bw, n, ho, wo, c))
    return (spec,), record


def eval_space_to_batch(rec: SpaceToBatchRecord, inputs, outputs) -> None:
    src = inputs[0].reshape(rec.in_shape)
    if rec.padded is not None:
        rec.padded[rec.interior] = src  # the pad cells keep the value prepare() wrote
        src = rec.padded
    np.copyto(outputs[0].reshape(rec.out_view),
              src.reshape(rec.split).transpose(2, 4, 0, 1, 3, 5))


# --------------------------------------------------------------------------- BATCH_TO_SPACE_ND


@dataclass(frozen=True)
class BatchToSpaceRecord:
    in_view: tuple[int, ...]  # the input as [bh, bw, N, H, W, C]
    full_view: tuple[int, ...]  # the assembled [N, H*bh, W*bw, C] as [N, H, bh, W, bw, C]
    full: np.ndarray | None  # the assembled tensor, or None: no crops (it is the output)
    window: tuple[slice, ...]  # the output's part of full
    out_shape: tuple[int, ...]  # the output as [N, H', W', C]


def prepare_batch_to_space(ctx: OpContext):
    g = _geometry(ctx, "crops")
    (nb, h, w, c), (bh, bw), ((top, bottom), (left, right)) = g.shape, g.block, g.amounts
    if nb % (bh * bw):
        raise ctx.shape_error(f"the input batch {nb} must be a multiple of the block's "
                              f"{bh}x{bw} = {bh * bw} cells")
    n, hf, wf = nb // (bh * bw), h * bh, w * bw
    ho, wo = hf - top - bottom, wf - left - right
    if ho < 0 or wo < 0:
        raise ctx.shape_error(f"crops {[list(a) for a in g.amounts]} remove more than the "
                              f"assembled {hf}x{wf}")
    spec = _output(ctx, (n, ho, wo, c))
    full = None
    if top or bottom or left or right:
        full = temporary(ctx, (n, hf, wf, c), spec.dtype)
    record = BatchToSpaceRecord((bh, bw, n, h, w, c), (n, h, bh, w, bw, c), full,
                                (slice(None), slice(top, top + ho), slice(left, left + wo)),
                                (n, ho, wo, c))
    return (spec,), record


def eval_batch_to_space(rec: BatchToSpaceRecord, inputs, outputs) -> None:
    full = rec.full if rec.full is not None else outputs[0]
    np.copyto(full.reshape(rec.full_view),
              inputs[0].reshape(rec.in_view).transpose(2, 3, 0, 4, 1, 5))
    if rec.full is not None:
        np.copyto(outputs[0].reshape(rec.out_shape), rec.full[rec.window])


# op_version.cc, SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND: int16 4, an input that is not 4-D
# (N, W, C) 3, int8 2.
_version = first_match((input_type(T.INT16), 4), (lambda sig: sig.input(0).rank != 4, 3),
                       (input_type(T.INT8), 2))


def _record(name: str, kernel: Kernel, **facts) -> OpDef:
    # Values are only moved (the pad value reads as 0.0): int8 / uint8 / int16 run exactly
    # with the input's parameters, which the output must share (int16: zero point 0).
    return OpDef(name, float=checked(kernel, int16_zero=True), integer=TYPE_GENERIC,
                 quant=QuantRule.SAME_AS_INPUT,
                 exact=True, version=_version, **facts)


OPS = (
    _record("SPACE_TO_BATCH_ND", Kernel(prepare_space_to_batch, eval_space_to_batch),
            shape_operands=(1, 2)),
    _record("BATCH_TO_SPACE_ND", Kernel(prepare_batch_to_space, eval_batch_to_space),
            shape_operands=(1, 2)),
)
