"""Lookup tables of quantized elementwise ops, built in prepare() from a float function.

An int8 / uint8 op that maps each input value to one output value is a 256-entry table;
TFLite builds most of them from the op's float function (tensorflow/lite/kernels/
internal/common.h LUTPopulate, used by exp.cc, elementwise.cc LOG, gelu.cc,
activations.cc ELU). The float function runs in float32 through the C library
(``cfloat``), as LiteRT's std::exp(float) etc. do, so each table entry is the one
LiteRT stores; ``make_lut`` (requantize.py) lays it out by the input's bits.

LUTPopulateInt8 (``tflite_table``), every step in float32:

    x = s_in * float(q - z_in)
    y = f(x)
    out = clamp(round_half_away(y * (1 / s_out)) + z_out)

clamped to the output type in float, so an entry too large for int32 -- exp overflowing
to inf among them -- is the highest output (LiteRT 2.3.0, measured).

XNNPACK's quantized unary operators build their table from a float reference instead
(``xnn_table``): x = (float(q) - z_in) * s_in; out = clamp(rint(f(x) * (1 / s_out) +
z_out)), half to even.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import quant_math as qm
from ..errors import EdgeliteError
from .base import OpContext, OutputSpec
from .requantize import QParams, make_lut, qparams, require_same_type

FloatFn = Callable[[np.ndarray], np.ndarray]  # float32 array -> float32 array


# --------------------------------------------------------------------------- C float math


def _load_libm():
    name = ctypes.util.find_library("m")
    if name is None:
        return None
    try:
        return ctypes.CDLL(name)
    except OSError:
        return None


_LIBM = _load_libm()
_FALLBACK = {"expf": np.exp, "logf": np.log, "tanhf": np.tanh, "sqrtf": np.sqrt}


def cfloat(name: str) -> FloatFn:
    """The C library's float32 function ``name`` (expf, logf, tanhf, erfcf, ...) applied
    element by element; where the library is not reachable, numpy's float64 function
    narrowed to float32 (correctly rounded: at most one ulp from glibc's)."""
    fn = getattr(_LIBM, name, None) if _LIBM is not None else None
    if fn is not None:
        fn.argtypes = [ctypes.c_float]
        fn.restype = ctypes.c_float

        def apply(x):
            x = np.asarray(x, np.float32)
            return np.array([fn(float(v)) for v in x.reshape(-1)], np.float32).reshape(x.shape)

        return apply
    fallback = _FALLBACK.get(name) or _erfc64

    def apply_numpy(x):
        with np.errstate(all="ignore"):
            return fallback(np.asarray(x, np.float64)).astype(np.float32)

    return apply_numpy


def _erfc64(x: np.ndarray) -> np.ndarray:
    from .activations import _erfc  # Numerical Recipes erfcc, within ~1 float32 ulp
    return _erfc(x)


# --------------------------------------------------------------------------- tables


def _clamped(v: np.ndarray, dtype) -> np.ndarray:
    """Integral float values clamped to ``dtype``'s range (NaN: 0), as int64."""
    info = np.iinfo(dtype)
    return np.clip(np.nan_to_num(v, nan=0.0), info.min, info.max).astype(np.int64)


def tflite_table(dtype, xq: QParams, out: QParams, fn: FloatFn) -> np.ndarray:
    """LUTPopulateInt8 (internal/common.h) of ``fn`` for an int8 / uint8 tensor."""
    def values(q):
        x = np.float32(xq.scale) * (q - xq.zero_point).astype(np.float32)
        with np.errstate(all="ignore"):
            y = np.asarray(fn(x), np.float32)
            rescaled = qm.round_half_away(y * (np.float32(1.0) / np.float32(out.scale)))
            return _clamped(rescaled.astype(np.float32) + np.float32(out.zero_point), dtype)

    return make_lut(dtype, values)


def xnn_table(dtype, xq: QParams, out: QParams, fn: FloatFn) -> np.ndarray:
    """XNNPACK's table for a quantized unary operator: dequantize, ``fn``, quantize with
    lrintf (half to even), all in float32."""
    def values(q):
        x = (q.astype(np.float32) - np.float32(xq.zero_point)) * np.float32(xq.scale)
        with np.errstate(all="ignore"):
            y = np.asarray(fn(x), np.float32)
            v = y * (np.float32(1.0) / np.float32(out.scale)) + np.float32(out.zero_point)
        return _clamped(np.rint(v), dtype)

    return make_lut(dtype, values)


# --------------------------------------------------------------------------- kernels


@dataclass(frozen=True)
class CheckedLutRecord:
    """A table plus the lowest valid input: SQRT / RSQRT fail the invoke on an input
    below the zero point (a negative real), as elementwise.cc does."""

    lut: np.ndarray
    lowest: int | None  # inputs below this fail the invoke; None: any input is valid
    where: str  # the op, for the error


def apply_checked_lut(rec: CheckedLutRecord, inputs, outputs) -> None:
    x = inputs[0]
    if rec.lowest is not None and x.size and x.min() < rec.lowest:
        raise EdgeliteError(f"{rec.where}: input holds a negative value (below the zero "
                            f"point {rec.lowest}); the op is defined for values >= 0 only")
    rec.lut.take(x.view(np.uint8), out=outputs[0].view(rec.lut.dtype))


def unary_quantized(ctx: OpContext, dtypes: tuple):
    """The checks every quantized unary table op makes: one input of ``dtypes``, an
    output of the same type; returns (input, its params, the output's params)."""
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, dtypes, "input")
    require_same_type(ctx, x, ctx.outputs[0])
    return x, qparams(ctx, x, "input"), qparams(ctx, ctx.outputs[0], "output")


def table_prepare(dtypes: tuple, table: Callable, *, nonnegative: bool = False):
    """prepare() of an op whose int8 / uint8 kernel is ``table(ctx, dtype, xq, out)``
    looked up per element; ``nonnegative``: inputs below the zero point fail the invoke."""
    def prepare(ctx: OpContext):
        x, xq, out = unary_quantized(ctx, dtypes)
        lut = table(ctx, x.dtype, xq, out)
        record = CheckedLutRecord(lut, xq.zero_point if nonnegative else None, ctx.describe())
        return (OutputSpec(x.shape, x.dtype),), record

    return prepare
