"""Choosing scale and zero point: real = scale * (q - zero_point).

Activations (asymmetric, TFLite's GetAsymmetricQuantizationParams / TF FakeQuant nudging):
    rmin = min(min, 0), rmax = max(max, 0)            # the range must contain 0.0 exactly
    scale = (rmax - rmin) / (qmax - qmin)
    zp = clamp(round(qmin - rmin / scale), qmin, qmax)  # the "nudged" zero point
so that real 0.0 is exactly representable (zero padding, ReLU floors, ...).
Weights (symmetric, narrow range [-127, 127], zero point 0):
    scale[c] = max(|w[c]|) / 127                      # per output channel, or per tensor
Bias (int32): scale = s_in * s_w[c], zero point 0, q = round(b / scale).
A degenerate range (all zeros) gets scale 1.0 rather than 0, as TFLite does.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

from ..ir import QuantParams
from .qarith import nudged_zero_point
from .qarith import quantize as quantize_values
from .qarith import round_half_away  # noqa: F401 (part of this module's interface)


class QType(Enum):
    """The type of quantized activations: int8 / uint8, or int16 (16x8: int16 activations
    with int8 weights)."""

    INT8 = "int8"
    UINT8 = "uint8"
    INT16 = "int16"

    @property
    def dtype(self) -> np.dtype:
        return np.dtype({"int8": np.int8, "uint8": np.uint8, "int16": np.int16}[self.value])

    @property
    def qmin(self) -> int:
        return int(np.iinfo(self.dtype).min)

    @property
    def qmax(self) -> int:
        return int(np.iinfo(self.dtype).max)

    @property
    def bias_dtype(self) -> np.dtype:
        """The affine ops' bias: int32, or int64 with int16 activations (TensorFlow's 16x8
        files; the kernels accumulate in 64 bits)."""
        return np.dtype(np.int64 if self is QType.INT16 else np.int32)


@dataclass(frozen=True)
class Affine:
    """Per-tensor (scale, zero_point) or per-channel arrays along `axis`."""

    scale: np.ndarray
    zero_point: np.ndarray
    axis: int = 0


def quant_params(p: Affine) -> QuantParams:
    """The IR's QuantParams of ``p`` (float32 scales, int64 zero points)."""
    return QuantParams(np.asarray(p.scale, np.float32), np.asarray(p.zero_point, np.int64),
                       p.axis)


def asymmetric(rmin: float, rmax: float, qtype: QType, narrow: bool = False) -> Affine:
    """Activation parameters for the range [rmin, rmax] (widened to include 0)."""
    if not (np.isfinite(rmin) and np.isfinite(rmax)):
        raise ValueError(f"range [{rmin}, {rmax}] is not finite")
    qmin = qtype.qmin + (1 if narrow else 0)
    qmax = qtype.qmax
    rmin, rmax = min(float(rmin), 0.0), max(float(rmax), 0.0)
    scale = (rmax - rmin) / (qmax - qmin)
    if scale == 0.0:
        return Affine(np.array([1.0], np.float32), np.array([qmin if qtype is QType.UINT8
                                                             else 0], np.int64))
    zp = int(nudged_zero_point(qmin - rmin / scale, qmin, qmax))
    return Affine(np.array([scale], np.float32), np.array([zp], np.int64))


def symmetric_activation(rmin: float, rmax: float) -> Affine:
    """16x8 activation parameters (TFLite quantizes int16 activations symmetrically):
    zero point 0, scale = max(|rmin|, |rmax|) / 32767, e.g. [0, 1] -> 1/32767."""
    if not (np.isfinite(rmin) and np.isfinite(rmax)):
        raise ValueError(f"range [{rmin}, {rmax}] is not finite")
    bound = max(abs(float(rmin)), abs(float(rmax)))
    scale = bound / 32767.0 if bound > 0 else 1.0
    return Affine(np.array([scale], np.float32), np.array([0], np.int64))


def activation(rmin: float, rmax: float, qtype: QType) -> Affine:
    """The parameters of an activation tensor of range [rmin, rmax] stored as `qtype`."""
    if qtype is QType.INT16:
        return symmetric_activation(rmin, rmax)
    return asymmetric(rmin, rmax, qtype)


def with_min_scale(rmin: float, rmax: float, min_scale: float, qtype: QType) -> Affine:
    """The parameters of [rmin, rmax], the range first widened about its middle so that the
    scale is at least `min_scale`."""
    levels = 65535 if qtype is QType.INT16 else qtype.qmax - qtype.qmin
    half = max(float(rmax) - float(rmin), min_scale * levels) / 2
    middle = (float(rmin) + float(rmax)) / 2
    p = activation(middle - half, middle + half, qtype)
    while float(p.scale[0]) < min_scale:  # float32 rounding of the scale
        half *= 1 + 2.0**-20
        p = activation(middle - half, middle + half, qtype)
    return p


def symmetric_weights(w: np.ndarray, axis: int | None) -> Affine:
    """int8 weight parameters: zero point 0, scale = max|w| / 127 (per channel on `axis`)."""
    w = np.asarray(w, np.float64)
    if axis is None:
        m = np.array([np.abs(w).max() if w.size else 0.0])
    else:
        m = np.abs(np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)).max(axis=1)
    scale = np.where(m > 0, m / 127.0, 1.0).astype(np.float32)
    return Affine(scale, np.zeros(scale.shape, np.int64), 0 if axis is None else axis)


def quantize(x: np.ndarray, p: Affine, dtype: np.dtype, qmin: int, qmax: int) -> np.ndarray:
    """qarith.quantize with p's parameters: q = clamp(round(x / scale) + zp) along p.axis.
    A 0-d constant comes back with shape [1] (its scale's shape), as the rewrite stores it."""
    x = np.asarray(x)
    return quantize_values(x if x.ndim else x.reshape(1), p.scale, p.zero_point, dtype,
                           p.axis, qmin, qmax)
