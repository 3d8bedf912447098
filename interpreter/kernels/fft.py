"""Spectral ops: RFFT2D, and the complex -> real ops that follow it (COMPLEX_ABS, REAL, IMAG).

RFFT2D matches tensorflow/lite/kernels/rfft2d.cc:

* input 0: float32, rank >= 2; the transform runs over its last two dims, every leading
  index (a "slice") on its own;
* input 1: fft_length, int32 [2] = (fft_height, fft_width), both powers of two (the fft2d
  library LiteRT calls takes nothing else: IsPowerOfTwo). A computed length makes the
  output dynamic (rfft2d.cc: SetTensorToDynamic), prepared at invoke (dynamic.py);
* each slice is cropped or zero-padded to fft_height x fft_width (PrepareInputBuffer: the
  first min(h, fft_height) rows and min(w, fft_width) columns are kept, the rest is 0);
* output: complex64, the input's leading dims + [fft_height, fft_width / 2 + 1] -- the
  non-negative frequencies of the last axis, as tf.signal.rfft2d.

LiteRT computes in double (Ooura's rdft2d over a double buffer) and rounds each result to
float once (PrepareOutputBuffer); numpy's pocketfft in double and one rounding give the
same floats up to the last bit of values far below the slice's largest (the two FFTs sum
in different orders: errors of ~1e-16 relative to the largest magnitude).

COMPLEX_ABS, REAL, IMAG match tensorflow/lite/kernels/complex_support.cc: complex64 in,
float32 out (complex128 -> float64), same shape; std::abs / std::real / std::imag per
element. LiteRT's std::abs of a complex<float> is the hypotenuse rounded once from double
(measured: equal to np.hypot in float64, then float32, on 200000 values over 40 decades);
numpy's own absolute of complex64 differs in the last bit on about a third of them.

None of them has an integer kernel in LiteRT: the quantizer keeps them float.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.names import quoted
from .base import Kernel, OpContext, OutputSpec
from .opdef import OpDef

# complex -> its real part's dtype, for COMPLEX_ABS / REAL / IMAG (complex_support.cc)
_PART = {np.dtype(np.complex64): np.dtype(np.float32),
         np.dtype(np.complex128): np.dtype(np.float64)}


@dataclass(frozen=True)
class Rfft2dRecord:
    height: int  # fft_length[0]
    width: int   # fft_length[1]


def _power_of_two(v: int) -> bool:
    return v > 0 and not v & (v - 1)


def rfft2d_prepare(ctx: OpContext):
    ctx.check_arity(2, 2)
    x, length = ctx.input(0), ctx.input(1)
    ctx.require_dtype(x, (np.float32,), "input")
    ctx.require_dtype(length, (np.int32,), "fft_length")
    if x.rank < 2:
        raise ctx.shape_error(f"input {quoted(x.name)} has shape {list(x.shape)}; RFFT2D needs "
                              "at least two dimensions")
    if length.shape != (2,):
        raise ctx.shape_error(f"fft_length {quoted(length.name)} has shape "
                              f"{list(length.shape)}; it must hold two values")
    h, w = (int(v) for v in ctx.constant_input(1, "fft_length"))
    if not (_power_of_two(h) and _power_of_two(w)):
        raise ctx.shape_error(f"fft_length is [{h}, {w}]; LiteRT's RFFT2D takes positive "
                              "powers of two only")
    out = tuple(x.shape[:-2]) + (h, w // 2 + 1)
    return (OutputSpec(out, np.dtype(np.complex64)),), Rfft2dRecord(h, w)


def rfft2d_eval(rec: Rfft2dRecord, inputs, outputs) -> None:
    x = inputs[0]
    # rfft2 with s= crops / zero-pads the last two axes exactly as PrepareInputBuffer
    spectrum = np.fft.rfft2(x.astype(np.float64), s=(rec.height, rec.width), axes=(-2, -1))
    np.copyto(outputs[0], spectrum, casting="same_kind")


def _part_prepare(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, (np.complex64, np.complex128), "input")
    return (OutputSpec(x.shape, _PART[x.dtype]),), None


def _part(fn):
    def eval(rec, inputs, outputs) -> None:
        np.copyto(outputs[0], fn(inputs[0]))
    return Kernel(_part_prepare, eval)


def _abs(z: np.ndarray) -> np.ndarray:
    """|z| in double, rounded once (a float32 past FLT_MAX becomes inf, as in LiteRT)."""
    with np.errstate(over="ignore"):
        return np.hypot(z.real.astype(np.float64), z.imag.astype(np.float64)).astype(
            _PART[z.dtype])


OPS = (
    # Not per_sample: a rank-2 input's rows (the batch) are the transform's height.
    OpDef("RFFT2D", shape_operands=(1,), float=Kernel(rfft2d_prepare, rfft2d_eval)),
    OpDef("COMPLEX_ABS", float=_part(_abs), per_sample=True),
    OpDef("REAL", float=_part(np.real), per_sample=True),
    OpDef("IMAG", float=_part(np.imag), per_sample=True),
)
