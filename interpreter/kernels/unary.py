"""Elementwise math on one input: EXP, LOG, SQRT, RSQRT, SQUARE, ABS, NEG, SIGN, FLOOR,
CEIL, ROUND, SIN, COS, LOGICAL_NOT.

Matches tensorflow/lite/kernels/elementwise.cc (ABS, SIN, COS, LOG, SQRT, RSQRT, SQUARE,
LOGICAL_NOT, SIGN), exp.cc, neg.cc, floor.cc, ceil.cc and round.cc for non-quantized
types: the output has the input's shape and type, and each element is the C++ library
function of its input:

* RSQRT is ``1.f / std::sqrt(x)`` (two roundings, so not a fused rsqrt);
* SQUARE is ``x * x``; LOG of 0 is -inf and of a negative number NaN, as std::log;
* ROUND is reference/round.h RoundToNearest: halves go to the even neighbour
  (np.rint), not away from zero;
* ABS / NEG / SIGN also take integers (ABS of the most negative value wraps, like
  std::abs on two's complement). NEG of int8 negates the raw values (neg.cc ignores
  quantization parameters: -(-128) wraps to -128), so it is no quantized op.

Quantized int8 and symmetric int16 (elementwise.cc, exp.cc; LiteRT has no uint8 kernel
for these and XNNPACK takes none of them, so both kernel sets compute alike), each a
table over every input value built in prepare (lut.py):

* EXP -- LUTPopulate of expf; LOG -- LUTPopulate of ``x <= 0 ? out_min : logf(x)`` with
  out_min = float(-128 - z_out) * s_out (the lowest output);
* ABS -- d = |q - z_in|; out = d + z_out when s_in == s_out, else MBQM(d, M) + z_out with
  M = QuantizeMultiplier(float(s_in / s_out));
* SQRT -- x = s_in * float(q - z_in) (float32); out = int(sqrtf(x) / s_out) + z_out,
  truncated toward zero;
* RSQRT -- integer only: d = q - z_in; d == 0 -> 127; else
  (m, e) = GetInvSqrtQuantizedMultiplierExp(d, -1), v = MBQM(1, m, e + 20),
  out = MBQM(v, M, shift - 20) + z_out with (M, shift) = QuantizeMultiplier(1.0 /
  float(sqrtf(s_in) * s_out)). int16: a LUTPopulate table of 1 / sqrtf(x) (32767 s_out
  for x <= 0).

EXP, LOG and int16 RSQRT use LUTPopulateInt16's interpolated table for int16 (lut.py).
SQRT and RSQRT fail the invoke on an input below the zero point, as LiteRT does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import quant_math as qm
from .base import Chosen, Kernel, OpContext, OutputSpec, run_chosen
from .common.lut import cfloat, float_table, full_table, table_kernel
from .common.native_float_ops import native_unary_f32
from .normalization import inv_sqrt
from .opdef import OpDef, QuantRule
from .versions import INT8_2_INT16_3, INT8_OR_INT16_2, OpSignature, T, by_input_type


@dataclass(frozen=True)
class UnaryRecord:
    apply: Callable  # apply(x, out)


def _rsqrt(x, out):
    np.sqrt(x, out=out)
    np.divide(np.float32(1.0), out, out=out)


def _square(x, out):
    np.multiply(x, x, out=out)


def _ufunc(f):
    def apply(x, out):
        f(x, out=out)

    return apply


def _make(apply: Callable, dtypes: tuple, native: str | None = None) -> Kernel:
    """The float kernel: ``apply`` in numpy, or the C kernel named ``native``
    (native_float_ops) on float32 where the backend is on."""
    def prepare(ctx: OpContext):
        ctx.check_arity(1, 1)
        x = ctx.input(0)
        ctx.require_dtype(x, dtypes, "input")
        chosen = native and x.dtype == np.float32 and native_unary_f32(ctx, native, x.shape)
        return (OutputSpec(x.shape, x.dtype),), chosen or Chosen(eval, UnaryRecord(apply))

    return Kernel(prepare, run_chosen)


def eval(rec: UnaryRecord, inputs, outputs) -> None:
    # exp(100) = inf, log(0) = -inf, sqrt(-1) = NaN: the IEEE results (warnings off:
    # runloop.quiet, around every run of steps).
    rec.apply(inputs[0], outputs[0])


_F32 = (np.float32,)
_SIGNED = (np.float32, np.int8, np.int16, np.int32, np.int64)


def abs_version(sig: OpSignature) -> int:
    """op_version.cc, ABS: int32 5; int16 3 with quantization parameters, 4 without;
    int8 / uint8 2."""
    x = sig.input(0)
    if x.type == T.INT16:
        return 3 if x.quantized else 4
    return {T.INT32: 5, T.INT8: 2, T.UINT8: 2}.get(x.type, 1)


def _elementwise(name: str, apply: Callable, dtypes: tuple, **facts) -> OpDef:
    return OpDef(name, float=_make(apply, dtypes), per_sample=True, **facts)


# --------------------------------------------------------------------------- int8 / int16


def _exp_table(ctx, dtype, xq, out):
    return float_table(dtype, xq, out, cfloat("expf"))


def _log_table(ctx, dtype, xq, out):
    out_min = np.float32(np.iinfo(dtype).min - out.zero_point) * np.float32(out.scale)
    logf = cfloat("logf")
    return float_table(dtype, xq, out, lambda x: np.where(
        x <= 0, out_min, logf(np.where(x > 0, x, np.float32(1.0)))))


def _abs_table(ctx, dtype, xq, out):
    rounding = ctx.quant.rounding
    if xq.scale == out.scale:
        return full_table(dtype, lambda q: np.abs(q - xq.zero_point) + out.zero_point)
    m, shift = qm.quantize_multiplier(float(np.float32(xq.scale) / np.float32(out.scale)),
                                      rounding)
    return full_table(dtype, lambda q: qm.multiply_by_quantized_multiplier(
        np.abs(q - xq.zero_point), m, shift, rounding) + out.zero_point)


def _sqrt_table(ctx, dtype, xq, out):
    def values(q):
        x = np.float32(xq.scale) * np.maximum(q - xq.zero_point, 0).astype(np.float32)
        return np.trunc(np.sqrt(x) / np.float32(out.scale)).astype(np.int64) + out.zero_point

    return full_table(dtype, values)


def _rsqrt_table(ctx, dtype, xq, out):
    if dtype == np.int16:  # a LUTPopulate table of 1 / sqrtf(x), 32767 s_out for x <= 0
        top = np.float32(32767) * np.float32(out.scale)
        return float_table(dtype, xq, out, lambda x: np.where(
            x <= 0, top, np.float32(1.0) / np.sqrt(np.where(x > 0, x, np.float32(1.0)))))
    rounding = ctx.quant.rounding
    sqrt_scale = np.sqrt(np.float32(xq.scale), dtype=np.float32)
    m_out, shift_out = qm.quantize_multiplier(
        1.0 / float(np.float32(sqrt_scale * np.float32(out.scale))), rounding)

    def value(d: int) -> int:
        if d <= 0:  # 0: "any value close to 0 represents the max output"; < 0 never runs
            return int(np.iinfo(dtype).max)
        m, e = inv_sqrt(d)
        v = qm.multiply_by_quantized_multiplier(1, m, e + 20, rounding)
        return int(qm.multiply_by_quantized_multiplier(v, m_out, shift_out - 20, rounding)
                   + out.zero_point)

    return full_table(dtype, lambda q: np.array([value(int(d)) for d in q - xq.zero_point]))


def _lut_op(name: str, apply: Callable, dtypes: tuple, table, nonnegative: bool = False,
            native: str | None = None, **facts) -> OpDef:
    """An op with a float kernel and int8 / int16 (16x8) table kernels. (LiteRT has no
    uint8 kernel for these; see the note on QuantRule.OWN_RANGE at OPS.)"""
    def quantized(types):
        return table_kernel(types, table, nonnegative=nonnegative)

    return OpDef(name, uint8=False,
                 float=_make(apply, dtypes, native),
                 integer=quantized((np.int8,)),
                 int16=quantized((np.int16,)), quant=QuantRule.OWN_RANGE, per_sample=True,
                 **facts)


# EXP, LOG, SQRT, RSQRT and ABS: LiteRT (and edgelite) refuse them in uint8, so a uint8
# conversion keeps them float (uint8=False).
# Versions (op_version.cc), by the input's type: EXP, LOG and SQRT int8 / int16 2; RSQRT
# int16 3, int8 2; SIGN int32 2; SQUARE, NEG, FLOOR, CEIL, ROUND, SIN, COS and LOGICAL_NOT
# have no case: 1.
OPS = (
    _lut_op("EXP", _ufunc(np.exp), _F32, _exp_table, native="exp_f32",
            version=INT8_OR_INT16_2),
    _lut_op("LOG", _ufunc(np.log), _F32, _log_table, version=INT8_OR_INT16_2),
    _lut_op("SQRT", _ufunc(np.sqrt), _F32, _sqrt_table, nonnegative=True,
            version=INT8_OR_INT16_2),
    _lut_op("RSQRT", _rsqrt, _F32, _rsqrt_table, nonnegative=True, version=INT8_2_INT16_3),
    _elementwise("SQUARE", _square, (np.float32, np.int32)),
    _lut_op("ABS", _ufunc(np.abs), _SIGNED, _abs_table, version=abs_version),
    _elementwise("NEG", _ufunc(np.negative), _SIGNED),
    _elementwise("SIGN", _ufunc(np.sign), (np.float32, np.float64, np.int32),
                 version=by_input_type({T.INT32: 2})),
    _elementwise("FLOOR", _ufunc(np.floor), _F32),
    _elementwise("CEIL", _ufunc(np.ceil), _F32),
    _elementwise("ROUND", _ufunc(np.rint), _F32),
    _elementwise("SIN", _ufunc(np.sin), _F32),
    _elementwise("COS", _ufunc(np.cos), _F32),
    _elementwise("LOGICAL_NOT", _ufunc(np.logical_not), (np.bool_,)),
)
