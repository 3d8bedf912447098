"""PAD and PADV2: surround the input with a constant; MIRROR_PAD (at the end).

Matches tensorflow/lite/kernels/pad.cc:

* paddings is the 2nd input, int32 or int64 of shape [rank, 2] holding (before, after)
  per dimension, both >= 0; it must be constant here (TFLite makes the output dynamic
  otherwise);
* output dimension i = input dimension i + before_i + after_i;
* the pad value is PADV2's 3rd input (a single value of the input's type); for PAD it is
  0, or the output's zero point for quantized integer tensors (so it reads as 0.0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Kernel, OpContext, OutputSpec, num_elements
from .opdef import TYPE_GENERIC, OpDef, QuantRule
from .common.same_params import checked
from .versions import INT8_2_INT16_3, T, first_match, input_type, rank_above
from edgelite.names import quoted

SUPPORTED = (np.float32, np.float16, np.int8, np.uint8, np.int16, np.int32, np.int64,
             np.bool_)


@dataclass(frozen=True)
class PadRecord:
    interior: tuple[slice, ...]  # where the input goes inside the output
    value: np.generic | None  # the pad value; None: PADV2 with a non-constant value input


def _pad_value(ctx: OpContext, dtype: np.dtype):
    value_input = ctx.optional_input(2)
    if value_input is not None:
        if value_input.dtype != dtype:
            raise ctx.dtype_error(
                f"pad value {quoted(value_input.name)} is {value_input.dtype.name}, the input is "
                f"{dtype.name}"
            )
        if num_elements(value_input.shape) != 1:
            raise ctx.shape_error(
                f"pad value {quoted(value_input.name)} must hold one value, has shape "
                f"{list(value_input.shape)}"
            )
        return None if value_input.data is None else value_input.data.reshape(())[()]
    quant = ctx.outputs[0].quantization
    if dtype.kind in "iu" and quant is not None and len(quant.zero_point) > 0:
        return dtype.type(quant.zero_point[0])
    return dtype.type(0)


def _make_prepare(max_inputs: int):
    def prepare(ctx: OpContext):
        ctx.check_arity(2, max_inputs)
        x = ctx.input(0)
        ctx.require_dtype(x, SUPPORTED, "input")
        paddings = np.asarray(ctx.constant_input(1, "paddings"))
        if paddings.dtype.kind not in "iu":
            raise ctx.dtype_error(f"paddings must be int32 or int64, got {paddings.dtype}")
        if paddings.shape != (x.rank, 2):
            raise ctx.shape_error(
                f"paddings shape {list(paddings.shape)} must be [{x.rank}, 2] for an input "
                f"of shape {list(x.shape)}"
            )
        if (paddings < 0).any():
            raise ctx.shape_error(f"paddings {paddings.tolist()} must be >= 0")
        before = [int(b) for b in paddings[:, 0]]
        shape = tuple(int(d + b + a) for d, (b, a) in zip(x.shape, paddings.tolist()))
        interior = tuple(slice(b, b + d) for b, d in zip(before, x.shape))
        record = PadRecord(interior, _pad_value(ctx, x.dtype))
        return (OutputSpec(shape, x.dtype),), record

    return prepare


def eval(rec: PadRecord, inputs, outputs) -> None:
    out = outputs[0]
    out.fill(rec.value if rec.value is not None else inputs[2].reshape(())[()])
    out[rec.interior] = inputs[0]




# --------------------------------------------------------------------------- MIRROR_PAD
#
# tensorflow/lite/kernels/mirror_pad.cc: paddings as for PAD; MirrorPadOptions.mode
# REFLECT (0) mirrors around the edge element without repeating it (at most dim - 1
# per side), SYMMETRIC (1) repeats it (at most dim per side). Output position i of a
# dimension (i in [-before, dim + after), input coordinates) reads input
#     REFLECT:    -i           (i < 0),  2 * dim - 2 - i   (i >= dim)
#     SYMMETRIC:  -i - 1       (i < 0),  2 * dim - 1 - i   (i >= dim)
# prepare() builds these index vectors; eval() is one fancy-indexed copy.

REFLECT, SYMMETRIC = 0, 1


@dataclass(frozen=True)
class MirrorPadRecord:
    grid: tuple[np.ndarray, ...]  # np.ix_ of the per-dimension source indices


def prepare_mirror_pad(ctx: OpContext):
    ctx.check_arity(2, 2)
    x = ctx.input(0)
    ctx.require_dtype(x, SUPPORTED, "input")
    paddings = np.asarray(ctx.constant_input(1, "paddings"))
    if paddings.dtype.kind not in "iu" or paddings.shape != (x.rank, 2) or (paddings < 0).any():
        raise ctx.shape_error(
            f"paddings {paddings.tolist()} must be an int [{x.rank}, 2] tensor of values >= 0"
        )
    mode = int(ctx.option("mode", REFLECT))
    if mode not in (REFLECT, SYMMETRIC):
        raise ctx.unsupported(f"mirror pad mode {mode} (only REFLECT=0, SYMMETRIC=1 exist)")
    extra = 1 if mode == REFLECT else 0  # REFLECT skips the edge element
    indices = []
    for d, (dim, (before, after)) in enumerate(zip(x.shape, paddings.tolist())):
        if max(before, after) > dim - extra:
            raise ctx.shape_error(
                f"padding ({before}, {after}) of dimension {d} (size {dim}) exceeds "
                f"{dim - extra}, the most {'REFLECT' if extra else 'SYMMETRIC'} mode allows"
            )
        i = np.arange(-before, dim + after)
        i = np.where(i < 0, -i - 1 + extra, i)
        i = np.where(i >= dim, 2 * dim - 1 - extra - i, i)
        indices.append(i)
    shape = tuple(len(i) for i in indices)
    return (OutputSpec(shape, x.dtype),), MirrorPadRecord(np.ix_(*indices))


def eval_mirror_pad(rec: MirrorPadRecord, inputs, outputs) -> None:
    np.copyto(outputs[0], inputs[0][rec.grid])


# op_version.cc, PAD / PADV2: the first of these that holds.
_PAD_VERSION = first_match((input_type(T.BOOL), 5), (rank_above(4), 4),
                          (input_type(T.INT16), 3), (input_type(T.INT8), 2))


OPS = (
    # Padding dim 0 changes its size, which batch_split.py's shape check refuses.
    OpDef("PAD", shape_operands=(1,), int16=TYPE_GENERIC,
          float=Kernel(_make_prepare(2), eval), integer=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT, per_sample=True, exact=True, version=_PAD_VERSION),
    # PADV2's constant value must be quantized like the output (pad.cc): data and value
    # share the output's parameters.
    OpDef("PADV2", shape_operands=(1,), float=checked(Kernel(_make_prepare(3), eval), inputs=(2,)),
          integer=TYPE_GENERIC, quant=QuantRule.SHARED, per_sample=True, exact=True,
          version=_PAD_VERSION),
    # op_version.cc, MIRROR_PAD: int16 3, int8 2
    # Input and output quantized alike, int16 zero points 0 (mirror_pad.cc).
    OpDef("MIRROR_PAD", shape_operands=(1,),
          float=checked(Kernel(prepare_mirror_pad, eval_mirror_pad), int16_zero=True),
          integer=TYPE_GENERIC, quant=QuantRule.SAME_AS_INPUT, exact=True, per_sample=True,
          version=INT8_2_INT16_3),
)
