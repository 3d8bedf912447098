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

from ... import libm
from . import native_ops
from ... import quant_math as qm
from edgelite.errors import EdgeliteError
from ..base import Chosen, Kernel, OpContext, OutputSpec, run_chosen
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
    fallback = _FALLBACK[name]

    def apply_numpy(x):
        with np.errstate(all="ignore"):
            return fallback(np.asarray(x, np.float64)).astype(np.float32)

    return apply_numpy


_FALLBACK = {"expf": np.exp, "expm1f": np.expm1, "logf": np.log, "tanhf": np.tanh,
             "erfcf": libm.erfc}


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


# --------------------------------------------------------------------------- int16 tables
#
# LUTPopulateInt16 (internal/common.h): 513 samples of f over the input's range, each
# nudged so that linear interpolation between neighbours is exact at the midpoint, in
# float32 (TfLiteRound: half away from zero):
#
#     lo_in = s_in * float(-32768 - z_in), hi_in = s_in * float(32767 - z_in), likewise
#     lo_out / hi_out; step = (hi_in - lo_in) / 512; k = 65536 / (hi_out - lo_out)
#     i < 512: v = f(lo_in + i*step), mid = f(lo_in + i*step + step/2), nxt = f(lo_in + (i+1)*step)
#              sample = round(v k); interp = round((nxt k + round(v k)) / 2)
#              lut[i] = clamp(sample - round((interp - round(mid k)) / 2))
#     lut[512] = clamp(round(f(hi_in) k))
#
# LUTLookup (reference_integer_ops/lut.h), in int16 arithmetic:
#     i = 256 + (q >> 7), base = lut[i], slope = int16(lut[i+1] - lut[i])
#     out = int16(base + int16((slope * (q & 127) + 64) >> 7))
# All 65536 inputs are looked up once in prepare (``int16_table``): eval is one take.


def _wrap16(v: np.ndarray) -> np.ndarray:
    return ((np.asarray(v, np.int64) + 32768) & 0xFFFF) - 32768


def populate_int16(xq: QParams, out: QParams, fn: FloatFn) -> np.ndarray:
    """LUTPopulateInt16's 513-entry table (int64 values in int16 range)."""
    f32 = np.float32
    lo_in = f32(xq.scale) * f32(-32768 - xq.zero_point)
    hi_in = f32(xq.scale) * f32(32767 - xq.zero_point)
    lo_out = f32(out.scale) * f32(-32768 - out.zero_point)
    hi_out = f32(out.scale) * f32(32767 - out.zero_point)
    step = f32((hi_in - lo_in) / f32(512))
    k = f32(f32(65536) / f32(hi_out - lo_out))
    i = np.arange(512).astype(np.float32)
    start = f32(lo_in) + (i * step).astype(np.float32)
    with np.errstate(all="ignore"):
        v = np.asarray(fn(start), np.float32)
        mid = np.asarray(fn((start + f32(step / f32(2))).astype(np.float32)), np.float32)
        nxt = np.asarray(fn((f32(lo_in) + ((i + f32(1)) * step).astype(np.float32))
                            .astype(np.float32)), np.float32)
        r = qm.round_half_away
        sample = r((v * k).astype(np.float32))
        interp = r((((nxt * k).astype(np.float32) + sample) / f32(2)).astype(np.float32))
        bias = r(((interp - r((mid * k).astype(np.float32))) / f32(2)).astype(np.float32))
        last = r((np.asarray(fn(np.array([hi_in], np.float32)), np.float32) * k)
                 .astype(np.float32))
        table = np.concatenate([(sample - bias).astype(np.float32), last])
    return np.clip(np.nan_to_num(table, nan=0.0), -32768, 32767).astype(np.int64)


def int16_table(xq: QParams, out: QParams, fn: FloatFn) -> np.ndarray:
    """The (65536,) int16 outputs of LUTLookup over LUTPopulateInt16's table, indexed by
    q + 32768."""
    lut = populate_int16(xq, out, fn)
    q = np.arange(-32768, 32768, dtype=np.int64)
    index = 256 + (q >> 7)  # 0 .. 511: index + 1 <= 512
    slope = _wrap16(lut[index + 1] - lut[index])
    delta = _wrap16((slope * (q & 127) + 64) >> 7)
    return _wrap16(lut[index] + delta).astype(np.int16)


# --------------------------------------------------------------------------- kernels


@dataclass(frozen=True)
class CheckedLutRecord:
    """A table plus the lowest valid input: SQRT / RSQRT fail the invoke on an input
    below the zero point (a negative real), as elementwise.cc does."""

    lut: np.ndarray
    lowest: int | None  # inputs below this fail the invoke; None: any input is valid
    where: str  # the op, for the error


def _check_nonnegative(rec: CheckedLutRecord, x: np.ndarray) -> None:
    if rec.lowest is not None and x.size and x.min() < rec.lowest:
        raise EdgeliteError(f"{rec.where}: input holds a negative value (below the zero "
                            f"point {rec.lowest}); the op is defined for values >= 0 only")


def apply_checked_lut(rec: CheckedLutRecord, inputs, outputs) -> None:
    """eval() of an 8-bit table op: the table is indexed by the input's bits."""
    _check_nonnegative(rec, inputs[0])
    rec.lut.take(inputs[0].view(np.uint8), out=outputs[0].view(rec.lut.dtype))


def apply_int16_table(rec: CheckedLutRecord, inputs, outputs) -> None:
    """eval() of an int16 table op: the (65536,) table is indexed by q + 32768."""
    _check_nonnegative(rec, inputs[0])
    np.take(rec.lut, inputs[0].astype(np.int64) + 32768, out=outputs[0])


def full_table(dtype, values_for) -> np.ndarray:
    """``values_for(q)`` over every q of ``dtype``: make_lut's 256-entry layout for 8-bit
    types, a (65536,) int16 table indexed by q + 32768 for int16."""
    if np.dtype(dtype) != np.int16:
        return make_lut(dtype, values_for)
    q = np.arange(-32768, 32768, dtype=np.int64)
    return np.clip(np.asarray(values_for(q), np.int64), -32768, 32767).astype(np.int16)


def float_table(dtype, xq: QParams, out: QParams, fn: FloatFn) -> np.ndarray:
    """LiteRT's table of ``fn``: LUTPopulateInt8 for 8-bit types, LUTPopulateInt16 read
    through LUTLookup for int16."""
    if np.dtype(dtype) == np.int16:
        return int16_table(xq, out, fn)
    return tflite_table(dtype, xq, out, fn)


def unary_quantized(ctx: OpContext, dtypes: tuple):
    """The checks every quantized unary table op makes: one input of ``dtypes``, an
    output of the same type; returns (input, its params, the output's params). int16
    (16x8 quantization) must be symmetric: zero points 0, as elementwise.cc checks."""
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, dtypes, "input")
    require_same_type(ctx, x, ctx.outputs[0])
    xq, out = qparams(ctx, x, "input"), qparams(ctx, ctx.outputs[0], "output")
    if x.dtype == np.int16 and (xq.zero_point, out.zero_point) != (0, 0):
        raise ctx.unsupported(f"int16 zero points {xq.zero_point} / {out.zero_point}; "
                              "quantized int16 needs 0 (symmetric)")
    return x, xq, out


def table_kernel(dtypes: tuple, table: Callable, *, nonnegative: bool = False) -> Kernel:
    """The Kernel of table_prepare."""
    return Kernel(table_prepare(dtypes, table, nonnegative=nonnegative), run_chosen)


def table_prepare(dtypes: tuple, table: Callable, *, nonnegative: bool = False):
    """prepare() of an op whose quantized kernel is ``table(ctx, dtype, xq, out)`` looked
    up per element (full_table's layout); ``nonnegative``: inputs below the zero point
    fail the invoke. The record is a Chosen: the 8-bit or the int16 lookup."""
    def prepare(ctx: OpContext):
        x, xq, out = unary_quantized(ctx, dtypes)
        lut = table(ctx, x.dtype, xq, out)
        record = CheckedLutRecord(lut, xq.zero_point if nonnegative else None, ctx.describe())
        apply = apply_int16_table if x.dtype == np.int16 else apply_checked_lut
        native = None if nonnegative else native_ops.lut(ctx, lut)  # 8-bit, in C
        return (OutputSpec(x.shape, x.dtype),), native or Chosen(apply, record)

    return prepare
