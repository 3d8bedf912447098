"""ADD, SUB, MUL with numpy broadcasting and a fused activation (float32, int32, int64).

Matches tensorflow/lite/kernels/add.cc, sub.cc and mul.cc for non-quantized types:

* both inputs and the output share one type;
* when the input shapes differ the output has the broadcast shape
  (CalculateShapeForBroadcast in kernel_util.cc uses numpy's rules: align from the
  right, a dimension of 1 stretches);
* the result is clamped to the fused activation range (CalculateActivationRange,
  which for int32/int64 gives [0, max] for RELU, [0, 6] for RELU6, ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .base import Kernel, OpContext, OutputSpec
from .fused import Clamp, activation_clamp, apply_clamp
from ..names import quoted

SUPPORTED = (np.float32, np.int32, np.int64)


@dataclass(frozen=True)
class BinaryRecord:
    ufunc: Callable  # np.add / np.subtract / np.multiply
    clamp: Clamp


def _make_prepare(ufunc):
    def prepare(ctx: OpContext):
        ctx.check_arity(2, 2)
        a, b = ctx.input(0), ctx.input(1)
        ctx.require_dtype(a, SUPPORTED, "first input")
        if b.dtype != a.dtype:
            raise ctx.dtype_error(
                f"inputs have different types ({a.dtype.name} {quoted(a.name)}, "
                f"{b.dtype.name} {quoted(b.name)})"
            )
        try:
            shape = np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            raise ctx.shape_error(
                f"input shapes {list(a.shape)} and {list(b.shape)} do not broadcast"
            ) from None
        record = BinaryRecord(ufunc, activation_clamp(ctx, a.dtype))
        return (OutputSpec(tuple(shape), a.dtype),), record

    return prepare


def eval(rec: BinaryRecord, inputs, outputs) -> None:
    out = outputs[0]
    rec.ufunc(inputs[0], inputs[1], out=out)
    apply_clamp(rec.clamp, out)


ADD = Kernel(_make_prepare(np.add), eval)
SUB = Kernel(_make_prepare(np.subtract), eval)
MUL = Kernel(_make_prepare(np.multiply), eval)
