"""ARG_MAX and ARG_MIN along one axis.

Match tensorflow/lite/kernels/arg_min_max.cc and reference_ops::ArgMinMax
(tensorflow/lite/kernels/internal/reference/arg_min_max.h):

* the axis is the 2nd input, int32 / int64 holding one value (constant here, it fixes the
  output shape); negative counts from the end; the output drops that dimension;
* the output type is int32 or int64 (ArgMaxOptions / ArgMinOptions.output_type, as the
  output tensor declares);
* the reference keeps the first index on ties (it replaces only on a strict ``>`` /
  ``<``), which is what np.argmax / np.argmin return.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .base import Kernel, OpContext, OutputSpec, normalize_axis
from .opdef import TYPE_GENERIC, OpDef, QuantRule
from .versions import T, by_input_type
from edgelite.names import quoted

SUPPORTED = (np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_)


@dataclass(frozen=True)
class ArgRecord:
    find: Callable  # np.argmax / np.argmin
    axis: int


def _make(find: Callable) -> Kernel:
    def prepare(ctx: OpContext):
        ctx.check_arity(2, 2)
        x, axis_t = ctx.input(0), ctx.input(1)
        ctx.require_dtype(x, SUPPORTED, "input")
        ctx.require_dtype(axis_t, (np.int32, np.int64), "axis")
        values = ctx.constant_input(1, "axis").reshape(-1)
        if values.size != 1:
            raise ctx.shape_error(
                f"axis {quoted(axis_t.name)} must hold one value, has {values.size}")
        if x.rank < 1:
            raise ctx.shape_error("input must have at least one dimension")
        axis = normalize_axis(ctx, int(values[0]), x.rank)
        if x.shape[axis] == 0:
            raise ctx.shape_error(f"cannot reduce the empty dimension {axis} of {list(x.shape)}")
        out_type = ctx.output_dtype()
        if out_type.type not in (np.int32, np.int64):
            raise ctx.dtype_error(f"output must be int32 or int64, the file declares {out_type}")
        shape = x.shape[:axis] + x.shape[axis + 1:]
        return (OutputSpec(shape, out_type),), ArgRecord(find, axis)

    return Kernel(prepare, eval)


def eval(rec: ArgRecord, inputs, outputs) -> None:
    np.copyto(outputs[0], rec.find(inputs[0], axis=rec.axis), casting="same_kind")


# Version (op_version.cc, ARG_MAX / ARG_MIN): 3 for a bool input, 2 for int8.
_VERSION = by_input_type({T.BOOL: 3, T.INT8: 2})

OPS = (
    # Input 1 holds the axis: samples stay apart when it is not dim 0.
    # Quantized inputs: the positions of the largest / smallest codes are those of the
    # values (a scale is positive), so the float kernel serves them (arg_min_max.cc).
    OpDef("ARG_MAX", shape_operands=(1,), float=_make(np.argmax), integer=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT, reduction=True, version=_VERSION),
    OpDef("ARG_MIN", shape_operands=(1,), float=_make(np.argmin), integer=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT, reduction=True, version=_VERSION),
)
