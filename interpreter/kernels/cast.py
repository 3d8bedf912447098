"""CAST between float32 / float16 / float64, complex64, signed and unsigned integers and bool.

Matches tensorflow/lite/kernels/cast.cc (copyCast): the output type is the output
tensor's (CastOptions, when present, only repeats it), and

* float -> integer truncates toward zero and saturates: values beyond the integer range
  become its minimum / maximum, NaN its maximum (measured on the installed LiteRT, both
  kernel sets, for every float and integer type; numpy's astype wraps instead). TFLite
  Micro's cast.cc saturates alike but writes 0 for NaN (measured on tflite-micro): the
  kernel sets' one difference, ``_nan_as``;
* integer -> integer wraps modulo 2^bits (two's complement), as astype;
* anything -> bool is ``x != 0``; bool -> number is 0 / 1;
* complex64 -> any type casts the real part (copyCast of std::complex<float>:
  static_cast of std::real(a)), so complex -> bool is ``real != 0``, complex -> int
  saturates as float -> int; anything -> complex64 is (value, 0); complex -> complex
  copies. TFLite Micro has no complex type.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Chosen, Kernel, OpContext, OutputSpec, run_chosen
from .opdef import OpDef
from .versions import OpSignature, T

SUPPORTED = (np.float32, np.float16, np.float64, np.int8, np.uint8, np.int16, np.uint16,
             np.int32, np.uint32, np.int64, np.uint64, np.bool_, np.complex64)


@dataclass(frozen=True)
class Saturating:
    """float (or a complex's real part) -> integer: truncate, clamp to [low, high], NaN ->
    ``nan``. The clamp runs in ``work`` (float64 for a float64 input, else float32), up to
    ``top``: ``high`` when ``work`` holds it, else the largest ``work`` value below it
    (float32 has no 2^31 - 1: 2147483520); values from ``over`` (high rounded up in
    ``work``: 2^31) then get ``high`` itself."""

    low: float
    top: np.floating
    over: np.floating
    high: int
    nan: int
    work: np.dtype


def _saturating(ctx: OpContext, source: np.dtype, target: np.dtype) -> Saturating:
    info = np.iinfo(target)
    work = np.dtype(np.float64 if source == np.float64 else np.float32)
    rounded = work.type(info.max)  # 2^k - 1 -> 2^k where ``work`` lacks the bits
    exact = int(rounded) == info.max
    top = rounded if exact else np.nextafter(rounded, work.type(0))
    over = work.type(np.inf) if exact else rounded
    return Saturating(float(info.min), top, over, int(info.max), _nan_as(ctx, info), work)


def _nan_as(ctx: OpContext, info: np.iinfo) -> int:
    """What NaN becomes in an integer: LiteRT's the type's maximum, TFLM's 0."""
    return 0 if ctx.quant.micro else int(info.max)


def prepare(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, SUPPORTED, "input")
    out_type = ctx.output_dtype()
    if out_type.type not in SUPPORTED:
        raise ctx.unsupported(f"casting to {out_type.name} is not supported")
    spec = OutputSpec(x.shape, out_type)
    if x.dtype.kind in "fc" and out_type.kind in "iu":
        part = np.dtype(np.float32) if x.dtype.kind == "c" else x.dtype
        return (spec,), Chosen(eval_saturating, _saturating(ctx, part, out_type))
    if x.dtype.kind == "c" and out_type.kind != "c":
        return (spec,), Chosen(eval_real_part, None)
    return (spec,), Chosen(eval_copy, None)


def eval_copy(rec, inputs, outputs) -> None:
    np.copyto(outputs[0], inputs[0], casting="unsafe")  # -> float16: inf, as in LiteRT


def eval_real_part(rec, inputs, outputs) -> None:
    np.copyto(outputs[0], inputs[0].real, casting="unsafe")


def eval_saturating(rec: Saturating, inputs, outputs) -> None:
    x = inputs[0].real.astype(rec.work, copy=False)  # float16: exactly
    out = outputs[0]
    with np.errstate(invalid="ignore"):  # NaN: replaced below
        clamped = np.clip(x, rec.low, rec.top)
        np.copyto(out, clamped, casting="unsafe")  # truncates toward zero
    out[x >= rec.over] = rec.high
    nan = np.isnan(clamped)
    if nan.any():
        out[nan] = rec.nan


def version(sig: OpSignature) -> int:
    """op_version.cc, CAST, by the types on either side: int2 / uint4 8; bfloat16 7; int4 to
    float32 6; float64 / float16 5; uint16 4; int8 3; uint32 2 (complex64: 1)."""
    source, target = sig.input(0).type, sig.output(0).type
    if source == T.INT4 and target == T.FLOAT32:
        return 6
    for types, v in (((T.INT2, T.UINT4), 8), ((T.BFLOAT16,), 7), ((T.FLOAT64, T.FLOAT16), 5),
                     ((T.UINT16,), 4), ((T.INT8,), 3), ((T.UINT32,), 2)):
        if source in types or target in types:
            return v
    return 1


OPS = (
    OpDef("CAST", float=Kernel(prepare, run_chosen), per_sample=True, version=version),
)
