"""A fixed-size histogram whose range grows by merging bins (bounded memory).

Calibration never stores activations: each observer keeps `bins` counts over [lo, hi]. When
a new sample falls outside, the histogram is re-binned onto a wider grid that contains the
old one exactly:
    new width = f * width      (f = the smallest integer making the grid wide enough)
    new lo    = lo - m * width (m = old-width bins added on the left: what the new data
                                needs there, plus the grid's spare room if only the left grew,
                                or half of it if both sides grew)
    old bin i -> new bin (i + m) // f
so counts are merged, never redistributed, and memory stays `bins` numbers per tensor.
Each growth at most doubles the span the data needs, so the observed values always cover
at least bins / 2 bins.
The grid always contains 0.0 (the quantized range must contain it too, params.asymmetric).
"""

from __future__ import annotations

import math

import numpy as np

DEFAULT_BINS = 2048


class Histogram:
    def __init__(self, bins: int = DEFAULT_BINS) -> None:
        self.bins = int(bins)
        self.counts: np.ndarray | None = None   # float64 [bins], None until a non-zero value
        self.lo = 0.0
        self.width = 0.0
        self.zeros = 0          # values seen while every value so far was exactly 0.0
        self.min = math.inf     # exact extremes of everything observed
        self.max = -math.inf

    @property
    def hi(self) -> float:
        return self.lo + self.bins * self.width

    @property
    def total(self) -> float:
        return float(self.counts.sum()) if self.counts is not None else float(self.zeros)

    def edges(self) -> np.ndarray:
        return self.lo + self.width * np.arange(self.bins + 1, dtype=np.float64)

    def add(self, x: np.ndarray) -> None:
        x = np.asarray(x, np.float64).ravel()
        if x.size == 0:
            return
        xmin, xmax = float(x.min()), float(x.max())
        self.min, self.max = min(self.min, xmin), max(self.max, xmax)
        lo, hi = min(xmin, 0.0), max(xmax, 0.0)
        if self.counts is None:
            if lo == hi:            # all zeros so far: no scale to build a grid on yet
                self.zeros += x.size
                return
            self.counts = np.zeros(self.bins, np.float64)
            self.lo, self.width = lo, (hi - lo) / self.bins
            if self.zeros:
                self.counts[self._index(np.zeros(1))] += self.zeros
                self.zeros = 0
        else:
            tol = 1e-7 * self.bins * self.width   # float slack: such values clip to an end bin
            if lo < self.lo - tol or hi > self.hi + tol:
                self._grow(lo, hi)
        self.counts += np.bincount(self._index(x), minlength=self.bins)

    def _index(self, x: np.ndarray) -> np.ndarray:
        i = np.floor((x - self.lo) / self.width).astype(np.int64)
        return np.clip(i, 0, self.bins - 1)   # the top edge belongs to the last bin

    def _grow(self, lo: float, hi: float) -> None:
        w = self.width
        m = math.ceil((self.lo - lo) / w) if lo < self.lo else 0
        right = math.ceil((hi - self.hi) / w) if hi > self.hi else 0
        need = m + self.bins + right
        f = math.ceil(need / self.bins)
        spare = f * self.bins - need
        m += spare if right == 0 else spare // 2 if m else 0
        new = np.zeros(self.bins, np.float64)
        np.add.at(new, (np.arange(self.bins) + m) // f, self.counts)
        self.counts, self.lo, self.width = new, self.lo - m * w, w * f

    def quantile(self, q: float) -> float:
        """The q-quantile (0..1), interpolating linearly inside the bin where the cumulative
        count crosses q * total; clamped to the exact observed [min, max]."""
        if self.counts is None:
            return 0.0
        cdf = np.cumsum(self.counts)
        target = q * cdf[-1]
        k = int(np.searchsorted(cdf, target, side="left"))
        k = min(k, self.bins - 1)
        before = cdf[k - 1] if k else 0.0
        frac = (target - before) / self.counts[k] if self.counts[k] else 0.0
        value = self.lo + (k + frac) * self.width
        return float(np.clip(value, self.min, self.max))
