"""REVERSE_V2: reverse the order of the elements along some axes (any element type).

Matches tensorflow/lite/kernels/reverse.cc and reference_ops::Reverse
(tensorflow/lite/kernels/internal/reference/reverse.h):

* input 0: float32, float16, int8, uint8, int16, int32, int64 or bool; the output has its
  type and shape. Quantized int8 / uint8 data is moved as it is (the quantizer gives the
  output the input's parameters, as TFLite's: operator_property.cc
  restrict_same_input_output_scale);
* input 1: the axes, a 1-D int32 tensor; negative counts from the end. LiteRT reads them on
  every invoke, so they may be computed: constant axes are checked once in prepare(),
  computed ones on every invoke().

Where edgelite does more than LiteRT, it does what tf.reverse does: LiteRT refuses axes
that are not contiguous once sorted ("Non-contiguous `axes` not supported"), edgelite
reverses each of them; LiteRT 2.x crashes on an empty axes list, edgelite copies the input.
An axis named twice is an error (as in TF: "specified more than once").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.errors import ShapeError
from .base import Kernel, OpContext, OutputSpec
from .opdef import TYPE_GENERIC, OpDef, QuantRule
from .versions import T, by_input_type
from edgelite.names import quoted

DTYPES = (np.float32, np.float16, np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_)


@dataclass(frozen=True)
class ReverseRecord:
    rank: int
    axes: tuple[int, ...] | None  # constant axes, normalized; None: read input 1 each invoke
    where: str  # the op, for errors raised by invoke()


def _normalize(values: np.ndarray, rank: int, where: str) -> tuple[int, ...]:
    axes = [int(a) for a in values.reshape(-1)]
    bad = [a for a in axes if not -rank <= a < rank]
    if bad:
        raise ShapeError(f"{where}: axis {bad[0]} is out of range for a rank-{rank} input "
                         f"(valid: {-rank} to {rank - 1})")
    normalized = tuple(a % rank for a in axes)
    if len(set(normalized)) != len(normalized):
        raise ShapeError(f"{where}: axes {axes[:8]} name a dimension more than once")
    return normalized


def prepare(ctx: OpContext):
    ctx.check_arity(2, 2)
    x, axes_t = ctx.input(0), ctx.input(1)
    ctx.require_dtype(x, DTYPES, "input")
    ctx.require_dtype(axes_t, (np.int32,), "axes")
    if axes_t.rank != 1 or axes_t.shape[0] > x.rank:
        raise ctx.shape_error(f"axes {quoted(axes_t.name)} must be 1-D with at most one entry "
                              f"per input dimension; has shape {list(axes_t.shape)} for a "
                              f"rank-{x.rank} input")
    axes = None
    if axes_t.data is not None:
        axes = _normalize(axes_t.data, x.rank, ctx.describe())
    return (OutputSpec(x.shape, x.dtype),), ReverseRecord(x.rank, axes, ctx.describe())


def eval(rec: ReverseRecord, inputs, outputs) -> None:
    axes = rec.axes
    if axes is None:
        axes = _normalize(inputs[1], rec.rank, rec.where)
    np.copyto(outputs[0], np.flip(inputs[0], axes))


OPS = (
    # Input 1 holds the axes: samples stay apart when they leave out dim 0 (reduction; the
    # batch split never splits computed axes).
    OpDef("REVERSE_V2", int16=TYPE_GENERIC, float=Kernel(prepare, eval), integer=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT, reduction=True, exact=True,
          version=by_input_type({T.INT8: 3, T.BOOL: 2})),  # op_version.cc: int8 3, bool 2
)
