"""DIV, FLOOR_DIV, FLOOR_MOD, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, POW, PRELU and
BITWISE_XOR.

Elementwise on two inputs of one type with numpy broadcasting (kernel_util.cc
CalculateShapeForBroadcast), like arithmetic.py's ADD / SUB / MUL. Per op:

* DIV (tensorflow/lite/kernels/div.cc): float32 ``a / b`` and int32 C++ division, which
  truncates toward zero (not numpy's floor). An integer divisor of 0 fails the invoke
  (CheckNonZero). Fused activation as in arithmetic.py. (int64, like int32, is an
  edgelite extension for folding shape arithmetic.)
* FLOOR_DIV (floor_div.cc, reference/floor_div.h): float32 ``std::floor(a / b)``; integer
  floor division (rounds toward -inf), a divisor of 0 fails the invoke.
* FLOOR_MOD (floor_mod.cc, reference/floor_mod.h): the remainder with the divisor's sign,
  ``t = fmod(a, b)`` (C++ ``%`` for integers), then ``t + b`` where ``t != 0`` and the signs
  of ``t`` and ``b`` differ; float32, int8, int16, int32, int64 (raw values: LiteRT has no
  quantized FLOOR_MOD). An integer divisor 0 fails the invoke.
* MAXIMUM / MINIMUM (maximum_minimum.cc, reference/maximum_minimum.h): the reference
  picks ``a > b ? a : b`` (``a < b ? a : b``), so a NaN in ``a`` yields ``b`` and a NaN
  in ``b`` yields NaN -- reproduced with a mask instead of np.maximum (which returns NaN
  for both).
* SQUARED_DIFFERENCE (squared_difference.cc): ``d = a - b; d * d``.
* POW (pow.cc): float32 ``std::pow``; int32 by repeated multiplication (wrapping like
  numpy's integer power), a negative exponent fails the invoke.
* PRELU (prelu.cc, reference/prelu.h): ``x >= 0 ? x : x * alpha`` with alpha broadcast
  against the input (the output has the broadcast shape).
* BITWISE_XOR (bitwise_xor.cc): ``a ^ b`` on the raw bits of int8 / uint8 / int16 / uint16 /
  int32 / uint32 (quantization parameters, if any, are not looked at).

Quantized int8 / uint8 DIV and PRELU, and int8 SQUARED_DIFFERENCE, look each pair of
input values up in a table of LiteRT's integer arithmetic (pair_table.py).

Float division by zero gives inf / NaN here, as in TensorFlow. (LiteRT's reference DIV
clamps every result to [lowest, max] even without an activation, so it returns
+-3.4028235e38 where TensorFlow and LiteRT's default kernels give +-inf; edgelite's
ADD / SUB / MUL do not clamp either.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from edgelite.errors import EdgeliteError
from edgelite.names import quoted
from .base import Kernel, OpContext, OutputSpec, scratch
from .common.native_ops import broadcast_shape
from .common.fused import Clamp, activation_clamp, apply_clamp
from .opdef import TYPE_GENERIC, OpDef, QuantRule
from .common.pair_table import (div_values, prelu_values, quantized_pair_kernel,
                                squared_difference_values)
from .versions import INT8_2, OpSignature, T, by_input_type


@dataclass(frozen=True)
class BinaryRecord:
    compute: Callable  # compute(rec, a, b, out): the op's arithmetic for the inputs' type
    clamp: Clamp
    mask: np.ndarray | None  # bool scratch of the output's shape (MAXIMUM, MINIMUM, PRELU,
    #                         FLOOR_MOD)
    where: str  # the op, for errors raised by invoke()


def _fail(rec: BinaryRecord, message: str) -> EdgeliteError:
    return EdgeliteError(f"{rec.where}: {message}")


def _nonzero(rec: BinaryRecord, b: np.ndarray) -> None:
    if not b.all():
        raise _fail(rec, "integer division by zero")


# --------------------------------------------------------------------------- ops
#
# One function per op and kind of data (float / integer), chosen in prepare().


def _div_float(rec, a, b, out):
    np.divide(a, b, out=out)  # x / 0: +-inf or NaN, as in C++ (warnings off: runloop.quiet)


def _div_int(rec, a, b, out):
    _nonzero(rec, b)
    q = np.floor_divide(a, b)
    # C++ truncates: undo numpy's floor where the division was inexact and signs differ.
    q += (q * b != a) & ((a < 0) != (b < 0))
    np.copyto(out, q)


def _floor_div_float(rec, a, b, out):
    np.divide(a, b, out=out)
    np.floor(out, out=out)


def _floor_div_int(rec, a, b, out):
    _nonzero(rec, b)
    np.floor_divide(a, b, out=out)  # -128 // -1 wraps in int8, as in C++


def _floor_mod_float(rec, a, b, out):
    # reference/floor_mod.h: t = fmod(a, b), plus b where t != 0 and t's sign is not b's.
    # (np.mod differs in one bit: it gives a zero result b's sign, the reference a's.)
    np.fmod(a, b, out=out)  # fmod(inf, b), fmod(a, 0): NaN, as in LiteRT
    np.less(out, 0, out=rec.mask)
    np.not_equal(rec.mask, np.less(b, 0), out=rec.mask)
    np.logical_and(rec.mask, out != 0, out=rec.mask)
    np.add(out, b, out=out, where=rec.mask)


def _floor_mod_int(rec, a, b, out):
    _nonzero(rec, b)
    np.mod(a, b, out=out)


def _maximum(rec, a, b, out):
    np.greater(a, b, out=rec.mask)
    np.copyto(out, b)
    np.copyto(out, a, where=rec.mask)


def _minimum(rec, a, b, out):
    np.less(a, b, out=rec.mask)
    np.copyto(out, b)
    np.copyto(out, a, where=rec.mask)


def _squared_difference(rec, a, b, out):
    np.subtract(a, b, out=out)
    np.multiply(out, out, out=out)


def _bitwise_xor(rec, a, b, out):
    np.bitwise_xor(a, b, out=out)


def _pow_float(rec, a, b, out):
    np.power(a, b, out=out)


def _pow_int(rec, a, b, out):
    if (b < 0).any():
        raise _fail(rec, "integer POW with a negative exponent")
    np.power(a, b, out=out)


def _prelu(rec, x, alpha, out):
    np.multiply(x, alpha, out=out)
    np.greater_equal(x, 0, out=rec.mask)
    np.copyto(out, x, where=rec.mask)


# --------------------------------------------------------------------------- prepare / eval


def same_type_pair(ctx: OpContext, dtypes: tuple):
    """The two inputs of a binary op, checked to share one of `dtypes`, and their broadcast
    output shape (numpy broadcasting, as TFLite's Broadcast*Slow helpers)."""
    ctx.check_arity(2, 2)
    a, b = ctx.input(0), ctx.input(1)
    ctx.require_dtype(a, dtypes, "first input")
    if b.dtype != a.dtype:
        raise ctx.dtype_error(
            f"inputs have different types ({a.dtype.name} {quoted(a.name)}, "
            f"{b.dtype.name} {quoted(b.name)})"
        )
    try:
        shape = broadcast_shape(tuple(a.shape), tuple(b.shape))
    except ValueError:
        raise ctx.shape_error(
            f"input shapes {list(a.shape)} and {list(b.shape)} do not broadcast"
        ) from None
    return a, b, shape


def _make(compute: Callable, dtypes: tuple, *, integer: Callable | None = None,
          fused: bool = False, mask: bool = False) -> Kernel:
    """``compute`` serves every type, or float data only when ``integer`` serves integers."""
    def prepare(ctx: OpContext):
        a, b, shape = same_type_pair(ctx, dtypes)
        clamp = activation_clamp(ctx, a.dtype) if fused else None
        chosen = integer if integer is not None and a.dtype.kind in "iu" else compute
        record = BinaryRecord(chosen, clamp, scratch(ctx, shape, np.bool_) if mask else None,
                              ctx.describe())
        return (OutputSpec(shape, a.dtype),), record

    return Kernel(prepare, eval)


def eval(rec: BinaryRecord, inputs, outputs) -> None:
    out = outputs[0]
    rec.compute(rec, inputs[0], inputs[1], out)
    apply_clamp(rec.clamp, out)


_F32 = (np.float32,)
_F32_I32 = (np.float32, np.int32)
_NUMERIC = (np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64)
_FLOOR = (np.float32, np.int8, np.int16, np.int32, np.int64)
_BITS = (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32)


def div_version(sig: OpSignature) -> int:
    """op_version.cc, DIV: 2 for a broadcast with more than 4 dimensions."""
    return 2 if sig.broadcasts_beyond_4d else 1


def min_max_version(sig: OpSignature) -> int:
    """op_version.cc, MAXIMUM / MINIMUM: int16 in and out 4; a broadcast with more than 4
    dimensions 3; int8 2."""
    if sig.int16_in_out:
        return 4
    if sig.broadcasts_beyond_4d:
        return 3
    return 2 if sig.input(0).type == T.INT8 else 1


def _elementwise(name: str, kernel: Kernel, **facts) -> OpDef:
    return OpDef(name, float=kernel, per_sample=True, **facts)


# Versions (op_version.cc): FLOOR_DIV 3 for int8 / int16, 2 for float32; FLOOR_MOD 2 for
# int8 / int16; SQUARED_DIFFERENCE 2 for int8; POW and PRELU have no case: 1.
OPS = (
    _elementwise("DIV", _make(_div_float, (np.float32, np.int32, np.int64), integer=_div_int,
                              fused=True),
                 fused_activation=True, version=div_version, neutral=1.0,
                 broadcast_rank=5,  # div.cc: up to 5-D
                 integer=quantized_pair_kernel(div_values, divides=True),
                 int16=quantized_pair_kernel(div_values, (np.int16,), divides=True),
                 quant=QuantRule.OWN_RANGE),
    _elementwise("FLOOR_DIV", _make(_floor_div_float, _FLOOR, integer=_floor_div_int),
                 broadcast_rank=4, version=by_input_type({T.INT8: 3, T.INT16: 3, T.FLOAT32: 2})),
    _elementwise("FLOOR_MOD", _make(_floor_mod_float, _FLOOR, integer=_floor_mod_int,
                                    mask=True), broadcast_rank=4,
                 version=by_input_type({T.INT8: 2, T.INT16: 2})),
    # Quantized inputs are compared and copied raw (maximum_minimum.cc, both kernel sets):
    # the quantizer gives the inputs and the output one set of parameters.
    _elementwise("MAXIMUM", _make(_maximum, _NUMERIC, mask=True), integer=TYPE_GENERIC,
                 broadcast_rank=4,
                 quant=QuantRule.SHARED, exact=True, int16=TYPE_GENERIC, version=min_max_version),
    _elementwise("MINIMUM", _make(_minimum, _NUMERIC, mask=True), integer=TYPE_GENERIC,
                 broadcast_rank=4,
                 quant=QuantRule.SHARED, exact=True, int16=TYPE_GENERIC, version=min_max_version),
    _elementwise("SQUARED_DIFFERENCE", _make(_squared_difference, _F32_I32), version=INT8_2,
                 broadcast_rank=4,
                 integer=quantized_pair_kernel(squared_difference_values, (np.int8,)),
                 quant=QuantRule.OWN_RANGE, uint8=False),  # int8 only in LiteRT
    _elementwise("POW", _make(_pow_float, _F32_I32, integer=_pow_int), broadcast_rank=4),
    _elementwise("PRELU", _make(_prelu, _F32, mask=True),
                 integer=quantized_pair_kernel(prelu_values), quant=QuantRule.OWN_RANGE),
    _elementwise("BITWISE_XOR", _make(_bitwise_xor, _BITS), broadcast_rank=4),
)
