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
  std::abs on two's complement).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .base import Kernel, OpContext, OutputSpec
from .opdef import OpDef
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


def _make(apply: Callable, dtypes: tuple) -> Kernel:
    def prepare(ctx: OpContext):
        ctx.check_arity(1, 1)
        x = ctx.input(0)
        ctx.require_dtype(x, dtypes, "input")
        return (OutputSpec(x.shape, x.dtype),), UnaryRecord(apply)

    return Kernel(prepare, eval)


def eval(rec: UnaryRecord, inputs, outputs) -> None:
    # exp(100) = inf, log(0) = -inf, sqrt(-1) = NaN: the IEEE results, without warnings.
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
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


# Versions (op_version.cc), by the input's type: EXP, LOG and SQRT int8 / int16 2; RSQRT
# int16 3, int8 2; SIGN int32 2; SQUARE, NEG, FLOOR, CEIL, ROUND, SIN, COS and LOGICAL_NOT
# have no case: 1.
OPS = (
    _elementwise("EXP", _ufunc(np.exp), _F32, version=INT8_OR_INT16_2),
    _elementwise("LOG", _ufunc(np.log), _F32, version=INT8_OR_INT16_2),
    _elementwise("SQRT", _ufunc(np.sqrt), _F32, version=INT8_OR_INT16_2),
    _elementwise("RSQRT", _rsqrt, _F32, version=INT8_2_INT16_3),
    _elementwise("SQUARE", _square, (np.float32, np.int32)),
    _elementwise("ABS", _ufunc(np.abs), _SIGNED, version=abs_version),
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
