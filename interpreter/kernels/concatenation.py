"""CONCATENATION along one axis, with an optional fused activation; PACK (at the end).

Matches tensorflow/lite/kernels/concatenation.cc (Prepare) and
reference_ops::Concatenation: every input has the output's type and rank, all
dimensions except ``axis`` are equal, and the output's ``axis`` dimension is their sum.
A negative axis counts from the end.

TFLite's Prepare insists on activation NONE (TF_LITE_ENSURE_EQ(params->activation,
kTfLiteActNone)); edgelite applies RELU / RELU6 / RELU_N1_TO_1 like every other op
instead of refusing the file -- but a file that uses one will not load in LiteRT.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import OpContext, OutputSpec, normalize_axis
from .fused import Clamp, activation_clamp, apply_clamp
from ..names import quoted

SUPPORTED = (np.float32, np.float16, np.int8, np.uint8, np.int16, np.int32, np.int64,
             np.uint32, np.bool_)


@dataclass(frozen=True)
class ConcatRecord:
    axis: int
    clamp: Clamp


def prepare(ctx: OpContext):
    if not ctx.inputs:
        raise ctx.shape_error("needs at least one input")
    ctx.check_arity(1, len(ctx.inputs))
    first = ctx.input(0)
    ctx.require_dtype(first, SUPPORTED, "first input")
    if first.rank == 0:
        raise ctx.unsupported("concatenating scalars is not supported")
    axis = normalize_axis(ctx, int(ctx.option("axis", 0)), first.rank)
    total = 0
    for i in range(len(ctx.inputs)):
        t = ctx.input(i)
        if t.dtype != first.dtype:
            raise ctx.dtype_error(
                f"input {i} {quoted(t.name)} is {t.dtype.name}, input 0 {quoted(first.name)} is "
                f"{first.dtype.name}"
            )
        same_rank = t.rank == first.rank
        if not same_rank or any(a != b for d, (a, b) in enumerate(zip(t.shape, first.shape))
                                if d != axis):
            raise ctx.shape_error(
                f"input {i} {quoted(t.name)} has shape {list(t.shape)}, which does not match "
                f"{list(first.shape)} outside axis {axis}"
            )
        total += t.shape[axis]
    shape = tuple(total if d == axis else n for d, n in enumerate(first.shape))
    clamp = None if first.dtype == np.bool_ else activation_clamp(ctx, first.dtype)
    return (OutputSpec(shape, first.dtype),), ConcatRecord(axis, clamp)


def eval(rec: ConcatRecord, inputs, outputs) -> None:
    np.concatenate(inputs, axis=rec.axis, out=outputs[0])
    apply_clamp(rec.clamp, outputs[0])


# --------------------------------------------------------------------------- PACK
#
# tensorflow/lite/kernels/pack.cc: N inputs of one type and shape stacked along a new
# dimension ``axis`` (PackOptions.axis, negative counts from the end of the *output*,
# i.e. axis + rank + 1); PackOptions.values_count must equal N.


def prepare_pack(ctx: OpContext):
    if not ctx.inputs:
        raise ctx.shape_error("needs at least one input")
    ctx.check_arity(1, len(ctx.inputs))
    first = ctx.input(0)
    ctx.require_dtype(first, SUPPORTED, "first input")
    count = int(ctx.option("values_count", 0)) or len(ctx.inputs)  # 0: left out
    if count != len(ctx.inputs):
        raise ctx.shape_error(f"values_count is {count} but the op has {len(ctx.inputs)} inputs")
    for i in range(len(ctx.inputs)):
        t = ctx.input(i)
        if t.dtype != first.dtype or t.shape != first.shape:
            raise ctx.shape_error(
                f"input {i} {quoted(t.name)} is {list(t.shape)} {t.dtype.name}; every input must "
                f"match input 0 ({list(first.shape)} {first.dtype.name})"
            )
    axis = normalize_axis(ctx, int(ctx.option("axis", 0)), first.rank + 1)
    shape = first.shape[:axis] + (len(ctx.inputs),) + first.shape[axis:]
    return (OutputSpec(shape, first.dtype),), PackRecord(axis)


@dataclass(frozen=True)
class PackRecord:
    axis: int  # the new dimension in the output


def eval_pack(rec: PackRecord, inputs, outputs) -> None:
    np.stack(inputs, axis=rec.axis, out=outputs[0])
