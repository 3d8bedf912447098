"""DYNAMIC_UPDATE_SLICE: the operand with ``update`` written over it at ``start_indices``.

Matches tensorflow/lite/kernels/dynamic_update_slice.cc (Prepare, ClampStartIndices,
DynamicUpdateSlice), which follows XLA's DynamicUpdateSlice:

* inputs: operand, update (same element type and rank as the operand, every dimension at
  most the operand's) and start_indices, 1-D int32 or int64 with one entry per operand
  dimension; the output has the operand's shape and type. Rank at most 8 (kMaxRank);
* each start index is clamped to [0, operand_dim - update_dim], so the update always
  lands whole inside the operand (a negative start writes at 0, one past the end writes
  flush with the end); there is no error for out-of-range starts;
* any element type with a fixed size (TfLiteTypeGetSize > 0: bool, (u)int8..64,
  float16/32/64, complex): the kernel moves bytes. Strings are refused (size 0 there);
  int4 / bfloat16 have no numpy type and never reach a kernel here;
* quantized tensors are copied code for code: LiteRT checks no scale or zero point, so a
  file whose operand, update and output disagree runs as it does there. TF's converter
  gives the three one set of parameters (tfl_ops.td: SameOperandsAndResultsScale), and so
  does edgelite's quantizer (QuantRule.SHARED).

The start indices are usually computed (a loop counter, TensorListSetItem lowered): they
are read and clamped on every invoke(); constant ones are clamped once in prepare().
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.names import quoted
from .base import Chosen, Kernel, OpContext, OutputSpec, run_chosen
from .opdef import TYPE_GENERIC, OpDef, QuantRule
from .versions import T, first_match, input_type

MAX_RANK = 8  # dynamic_update_slice.cc, kMaxRank (Eval refuses a larger operand)


@dataclass(frozen=True)
class FixedRecord:
    """Constant start indices: the window the update covers, clamped in prepare()."""

    window: tuple[slice, ...]


@dataclass(frozen=True)
class ComputedRecord:
    """Computed start indices: clamped on every invoke()."""

    sizes: tuple[int, ...]  # the update's shape
    last: tuple[int, ...]  # operand_dim - update_dim: the largest start per dimension


def _window(starts, sizes: tuple[int, ...], last: tuple[int, ...]) -> tuple[slice, ...]:
    """ClampStartIndices: min(max(0, start), operand_dim - update_dim) per dimension."""
    window = []
    for start, size, hi in zip(starts, sizes, last):
        begin = min(max(0, int(start)), hi)
        window.append(slice(begin, begin + size))
    return tuple(window)


def prepare(ctx: OpContext):
    ctx.check_arity(3, 3)
    operand, update, starts = ctx.input(0), ctx.input(1), ctx.input(2)
    if operand.dtype.kind not in "biufc":
        raise ctx.unsupported(f"operand {quoted(operand.name)} has type {operand.dtype.name}; "
                              "DYNAMIC_UPDATE_SLICE takes fixed-size element types only")
    if update.dtype != operand.dtype:
        raise ctx.dtype_error(f"update {quoted(update.name)} has type {update.dtype.name}, the "
                              f"operand {quoted(operand.name)} {operand.dtype.name}; they must "
                              "be equal")
    ctx.require_dtype(starts, (np.int32, np.int64), "start_indices")
    if operand.rank > MAX_RANK:
        raise ctx.shape_error(f"operand {quoted(operand.name)} has rank {operand.rank}; "
                              f"DYNAMIC_UPDATE_SLICE takes at most {MAX_RANK} dimensions")
    if starts.rank != 1 or starts.shape[0] != operand.rank:
        raise ctx.shape_error(
            f"start_indices {quoted(starts.name)} has shape {list(starts.shape)}; it needs one "
            f"entry per dimension of the operand {quoted(operand.name)} ([{operand.rank}])")
    if update.rank != operand.rank or any(u > d for u, d in zip(update.shape, operand.shape)):
        raise ctx.shape_error(
            f"update {quoted(update.name)} has shape {list(update.shape)}; it must have the "
            f"rank of the operand {quoted(operand.name)} {list(operand.shape)} and fit inside "
            "it in every dimension")
    last = tuple(d - u for d, u in zip(operand.shape, update.shape))
    out = (OutputSpec(operand.shape, operand.dtype),)
    if starts.data is not None:
        return out, Chosen(eval_fixed, FixedRecord(_window(starts.data, update.shape, last)))
    return out, Chosen(eval_computed, ComputedRecord(sizes=update.shape, last=last))


def eval_fixed(rec: FixedRecord, inputs, outputs) -> None:
    np.copyto(outputs[0], inputs[0])
    outputs[0][rec.window] = inputs[1]


def eval_computed(rec: ComputedRecord, inputs, outputs) -> None:
    np.copyto(outputs[0], inputs[0])
    outputs[0][_window(inputs[2].tolist(), rec.sizes, rec.last)] = inputs[1]


# op_version.cc, DYNAMIC_UPDATE_SLICE: by the operand's type, then int64 start indices.
_VERSION = first_match(
    (input_type(T.BFLOAT16), 6), (input_type(T.INT4), 5), (input_type(T.INT16), 4),
    (input_type(T.FLOAT16), 3), (input_type(T.INT64, index=2), 2))


OPS = (
    # Not per sample: a start index on dim 0 picks the samples the update overwrites.
    # exact: the values are moved, never recomputed (one set of parameters: SHARED).
    OpDef("DYNAMIC_UPDATE_SLICE", float=Kernel(prepare, run_chosen), integer=TYPE_GENERIC,
          quant=QuantRule.SHARED, exact=True, version=_VERSION),
)
