"""Accuracy metrics: SQNR, cosine similarity, streaming per-tensor error statistics, top-k.

    SQNR   = 10 log10( sum ref^2 / sum (ref - test)^2 )  dB   (quantize/metrics.py)
    cosine = sum ref*test / sqrt(sum ref^2 * sum test^2)
    error  = test - ref  (mean error > 0: the quantized tensor reads high on average)

Every sum runs over all elements of all samples, so one sample's large values are weighed as
they are, not averaged per sample. A sample's sums are taken left to right in doubles
(``sample_sums``: one C pass, interpreter/native/tensor_stats.c, where the native kernels are
built; np.add.accumulate otherwise -- the same bits), so they depend neither on BLAS's
threads nor on the backend.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ...interpreter import native
from ..quantize.metrics import sqnr
from .exact import ExactSum

__all__ = ["sqnr", "sqnr_from_sums", "cosine", "TensorStats", "top_k_hits"]


def sqnr_from_sums(signal: float, noise: float) -> float:
    """SQNR in dB from sum ref^2 and sum (ref - test)^2 (+inf for no noise, -inf for noise
    on an all-zero reference), as quantize.metrics.sqnr computes it."""
    if noise == 0.0:
        return math.inf
    if signal == 0.0:
        return -math.inf
    return 10.0 * math.log10(signal / noise)


def cosine(ref, test) -> float:
    """Cosine similarity of two arrays taken as flat vectors (1.0 when both are all zero,
    0.0 when exactly one is)."""
    r = np.asarray(ref, np.float64).ravel()
    t = np.asarray(test, np.float64).ravel()
    if r.shape != t.shape:
        raise ValueError(f"cosine: reference has {r.size} values, test has {t.size}")
    return _cosine(float(r @ r), float(t @ t), float(r @ t))


def _cosine(rr: float, tt: float, rt: float) -> float:
    if rr == 0.0 and tt == 0.0:
        return 1.0
    if rr == 0.0 or tt == 0.0:
        return 0.0
    return rt / math.sqrt(rr * tt)


_SUMS = ("ref_sq", "test_sq", "cross", "err_sq", "err_sum")


@dataclass
class TensorStats:
    """Running sums for one tensor pair, fed one sample at a time.

    `scale` (per-tensor scalar, or an array broadcastable to the tensor for per-channel
    scales) measures the max error in quantization steps (LSB); None for float tensors.
    Each sample's sums are added exactly (exact.py), so `merge` of per-shard stats in any
    order equals the stats of one pass over all samples, bit for bit."""

    scale: np.ndarray | float | None = None
    count: int = 0
    max_abs: float = 0.0      # max |test - ref|
    max_lsb: float = 0.0      # max |test - ref| / scale
    sums: dict = field(default_factory=lambda: {k: ExactSum() for k in _SUMS})

    def update(self, ref: np.ndarray, test: np.ndarray, quant: tuple | None = None,
               use_native: bool | None = None) -> tuple:
        """Add one sample: `test` real values, or (with `quant` = (scale, zero_point) of a
        per-tensor quantized tensor) its stored integers, read as dequantized float32.
        Returns the sample's sample_sums."""
        r = np.asarray(ref)
        rr, tt, rt, ee, es, max_abs = sums = sample_sums(r, test, quant, use_native)
        self.add_sums(r.size, rr, tt, rt, ee, es, max_abs)
        if r.size and self.scale is not None:
            if isinstance(self.scale, float):   # x -> x / s is monotone: max(e) / s = max(e / s)
                self.max_lsb = max(self.max_lsb, max_abs / self.scale)
            else:
                t = _real(test, quant).astype(np.float64).reshape(r.shape)
                lsb = np.abs(t - r.astype(np.float64)) / self.scale
                self.max_lsb = max(self.max_lsb, float(lsb.max()))
        return sums

    def add_sums(self, count: int, rr: float, tt: float, rt: float, ee: float, es: float,
                 max_abs: float) -> None:
        """Add one sample's sums (sample_sums)."""
        self.count += count
        for key, value in zip(_SUMS, (rr, tt, rt, ee, es)):
            self.sums[key].add(value)
        if count:
            self.max_abs = max(self.max_abs, max_abs)

    def merge(self, other: "TensorStats") -> None:
        """Add another part of the data's stats (see class doc)."""
        self.count += other.count
        self.max_abs = max(self.max_abs, other.max_abs)
        self.max_lsb = max(self.max_lsb, other.max_lsb)
        for key in _SUMS:
            self.sums[key].merge(other.sums[key])

    @property
    def ref_sq(self) -> float:        # sum ref^2
        return self.sums["ref_sq"].value

    @property
    def test_sq(self) -> float:       # sum test^2
        return self.sums["test_sq"].value

    @property
    def cross(self) -> float:         # sum ref*test
        return self.sums["cross"].value

    @property
    def err_sq(self) -> float:        # sum (test - ref)^2
        return self.sums["err_sq"].value

    @property
    def err_sum(self) -> float:       # sum (test - ref)
        return self.sums["err_sum"].value

    @property
    def sqnr_db(self) -> float:
        return sqnr_from_sums(self.ref_sq, self.err_sq)

    @property
    def cosine(self) -> float:
        return _cosine(self.ref_sq, self.test_sq, self.cross)

    @property
    def mean_error(self) -> float:
        return self.err_sum / self.count if self.count else 0.0

    @property
    def max_error_lsb(self) -> float | None:
        return None if self.scale is None else self.max_lsb


_KINDS = {np.dtype(np.float32): "f", np.dtype(np.int8): "b", np.dtype(np.uint8): "B",
          np.dtype(np.int16): "h"}


def _real(test, quant: tuple | None, use_native: bool = False) -> np.ndarray:
    """`test` as real values (dequantized as LiteRT's DEQUANTIZE and
    Interpreter.get_dequantized_tensor when `quant` is given: float32 of
    scale * (q - zero_point) in double)."""
    test = np.asarray(test)
    if quant is None:
        return test
    scale, zero = quant
    kind = _KINDS.get(test.dtype)
    if use_native and kind is not None and kind != "f":
        out = np.empty(test.shape, np.float32)
        native.module.dequantize_into(np.ascontiguousarray(test), kind, float(scale),
                                      float(zero), out)
        return out
    return (scale * (test.astype(np.float64) - zero)).astype(np.float32)


def dequantized(stored, quant: tuple, use_native: bool | None = None) -> np.ndarray:
    """A per-tensor quantized tensor's real values from its stored integers (`quant`:
    (scale, zero_point)), bit for bit Interpreter.get_dequantized_tensor's."""
    return _real(stored, quant, native.choose(None) if use_native is None else use_native)


def sample_sums(ref, test, quant: tuple | None = None,
                use_native: bool | None = None) -> tuple[float, ...]:
    """(sum r*r, sum t*t, sum r*t, sum e*e, sum e, max |e|) of one sample, e = t - r, all
    in doubles and each sum left to right from 0.0 (module doc); max |e| is 0.0 for no values
    and NaN where any value is NaN. `quant`: see TensorStats.update; `use_native`: whether
    the C pass may run (None: where the native kernels are built and not disabled)."""
    r, t = np.asarray(ref), np.asarray(test)
    if r.size != t.size:
        raise ValueError(f"reference has {r.size} values, test has {t.size}")
    kind = _KINDS.get(t.dtype) if quant is not None else "f" if t.dtype == np.float32 else None
    if use_native is None:
        use_native = native.choose(None)
    if use_native and r.dtype == np.float32 and kind is not None:
        scale, zero = quant if quant is not None else (0.0, 0.0)
        return native.module.tensor_sums(np.ascontiguousarray(r), np.ascontiguousarray(t),
                                          kind, float(scale), float(zero))
    r = r.astype(np.float64).ravel()
    t = _real(t, quant).astype(np.float64).ravel()
    e = t - r
    if not r.size:
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    sums = [float(np.add.accumulate(x)[-1]) for x in (r * r, t * t, r * t, e * e, e)]
    return (*sums, float(np.abs(e).max()))


def top_k_hits(scores: np.ndarray, labels: np.ndarray, k: int) -> np.ndarray:
    """Per row of `scores` (N, C): whether the label is among the k highest scores. Ties
    are broken as numpy's argmax does (the lower class index ranks first), so top-1 hits
    are exactly argmax == label."""
    scores = np.asarray(scores)
    labels = np.asarray(labels).astype(np.int64).reshape(-1)
    picked = scores[np.arange(len(labels)), labels][:, None]
    before = np.arange(scores.shape[1])[None, :] < labels[:, None]
    rank = (scores > picked).sum(axis=1) + ((scores == picked) & before).sum(axis=1)
    return rank < k
