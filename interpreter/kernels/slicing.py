"""SLICE and STRIDED_SLICE: a rectangular (strided) window of the input, any element type.

SLICE matches tensorflow/lite/kernels/slice.cc (CalculateOutputShapeVector):

* begin and size are 1-D int32 / int64 tensors with one entry per input dimension;
* a size of -1 means "up to the end" (size = dim - begin); otherwise 0 <= begin and
  begin + size <= dim, or the op fails;
* the output shape needs ``size`` and, where a size is -1, ``begin`` too. A computed
  ``begin`` with fixed sizes is a dynamic window: it is read and checked on every
  invoke(). A computed ``size`` (or ``begin`` with a size of -1) makes the output a
  dynamic tensor (kernels/base.py), as slice.cc's SetTensorToDynamic does: its shape is
  worked out at invoke -- TensorFlow's TensorListSetItem in a loop body lowers to
  slices whose length is the loop counter. (LiteRT keeps a fully specified declared
  output shape instead, and fails at invoke when the computed one differs.)

STRIDED_SLICE matches tensorflow/lite/kernels/strided_slice.cc (BuildStridedSliceParams,
ResizeOutputTensor) with the index arithmetic of
tensorflow/lite/kernels/internal/strided_slice_logic.h (StridedSliceStartForAxis,
StridedSliceEndForAxis):

* masks are bit fields over the entries of begin/end/strides (int32, constant here);
* ellipsis_mask expands one entry to as many full dimensions as needed; new_axis_mask
  (outside the ellipsis) inserts a dimension of size 1; shrink_axis_mask drops the
  dimension and keeps element ``begin``; dimensions past the given entries are kept whole;
* start: negative values count from the end, then clamp to [0, dim] (stride > 0) or
  [-1, dim - 1] (stride < 0); begin_mask overrides it with 0 / dim - 1;
* end: likewise clamped, end_mask overrides it with dim / -1; with ``offset`` the end
  entry is a length: end = start + end;
* output dimension = max(0, ceil((end - start) / stride)).

A shrunk entry's begin is clamped like any start (so -10 on a size-4 axis reads element
0, as in TFLite). Deviations, on purpose: a shrunk begin that clamps onto the end
(begin >= dim) is an error here (TFLite silently writes nothing, TensorFlow fails), and a
shrunk axis with a negative stride keeps element ``start`` as TensorFlow does (TFLite's
loop ``index > start + 1`` writes nothing there).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.errors import ShapeError
from edgelite.names import quoted
from .base import Chosen, Kernel, OpContext, OutputSpec, run_chosen
from .opdef import TYPE_GENERIC, OpDef, QuantRule
from .versions import T, first_match, input_type, option_set, rank_above


@dataclass(frozen=True)
class SliceRecord:
    index: tuple  # basic numpy index (slices, ints, None)
    shape: tuple[int, ...]  # output shape


@dataclass(frozen=True, kw_only=True)
class DynamicSliceRecord:
    """SLICE with a computed ``begin``: the window is built and checked per invoke."""

    sizes: tuple[int, ...]  # the fixed sizes (the output shape)
    dims: tuple[int, ...]  # the input shape
    where: str  # the op, for errors raised by invoke()


def _int_vector(ctx: OpContext, i: int, what: str, length: int, needs: str) -> list[int] | None:
    """A 1-D int32/int64 operand of ``length`` entries; its values if constant, else None."""
    t = ctx.input(i)
    if t.dtype.kind not in "iu":
        raise ctx.dtype_error(f"{what} {quoted(t.name)} must be int32 or int64, got {t.dtype.name}")
    if t.rank != 1 or t.shape[0] != length:
        raise ctx.shape_error(f"{what} {quoted(t.name)} has shape {list(t.shape)}; {needs}")
    return None if t.data is None else [int(v) for v in t.data]


# --------------------------------------------------------------------------- SLICE


def prepare_slice(ctx: OpContext):
    ctx.check_arity(3, 3)
    x = ctx.input(0)
    needs = f"it needs one entry per input dimension ([{x.rank}])"
    begin = _int_vector(ctx, 1, "begin", x.rank, needs)
    sizes = _int_vector(ctx, 2, "size", x.rank, needs)
    if sizes is None or (begin is None and -1 in sizes):
        # every dim only the values tell: -1, as WHERE's rows (the converter's shape
        # inference keeps such dims dynamic: value_shapes.py)
        return (OutputSpec((-1,) * x.rank, x.dtype, dynamic=True),), Chosen(
            eval_computed_slice, DynamicSliceRecord(sizes=(), dims=x.shape,
                                                    where=ctx.describe()))
    if begin is None:
        if any(s < 0 for s in sizes) or any(s > d for s, d in zip(sizes, x.shape)):
            raise ctx.shape_error(f"size {sizes} does not fit the input shape {list(x.shape)}")
        shape = tuple(sizes)
        return (OutputSpec(shape, x.dtype),), Chosen(eval_dynamic_slice, DynamicSliceRecord(
            sizes=shape, dims=x.shape, where=ctx.describe()))
    index, shape = [], []
    for d, (b, s, dim) in enumerate(zip(begin, sizes, x.shape)):
        if s == -1:
            s = dim - b
        if b < 0 or s < 0 or b + s > dim:
            raise ctx.shape_error(
                f"begin {begin} / size {sizes} do not fit the input shape {list(x.shape)} "
                f"(dimension {d})"
            )
        index.append(slice(b, b + s))
        shape.append(s)
    return (OutputSpec(tuple(shape), x.dtype),), Chosen(
        eval_window, SliceRecord(tuple(index), tuple(shape)))


def eval_dynamic_slice(rec: DynamicSliceRecord, inputs, outputs) -> None:
    begin = inputs[1].tolist()
    for b, s, dim in zip(begin, rec.sizes, rec.dims):
        if b < 0 or b + s > dim:
            raise ShapeError(
                f"{rec.where}: begin {begin} with size {list(rec.sizes)} is outside the input "
                f"shape {list(rec.dims)}"
            )
    np.copyto(outputs[0], inputs[0][tuple(slice(b, b + s) for b, s in zip(begin, rec.sizes))])


def eval_computed_slice(rec: DynamicSliceRecord, inputs, outputs: list) -> None:
    """SLICE whose output shape depends on computed values: outputs[0] is a new array
    (a dynamic output, kernels/base.py)."""
    begin, sizes = inputs[1].tolist(), inputs[2].tolist()
    window = []
    for b, s, dim in zip(begin, sizes, rec.dims):
        s = dim - b if s == -1 else s
        if b < 0 or s < 0 or b + s > dim:
            raise ShapeError(f"{rec.where}: begin {begin} / size {sizes} do not fit the input "
                             f"shape {list(rec.dims)}")
        window.append(slice(b, b + s))
    outputs[0] = inputs[0][tuple(window)].copy()


# --------------------------------------------------------------------------- STRIDED_SLICE


def _bit(mask: int, i: int) -> bool:
    return bool(mask >> i & 1)


def _expand_masks(ctx: OpContext, rank: int, count: int):
    """strided_slice.cc BuildStridedSliceParams: per effective dimension, what it is.

    Returns a list of (kind, orig) with kind in {"full", "new", "index"} and orig the
    entry of begin/end/strides it reads ("index" only).
    """
    ellipsis = int(ctx.option("ellipsis_mask", 0))
    new_axis = int(ctx.option("new_axis_mask", 0))
    num_add_axis = sum(1 for i in range(count) if not _bit(ellipsis, i) and _bit(new_axis, i))
    eff_dims = rank + num_add_axis
    # Which effective dimensions the ellipsis covers, and which are new axes.
    eff_ellipsis, eff_new = set(), set()
    ellipsis_start, expanded = eff_dims, 0
    i = 0
    while i < eff_dims:
        if _bit(ellipsis, i):
            ellipsis_start = i
            end = max(i + 1, min(i + 1 + num_add_axis + rank - count, eff_dims))
            expanded = end - ellipsis_start - 1
            eff_ellipsis.update(range(i, end))
            i = end
            continue
        if _bit(new_axis, i - expanded):
            eff_new.add(i)
        i += 1
    plan, added_ellipsis = [], 0
    for i in range(eff_dims):
        if i in eff_ellipsis:
            added_ellipsis = max(0, i - ellipsis_start)
            plan.append(("full", None))
        elif i in eff_new:
            plan.append(("new", None))
        elif i >= count + expanded:
            plan.append(("full", None))
        else:
            plan.append(("index", i - added_ellipsis))
    return plan


def _start(start: int, stride: int, size: int, begin_masked: bool) -> int:
    """StridedSliceStartForAxis: in [0, size] (stride > 0) or [-1, size - 1] (stride < 0)."""
    lo, hi = (0, size) if stride > 0 else (-1, size - 1)
    if start < 0:
        start += size
    start = min(max(start, lo), hi)
    if begin_masked:
        start = 0 if stride > 0 else size - 1
    return start


def _end(start: int, end: int, stride: int, size: int, end_masked: bool, offset: bool) -> int:
    """StridedSliceEndForAxis for an axis that is not shrunk."""
    lo, hi = (0, size) if stride > 0 else (-1, size - 1)
    if offset:
        end += start
    if end < 0:
        end += size
    end = min(max(end, lo), hi)
    if end_masked:
        end = size if stride > 0 else -1
    return end


def prepare_strided_slice(ctx: OpContext):
    ctx.check_arity(4, 4)
    x = ctx.input(0)
    n = ctx.input(1).shape[0] if ctx.input(1).rank == 1 else -1
    needs = "begin, end and strides must be 1-D with the same length"
    values = [_int_vector(ctx, i, what, n, needs) for i, what in
              ((1, "begin"), (2, "end"), (3, "strides"))]
    for i, what in ((1, "begin"), (2, "end"), (3, "strides")):
        if values[i - 1] is None:
            ctx.constant_input(i, what)  # raises: the output shape depends on it
    begin, end, strides = values
    begin_mask = int(ctx.option("begin_mask", 0))
    end_mask = int(ctx.option("end_mask", 0))
    shrink_mask = int(ctx.option("shrink_axis_mask", 0))
    offset = bool(ctx.option("offset", False))

    index, shape, axis = [], [], 0  # axis: the input dimension the next entry reads
    for kind, orig in _expand_masks(ctx, x.rank, n):
        if kind == "new":
            index.append(None)
            shape.append(1)
            continue
        size = x.shape[axis]
        axis += 1
        if kind == "full":
            index.append(slice(None))
            shape.append(size)
            continue
        stride = strides[orig]
        if stride == 0:
            raise ctx.shape_error(f"strides {strides} has a 0 (entry {orig})")
        start = _start(begin[orig], stride, size, _bit(begin_mask, orig))
        if _bit(shrink_mask, orig):
            # TFLite clamps a shrunk index like any start (so -10 on a size-4 axis reads
            # element 0) and writes nothing when it lands on the end.
            if not 0 <= start < size:
                raise ctx.shape_error(
                    f"begin {begin[orig]} of shrunk entry {orig} is outside dimension "
                    f"{axis - 1} of size {size} (input shape {list(x.shape)})"
                )
            index.append(start)
            continue
        stop = _end(start, end[orig], stride, size, _bit(end_mask, orig), offset)
        count = max(0, -((start - stop) // stride))  # ceil((stop - start) / stride)
        if offset and count != max(0, -(-end[orig] // stride)):
            # TFLite sizes the output from the end entry alone in offset mode.
            raise ctx.shape_error(
                f"offset slice [{begin[orig]}, +{end[orig]}) runs past dimension "
                f"{axis - 1} of size {size}"
            )
        if count == 0:
            index.append(slice(0, 0))
        else:
            last = start + count * stride
            index.append(slice(start, last if last >= 0 else None, stride))
        shape.append(count)
    if axis != x.rank:
        raise ctx.shape_error(
            f"begin/end/strides ({n} entries) and masks do not fit a rank-{x.rank} input"
        )
    return (OutputSpec(tuple(shape), x.dtype),), SliceRecord(tuple(index), tuple(shape))


def eval_window(rec: SliceRecord, inputs, outputs) -> None:
    """A window fixed in prepare(): SLICE with constant begin, STRIDED_SLICE."""
    np.copyto(outputs[0], inputs[0][rec.index])


# op_version.cc, SLICE and STRIDED_SLICE: the first of these that holds.
_SLICE_VERSION = first_match(
    (input_type(T.INT4), 7), (input_type(T.UINT32), 6), (rank_above(4), 5),
    (input_type(T.INT16), 4), (input_type(T.STRING), 3), (input_type(T.INT8), 2))
_STRIDED_SLICE_VERSION = first_match(
    (option_set("offset"), 8), (input_type(T.UINT32), 7),
    (option_set("ellipsis_mask", "new_axis_mask"), 6), (input_type(T.STRING), 5),
    (rank_above(4), 4), (input_type(T.BOOL), 3), (input_type(T.INT8), 2))


OPS = (
    # A SLICE that keeps the batch whole on dim 0 (its size N) starts at 0 there.
    # Values move: int8 / uint8 / int16 keep the input's parameters (slice.cc copies bits).
    OpDef("SLICE", int16=TYPE_GENERIC,
          float=Kernel(prepare_slice, run_chosen), integer=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT, exact=True, per_sample=True, version=_SLICE_VERSION),
    # Not per sample: a negative stride on dim 0 reverses the batch.
    OpDef("STRIDED_SLICE", shape_operands=(1, 2, 3), int16=TYPE_GENERIC,
          float=Kernel(prepare_strided_slice, eval_window),
          integer=TYPE_GENERIC, quant=QuantRule.SAME_AS_INPUT, exact=True,
          version=_STRIDED_SLICE_VERSION),
)
