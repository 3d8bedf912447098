"""DEQUANTIZE to float32: float16 weights, or int8 / uint8 / int16 affine-quantized data.

Matches tensorflow/lite/kernels/dequantize.cc:

* float16 -> float32 is an exact widening cast;
* per-tensor (reference_ops::Dequantize): out = float(scale * (q - zero_point)), with the
  scale as a double, so the product is computed in float64 and rounded once;
* per-channel (reference_ops::PerChannelDequantize): out = (q - zero_point[c]) * scale[c]
  in float32 along ``quantized_dimension``.

A DEQUANTIZE of a constant (the usual case: float16 or int8 weights) has constant
inputs, so the interpreter evaluates it once in allocate_tensors(), as TFLite does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import OpContext, OutputSpec, scratch
from ..names import quoted


@dataclass(frozen=True)
class DequantizeRecord:
    scale: np.ndarray | None  # None for float16; float64 scalar or float32 per-channel
    zero_point: np.ndarray | None  # int64 scalar or per-channel, broadcastable
    scratch: np.ndarray | None  # float64 (per-tensor) / float32 (per-channel) work buffer


def prepare(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, (np.float16, np.int8, np.uint8, np.int16), "input")
    spec = (OutputSpec(x.shape, np.dtype(np.float32)),)
    if x.dtype == np.float16:
        return spec, DequantizeRecord(None, None, None)

    q = x.quantization
    if q is None or len(q.scale) == 0:
        raise ctx.shape_error(f"input {quoted(x.name)} has no quantization parameters")
    zero_point = q.zero_point if len(q.zero_point) else np.zeros(len(q.scale), np.int64)
    if len(q.scale) == 1:
        record = DequantizeRecord(np.float64(q.scale[0]), np.int64(zero_point[0]),
                                  scratch(ctx, x.shape, np.float64))
        return spec, record
    axis = q.quantized_dimension
    if not 0 <= axis < x.rank or x.shape[axis] != len(q.scale) or len(zero_point) != len(q.scale):
        raise ctx.shape_error(
            f"input {quoted(x.name)} has {len(q.scale)} scales / {len(zero_point)} zero points "
            f"for dimension {axis} of shape {list(x.shape)}"
        )
    bshape = [1] * x.rank
    bshape[axis] = len(q.scale)
    record = DequantizeRecord(np.asarray(q.scale, np.float32).reshape(bshape),
                              np.asarray(zero_point, np.int64).reshape(bshape),
                              scratch(ctx, x.shape, np.float32))
    return spec, record


def eval(rec: DequantizeRecord, inputs, outputs) -> None:
    if rec.scale is None:
        np.copyto(outputs[0], inputs[0])
        return
    # q - zero_point is exact in the scratch's float type (|q - zp| < 2^17).
    np.subtract(inputs[0], rec.zero_point, out=rec.scratch, casting="unsafe")
    np.multiply(rec.scratch, rec.scale, out=rec.scratch)
    np.copyto(outputs[0], rec.scratch, casting="same_kind")
