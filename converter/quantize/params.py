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


class QType(Enum):
    INT8 = "int8"
    UINT8 = "uint8"

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(np.int8 if self is QType.INT8 else np.uint8)

    @property
    def qmin(self) -> int:
        return -128 if self is QType.INT8 else 0

    @property
    def qmax(self) -> int:
        return 127 if self is QType.INT8 else 255


@dataclass(frozen=True)
class Affine:
    """Per-tensor (scale, zero_point) or per-channel arrays along `axis`."""

    scale: np.ndarray
    zero_point: np.ndarray
    axis: int = 0


def round_half_away(x) -> np.ndarray:
    """Round half away from zero (TFLite's TfLiteRound / std::round), not numpy's half-even."""
    x = np.asarray(x, np.float64)
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


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
    zp_from_min = qmin - rmin / scale
    zp = int(np.clip(round_half_away(zp_from_min), qmin, qmax))
    return Affine(np.array([scale], np.float32), np.array([zp], np.int64))


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
    """q = clamp(round(x / scale) + zp) with scales broadcast along p.axis."""
    x = np.asarray(x, np.float64)
    shape = [1] * x.ndim
    if p.scale.size > 1:
        shape[p.axis] = -1
    s = p.scale.astype(np.float64).reshape(shape) if x.ndim else p.scale.astype(np.float64)
    z = p.zero_point.reshape(shape) if x.ndim else p.zero_point
    q = round_half_away(x / s) + z
    return np.clip(q, qmin, qmax).astype(dtype)
