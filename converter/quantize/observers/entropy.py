"""entropy: TensorRT's KL-divergence calibration (Migacz, "8-bit Inference with TensorRT",
GTC 2017; the same algorithm as MXNet's calibrate `_get_optimal_threshold`).

A histogram of |x| with 2048 bins over [0, max|x|] (histogram.Histogram; max|x| from the
first calibration pass's min / max). For every candidate threshold bin
i = L .. 2048 (L = number of quantized levels):
    P = hist[0:i], with the outliers sum(hist[i:]) added to P[i-1]     (reference)
    Q = hist[0:i] merged into L equal groups, each group's count spread evenly over the
        bins of the group where P != 0                                   (quantized)
    both smoothed (zero bins get eps = 1e-4 counts, taken evenly from the non-zero bins),
    then normalised;
    D(i) = KL(P || Q) = sum P log(P / Q)
threshold T = i * w for the i with the smallest D (the top edge of the kept bins; the largest
such i on ties). As in NVIDIA's pytorch-quantization (calib/histogram.py), bin 0's count is
first replaced by bin 1's: the spike of exact zeros that ReLU leaves would otherwise dominate
P and pull T far down.
L = 128 for a signed tensor (one sign of the int8 grid: range [-T, T]) and L = 256 for a
non-negative one (e.g. after ReLU: range [0, T] uses all 256 levels). The signed range is
clamped to the observed [min, max].

Optimises: information loss -- the quantized distribution should look like the float one;
sparse outlier tails are cut where keeping them costs more resolution than it is worth.
"""

from __future__ import annotations

import numpy as np

from .base import Observer
from .histogram import DEFAULT_BINS, Histogram

EPS = 1e-4


class EntropyObserver(Observer):
    needs_extremes = True

    def __init__(self, extremes: tuple[float, float], bins: int = DEFAULT_BINS,
                 hist: Histogram | None = None) -> None:
        self.min, self.max = (float(e) for e in extremes)
        # of |x| (`hist`: one already filled, magnitude_histogram)
        self.hist = hist or magnitude_histogram(extremes, bins)

    def observe(self, x: np.ndarray) -> None:
        self.hist.add(np.abs(x))

    def merge(self, other: "EntropyObserver") -> None:
        self.hist.merge(other.hist)

    def range(self) -> tuple[float, float] | None:
        h = self.hist
        if h.total == 0:
            return None
        if h.empty_grid:
            return 0.0, 0.0
        signed = self.min < 0
        used = int(np.flatnonzero(h.counts)[-1]) + 1   # bins up to max|x|
        t = kl_threshold(h.counts[:used], h.width, 128 if signed else 256)
        if not signed:
            return self.min, min(self.max, t)
        return max(self.min, -t), min(self.max, t)


def magnitude_histogram(extremes: tuple[float, float], bins: int = DEFAULT_BINS) -> Histogram:
    """The histogram of |x| for values in [lo, hi]: over [0, max(-lo, hi)]."""
    return Histogram(0.0, max(-float(extremes[0]), float(extremes[1])), bins)


def kl_threshold(hist: np.ndarray, width: float, levels: int) -> float:
    hist = hist.astype(np.float64)
    bins = hist.size
    if bins > 1:
        hist[0] = hist[1]   # the spike of exact zeros (after ReLU) must not decide
    
    if bins <= levels:
        return bins * width
    suffix = np.concatenate([np.cumsum(hist[::-1])[::-1], [0.0]])  # suffix[i] = sum hist[i:]
    best_i, best_d = bins, np.inf
    for i in range(levels, bins + 1):
        sliced = hist[:i]
        p = sliced.copy()
        p[-1] += suffix[i]
        nonzero = p != 0
        merged = i // levels
        starts = np.arange(levels) * merged
        groups = np.add.reduceat(sliced, starts)   # last group takes the remainder bins
        owners = np.minimum(np.arange(i) // merged, levels - 1)
        norm = np.bincount(owners, weights=nonzero, minlength=levels)
        per_bin = np.divide(groups, norm, out=np.zeros(levels), where=norm > 0)
        q = np.where(nonzero, per_bin[owners], 0.0)
        d = _kl(p, q)
        if d <= best_d:     # ties: the widest range
            best_i, best_d = i, d
    return best_i * width


def _smooth(p: np.ndarray) -> np.ndarray | None:
    zero = p == 0
    n_zero, n_nonzero = int(zero.sum()), int(p.size - zero.sum())
    if n_nonzero == 0:
        return None
    if n_zero:  # on raw counts, as MXNet's _smooth_distribution
        p = p + EPS * zero - (EPS * n_zero / n_nonzero) * ~zero
    return p


def _kl(p: np.ndarray, q: np.ndarray) -> float:
    p, q = _smooth(p), _smooth(q)
    if p is None or q is None or (q <= 0).any() or (p <= 0).any():
        return np.inf
    p, q = p / p.sum(), q / q.sum()
    return float(np.sum(p * np.log(p / q)))
