"""Tensors made from shapes and scalars: SHAPE, RANK, FILL, RANGE, ZEROS_LIKE.

The converter folds shape computations by running these in this interpreter, so they
handle integer data; their outputs are constants whenever their inputs are.

* SHAPE (tensorflow/lite/kernels/shape.cc): the input's shape as a 1-D tensor of
  ShapeOptions.out_type (int32 or int64, as the output tensor declares). It depends on
  the shape only, so prepare() computes it.
* RANK (tensorflow/lite/kernels/rank.cc): the number of dimensions, an int32 scalar.
* FILL (tensorflow/lite/kernels/fill.cc): a tensor of shape ``dims`` (1-D int32/int64,
  constant here; every entry >= 0) holding the scalar ``value``; the output has the
  value's type.
* RANGE (tensorflow/lite/kernels/range.cc): start, limit, delta are scalars of one type
  (int32, int64 or float32), constant here since they fix the length. delta != 0 and it
  must point from start to limit; start == limit gives an empty range as in TensorFlow
  (TFLite's GetSize refuses it). Length: integers (|limit - start| + |delta| - 1) /
  |delta|; floats ceil(|(limit - start) / delta|) in float32. The reference fills by
  repeated addition (value += delta), so float outputs carry its rounding -- np.cumsum
  in float32 adds in the same order. The values are computed by eval(), so a huge range
  is not materialized by prepare() (allocate_tensors() folds small ones).
* ZEROS_LIKE (tensorflow/lite/kernels/zeros_like.cc): zeros of the input's shape and type.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..loader.model import MAX_TENSOR_BYTES
from edgelite.names import quoted
from .base import Kernel, OpContext, OutputSpec, num_elements
from .opdef import TYPE_GENERIC, OpDef, QuantRule
from .common.same_params import checked
from .versions import T, by_input_type

INT_TYPES = (np.int32, np.int64)


@dataclass(frozen=True)
class ConstantRecord:
    value: np.ndarray  # the output, computed in prepare()


def eval_constant(rec: ConstantRecord, inputs, outputs) -> None:
    np.copyto(outputs[0], rec.value)


# --------------------------------------------------------------------------- SHAPE / RANK


def prepare_shape(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    out_type = ctx.output_dtype()
    if out_type.type not in INT_TYPES:
        raise ctx.dtype_error(f"output must be int32 or int64, the file declares {out_type}")
    value = np.array(x.shape, dtype=out_type).reshape(x.rank)
    return (OutputSpec((x.rank,), out_type),), ConstantRecord(value)


def prepare_rank(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    return (OutputSpec((), np.dtype(np.int32)),), ConstantRecord(np.array(x.rank, np.int32))


# --------------------------------------------------------------------------- FILL


@dataclass(frozen=True)
class FillRecord:
    value: np.generic | None  # None: read the (non-constant) value input on invoke


def prepare_fill(ctx: OpContext):
    ctx.check_arity(2, 2)
    dims_t, value_t = ctx.input(0), ctx.input(1)
    ctx.require_dtype(dims_t, INT_TYPES, "dims")
    if dims_t.rank != 1:
        raise ctx.shape_error(
            f"dims {quoted(dims_t.name)} must be 1-D, has shape {list(dims_t.shape)}"
        )
    dims = tuple(int(d) for d in ctx.constant_input(0, "dims"))
    if any(d < 0 for d in dims):
        raise ctx.shape_error(f"dims {list(dims)} has a negative entry")
    if num_elements(value_t.shape) != 1 or value_t.rank > 1:
        raise ctx.shape_error(
            f"value {quoted(value_t.name)} must be a scalar, has shape {list(value_t.shape)}"
        )
    if value_t.dtype.kind not in "biuf":
        raise ctx.unsupported(f"value {quoted(value_t.name)} has type {value_t.dtype.name}")
    value = None if value_t.data is None else value_t.data.reshape(())[()]
    return (OutputSpec(dims, value_t.dtype),), FillRecord(value)


def eval_fill(rec: FillRecord, inputs, outputs) -> None:
    outputs[0].fill(rec.value if rec.value is not None else inputs[1].reshape(())[()])


# --------------------------------------------------------------------------- RANGE


def prepare_range(ctx: OpContext):
    ctx.check_arity(3, 3)
    start_t = ctx.input(0)
    ctx.require_dtype(start_t, (np.int32, np.int64, np.float32), "start")
    scalars = []
    for i, what in enumerate(("start", "limit", "delta")):
        t = ctx.input(i)
        if t.dtype != start_t.dtype:
            raise ctx.dtype_error(
                f"{what} {quoted(t.name)} is {t.dtype.name}, start is {start_t.dtype.name}"
            )
        if t.rank != 0:
            raise ctx.shape_error(
                f"{what} {quoted(t.name)} must be a scalar, has shape {list(t.shape)}"
            )
        scalars.append(ctx.constant_input(i, what).reshape(())[()])
    start, limit, delta = scalars
    if delta == 0 or (start > limit and delta > 0) or (start < limit and delta < 0):
        raise ctx.shape_error(
            f"RANGE({start}, {limit}, {delta}): delta must be non-zero and point from start "
            "to limit"
        )
    dtype = start_t.dtype
    if dtype.kind == "i":
        start, limit, delta = int(start), int(limit), int(delta)
        size = (abs(limit - start) + abs(delta) - 1) // abs(delta)
    else:
        size = int(np.ceil(np.abs((limit - start) / delta)))  # float32 arithmetic
    if size * dtype.itemsize > MAX_TENSOR_BYTES:
        raise ctx.shape_error(f"RANGE({start}, {limit}, {delta}) would have {size} elements")
    # The values are made by eval(): allocate_tensors() folds a small RANGE into a
    # constant, and a huge one runs per invoke() in the arena, under the memory limit.
    return (OutputSpec((size,), dtype),), RangeRecord(start, delta)


@dataclass(frozen=True)
class RangeRecord:
    start: int | np.floating
    delta: int | np.floating


def eval_range(rec: RangeRecord, inputs, outputs) -> None:
    out = outputs[0]
    if out.dtype.kind == "i":
        out[...] = np.arange(out.size, dtype=np.int64) * rec.delta + rec.start
    else:
        out.fill(rec.delta)
        out[:1] = rec.start
        np.cumsum(out, dtype=np.float32, out=out)


# --------------------------------------------------------------------------- ZEROS_LIKE


def prepare_zeros_like(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    if x.dtype.kind not in "biuf":
        raise ctx.unsupported(f"input {quoted(x.name)} has type {x.dtype.name}")
    return (OutputSpec(x.shape, x.dtype),), None


def eval_zeros_like(rec, inputs, outputs) -> None:
    outputs[0].fill(0)


OPS = (
    # SHAPE / RANK / FILL / RANGE: outputs made from shapes and scalars, not per sample.
    OpDef("SHAPE", shape_only=True, float=Kernel(prepare_shape, eval_constant)),
    OpDef("RANK", shape_only=True, float=Kernel(prepare_rank, eval_constant)),
    # op_version.cc, FILL, by the value's type (input 1): float16 4; int8 / int16 3;
    # bool / string 2. RANGE: int64 2. SHAPE, RANK and ZEROS_LIKE have no case: 1.
    # FILL copies its value: value and output quantized alike (fill.cc), so they share.
    OpDef("FILL", shape_operands=(0,),
          float=checked(Kernel(prepare_fill, eval_fill), inputs=(1,), int16_zero=True),
          integer=TYPE_GENERIC, quant=QuantRule.SHARED, exact=True,
          version=by_input_type({T.FLOAT16: 4, T.INT8: 3, T.INT16: 3, T.BOOL: 2, T.STRING: 2},
                                index=1)),
    OpDef("RANGE", shape_operands=(0, 1, 2), float=Kernel(prepare_range, eval_range),
          version=by_input_type({T.INT64: 2})),
    OpDef("ZEROS_LIKE", float=Kernel(prepare_zeros_like, eval_zeros_like), per_sample=True),
)
