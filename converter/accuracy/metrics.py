"""Accuracy metrics: SQNR, cosine similarity, streaming per-tensor error statistics, top-k.

    SQNR   = 10 log10( sum ref^2 / sum (ref - test)^2 )  dB   (quantize/metrics.py)
    cosine = sum ref*test / sqrt(sum ref^2 * sum test^2)
    error  = test - ref  (mean error > 0: the quantized tensor reads high on average)

Every sum runs over all elements of all samples, so one sample's large values are weighed as
they are, not averaged per sample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

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

    def update(self, ref: np.ndarray, test: np.ndarray) -> None:
        r = np.asarray(ref, np.float64)
        t = np.asarray(test, np.float64).reshape(r.shape)
        err = t - r
        rf, tf, ef = r.ravel(), t.ravel(), err.ravel()
        self.count += r.size
        for key, value in (("ref_sq", rf @ rf), ("test_sq", tf @ tf), ("cross", rf @ tf),
                           ("err_sq", ef @ ef), ("err_sum", ef.sum())):
            self.sums[key].add(value)
        if r.size:
            abs_err = np.abs(err)
            self.max_abs = max(self.max_abs, float(abs_err.max()))
            if self.scale is not None:
                self.max_lsb = max(self.max_lsb, float((abs_err / self.scale).max()))

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
