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

from .common import native_ops
from edgelite.names import quoted
from .base import Chosen, Kernel, OpContext, OutputSpec, run_chosen, scratch
from .opdef import OpDef
from .versions import OpSignature, T


@dataclass(frozen=True)
class DequantizeRecord:
    scale: np.ndarray  # float64 scalar or float32 per-channel, broadcastable
    zero_point: np.ndarray  # int64 scalar or per-channel, broadcastable
    scratch: np.ndarray  # float64 (per-tensor) / float32 (per-channel) work buffer


def prepare(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, (np.float16, np.int8, np.uint8, np.int16), "input")
    spec = (OutputSpec(x.shape, np.dtype(np.float32)),)
    if x.dtype == np.float16:
        return spec, Chosen(eval_float16, None)

    q = x.quantization
    if q is None or len(q.scale) == 0:
        raise ctx.shape_error(f"input {quoted(x.name)} has no quantization parameters")
    zero_point = q.zero_point if len(q.zero_point) else np.zeros(len(q.scale), np.int64)
    if len(q.scale) == 1:
        scale, zp = np.float64(q.scale[0]), np.int64(zero_point[0])
        if x.dtype.itemsize == 1:  # 256 values: the C kernel looks their results up
            native = native_ops.lut(ctx, _table(x.dtype, scale, zp))
            if native is not None:
                return spec, native
        record = DequantizeRecord(scale=scale, zero_point=zp,
                                  scratch=scratch(ctx, x.shape, np.float64))
        return spec, Chosen(eval_affine, record)
    axis = q.quantized_dimension
    if not 0 <= axis < x.rank or x.shape[axis] != len(q.scale) or len(zero_point) != len(q.scale):
        raise ctx.shape_error(
            f"input {quoted(x.name)} has {len(q.scale)} scales / {len(zero_point)} zero points "
            f"for dimension {axis} of shape {list(x.shape)}"
        )
    bshape = [1] * x.rank
    bshape[axis] = len(q.scale)
    record = DequantizeRecord(scale=np.asarray(q.scale, np.float32).reshape(bshape),
                              zero_point=np.asarray(zero_point, np.int64).reshape(bshape),
                              scratch=scratch(ctx, x.shape, np.float32))
    return spec, Chosen(eval_affine, record)


def _table(dtype, scale: np.float64, zero_point: np.int64) -> np.ndarray:
    """eval_affine's outputs for every 8-bit value, indexed by its bits (make_lut's
    layout)."""
    q = np.arange(256, dtype=np.uint8).view(dtype)
    table = np.empty(256, np.float32)
    eval_affine(DequantizeRecord(scale, zero_point, np.empty(256, np.float64)), (q,), (table,))
    return table


def eval_float16(rec, inputs, outputs) -> None:
    np.copyto(outputs[0], inputs[0])


def eval_affine(rec: DequantizeRecord, inputs, outputs) -> None:
    # q - zero_point is exact in the scratch's float type (|q - zp| < 2^17).
    np.subtract(inputs[0], rec.zero_point, out=rec.scratch, casting="unsafe")
    np.multiply(rec.scratch, rec.scale, out=rec.scratch)
    np.copyto(outputs[0], rec.scratch, casting="same_kind")


def version(sig: OpSignature) -> int:
    """op_version.cc, DEQUANTIZE, by the input's type: uint4 8; int2 7; int4 6; int16 or
    float16 3; int8 5 if per-axis (several scales along its quantized dimension), else 2."""
    x = sig.input(0)
    if x.type == T.INT8:
        return 5 if x.per_axis else 2
    return {T.UINT4: 8, T.INT2: 7, T.INT4: 6, T.INT16: 3, T.FLOAT16: 3}.get(x.type, 1)


OPS = (
    # float16 or quantized data in, float32 out: one kernel, no integer path to choose.
    OpDef("DEQUANTIZE", boundary=True,
          float=Kernel(prepare, run_chosen), per_sample=True, version=version),
)
