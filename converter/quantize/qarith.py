"""The converter's quantization arithmetic, one definition each: real = scale * (q - zero_point).

    round_half_away(x)   TfLiteRound / std::round: half away from zero (numpy's round is half
                         to even). It *is* interpreter/quant_math.round_half_away, the function
                         the integer kernels use, not a copy.
    quantize(x, scale, zero_point, dtype, axis)
                         q = clamp(round_half_away(x / scale) + zero_point) in float64, per
                         tensor or per channel along `axis`: the converter's constants
                         (weights, biases, corrected biases).
    nudged_zero_point(zp_from_min, qmin, qmax)
                         clamp(round_half_away(qmin - rmin / scale), qmin, qmax): the zero
                         point that makes real 0.0 exact (TFLite's asymmetric parameters,
                         TF's FakeQuant nudging).
    dequantize(q, scale, zero_point, axis)
                         real = scale * (q - zero_point) in float64, per tensor or per channel.
                         LiteRT's DEQUANTIZE (and Interpreter.get_dequantized_tensor) store this
                         product rounded to float32: ``dequantize(...).astype(np.float32)``.

Values fed to a *running* model are quantized as TFLite's QUANTIZE op does
(quant_math.quantize: reference_ops::AffineQuantize, a float32 division) and a running model's
tensors are read back with Interpreter.get_dequantized_tensor: both in runner.py, the one
model runner of the converter.
"""

from __future__ import annotations

import numpy as np

from ...interpreter.quant_math import round_half_away


def along(values, ndim: int, axis: int | None) -> np.ndarray:
    """Quantization parameters shaped to broadcast over an array of `ndim` dimensions: one
    value for the whole tensor, or one per index of dimension `axis`."""
    v = np.asarray(values)
    if v.size == 1:
        return v.reshape(())
    if axis is None or not -ndim <= axis < ndim:
        raise ValueError(f"{v.size} quantization parameters need an axis of the "
                         f"{ndim}-d array, got {axis}")
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


def quantize(x, scale, zero_point, dtype, axis: int | None = None,
             qmin: int | None = None, qmax: int | None = None) -> np.ndarray:
    """q = clamp(round_half_away(x / scale) + zero_point, qmin, qmax) as `dtype`, computed in
    float64; `scale` / `zero_point` are one value or one per index of `axis`. The clamp
    defaults to the dtype's range (int8 weights use the narrow [-127, 127])."""
    info = np.iinfo(dtype)
    lo = info.min if qmin is None else qmin
    hi = info.max if qmax is None else qmax
    x = np.asarray(x, np.float64)
    s = along(np.asarray(scale, np.float64), x.ndim, axis)
    z = along(np.asarray(zero_point, np.int64), x.ndim, axis)
    return np.clip(round_half_away(x / s) + z, lo, hi).astype(dtype)


def nudged_zero_point(zp_from_min, qmin, qmax):
    """clamp(round_half_away(zp_from_min), qmin, qmax), zp_from_min = qmin - rmin / scale, in
    the caller's float type (TF's FakeQuant nudges in float32, the converter in float64)."""
    return np.clip(round_half_away(zp_from_min), qmin, qmax)


def dequantize(q, scale, zero_point, axis: int | None = None) -> np.ndarray:
    """real = scale * (q - zero_point) in float64 (exact for 8- and 16-bit q: a 24-bit float32
    scale times a difference of at most 17 bits); `scale` / `zero_point` are one value or one
    per index of `axis`."""
    q = np.asarray(q)
    s = along(np.asarray(scale, np.float64), q.ndim, axis)
    z = along(np.asarray(zero_point, np.float64), q.ndim, axis)
    return s * (q.astype(np.float64) - z)


__all__ = ["round_half_away", "quantize", "dequantize", "nudged_zero_point", "along"]
