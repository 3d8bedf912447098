"""SPLIT, SPLIT_V and UNPACK: one input cut into several outputs along one axis.

* SPLIT (tensorflow/lite/kernels/split.cc): input 0 is the axis (an int32 scalar,
  constant here -- TFLite makes the outputs dynamic otherwise), input 1 the value;
  SplitOptions.num_splits equal parts, which must divide the axis dimension.
* SPLIT_V (tensorflow/lite/kernels/split_v.cc): inputs value, size_splits (1-D int32 /
  int64, constant here) and axis (scalar); at most one size is -1 and takes what is
  left; the sizes must add up to the axis dimension.
* UNPACK (tensorflow/lite/kernels/unpack.cc): UnpackOptions.num outputs, one per index
  along ``axis`` (negative counts from the end), each with that dimension removed.

Negative axes count from the end. prepare() stores one basic index per output, so
eval() is a copy per output.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Kernel, OpContext, OutputSpec, normalize_axis
from .opdef import TYPE_GENERIC, OpDef, QuantRule
from .common.same_params import checked
from .versions import INT8_2, OpSignature, T, by_input_type
from edgelite.names import quoted

SUPPORTED = (np.float32, np.float16, np.int8, np.uint8, np.int16, np.int32, np.int64,
             np.bool_)


@dataclass(frozen=True)
class SplitRecord:
    source: int  # which op input holds the value (SPLIT: 1, SPLIT_V / UNPACK: 0)
    index: tuple[tuple, ...]  # per output: its basic index into the value


def _axis(ctx: OpContext, i: int, rank: int) -> int:
    t = ctx.input(i)
    if t.dtype.kind not in "iu" or t.rank > 1 or (t.rank == 1 and t.shape[0] != 1):
        raise ctx.shape_error(f"axis {quoted(t.name)} must be an int32 scalar, is {list(t.shape)} "
                              f"{t.dtype.name}")
    return normalize_axis(ctx, int(ctx.constant_input(i, "axis").reshape(-1)[0]), rank)


def _outputs(ctx: OpContext, x, axis: int, sizes: list[int]):
    if len(sizes) != len(ctx.outputs):
        raise ctx.shape_error(f"makes {len(sizes)} parts but the op has {len(ctx.outputs)} "
                              "outputs")
    specs, index, start = [], [], 0
    lead = (slice(None),) * axis
    for size in sizes:
        specs.append(OutputSpec(x.shape[:axis] + (size,) + x.shape[axis + 1:], x.dtype))
        index.append(lead + (slice(start, start + size),))
        start += size
    return tuple(specs), tuple(index)


def prepare_split(ctx: OpContext):
    ctx.check_arity(2, 2, len(ctx.outputs))
    x = ctx.input(1)
    ctx.require_dtype(x, SUPPORTED, "input")
    axis = _axis(ctx, 0, x.rank)
    num = int(ctx.option("num_splits", 0)) or len(ctx.outputs)  # 0: an old file left it out
    if num < 1 or x.shape[axis] % num != 0:
        raise ctx.shape_error(
            f"cannot split dimension {axis} of size {x.shape[axis]} into {num} equal parts"
        )
    specs, index = _outputs(ctx, x, axis, [x.shape[axis] // num] * num)
    return specs, SplitRecord(1, index)


def prepare_split_v(ctx: OpContext):
    ctx.check_arity(3, 3, len(ctx.outputs))
    x, sizes_t = ctx.input(0), ctx.input(1)
    ctx.require_dtype(x, SUPPORTED, "input")
    ctx.require_dtype(sizes_t, (np.int32, np.int64), "size_splits")
    if sizes_t.rank != 1:
        raise ctx.shape_error(f"size_splits {quoted(sizes_t.name)} must be 1-D")
    axis = _axis(ctx, 2, x.rank)
    sizes = [int(s) for s in ctx.constant_input(1, "size_splits")]
    dim = x.shape[axis]
    unknown = [i for i, s in enumerate(sizes) if s == -1]
    if len(unknown) > 1 or any(s < -1 for s in sizes):
        raise ctx.shape_error(f"size_splits {sizes} may hold one -1 and no other negative")
    if unknown:
        sizes[unknown[0]] = dim - (sum(sizes) + 1)
    if sum(sizes) != dim or any(s < 0 for s in sizes):
        raise ctx.shape_error(
            f"size_splits {sizes} do not add up to dimension {axis} of size {dim}"
        )
    specs, index = _outputs(ctx, x, axis, sizes)
    return specs, SplitRecord(0, index)


def prepare_unpack(ctx: OpContext):
    ctx.check_arity(1, 1, len(ctx.outputs))
    x = ctx.input(0)
    ctx.require_dtype(x, SUPPORTED, "input")
    if x.rank < 1:
        raise ctx.shape_error("cannot unpack a scalar")
    axis = normalize_axis(ctx, int(ctx.option("axis", 0)), x.rank)
    num = x.shape[axis]
    if (int(ctx.option("num", 0)) or num) != num or len(ctx.outputs) != num:
        raise ctx.shape_error(
            f"dimension {axis} has size {num}; num is {ctx.option('num', num)} and the op "
            f"has {len(ctx.outputs)} outputs"
        )
    shape = x.shape[:axis] + x.shape[axis + 1:]
    lead = (slice(None),) * axis
    index = tuple(lead + (i,) for i in range(num))
    return tuple(OutputSpec(shape, x.dtype) for _ in range(num)), SplitRecord(0, index)


def eval(rec: SplitRecord, inputs, outputs) -> None:
    x = inputs[rec.source]
    for out, where in zip(outputs, rec.index):
        np.copyto(out, x[where])


def unpack_version(sig: OpSignature) -> int:
    """op_version.cc, UNPACK: int8 / uint8 2; bool 3; int16 in and out 4; float16 /
    bfloat16 5."""
    x = sig.input(0).type
    if x in (T.INT8, T.UINT8):
        return 2
    if x == T.BOOL:
        return 3
    if sig.int16_in_out:
        return 4
    return 5 if x in (T.FLOAT16, T.BFLOAT16) else 1


OPS = (
    # Parts of one axis: along dim 0 no part leads with the whole batch (but one part).
    # op_version.cc, SPLIT, by the data's type (input 1; input 0 is the axis): int16 4,
    # int32 3, int8 2. SPLIT_V (data first): int8 2.
    OpDef("SPLIT", shape_operands=(0,), int16=TYPE_GENERIC,
          float=Kernel(prepare_split, eval), integer=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT, per_sample=True,
          version=by_input_type({T.INT16: 4, T.INT32: 3, T.INT8: 2}, index=1)),
    OpDef("SPLIT_V", shape_operands=(1, 2), int16=TYPE_GENERIC,
          float=Kernel(prepare_split_v, eval), integer=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT, per_sample=True, version=INT8_2),
    # UNPACK drops its axis: along dim 0 of [N, N, ...] each output is one sample.
    # Every part must be quantized like the input (unpack.cc).
    OpDef("UNPACK", int16=TYPE_GENERIC,
          float=checked(Kernel(prepare_unpack, eval)), integer=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT, version=unpack_version),
)
