"""A fixed-grid histogram: integer counts over a range known before the first value is added.

Calibration never stores activations, and its statistics must merge exactly however the
data is split (issue 29: one process, --workers and Ray give the same bytes). So the
histogram methods calibrate in two passes over the data:

  1. every tensor's exact global min / max (minmax.MinMaxObserver; merges exactly);
  2. `bins` equal bins over [min(lo, 0), max(hi, 0)] from pass 1 (the grid contains 0.0,
     as the quantized range must: params.asymmetric); each value v goes to bin
         i = clamp(floor((v - lo) * (1 / width)), 0, bins - 1)  (float64 arithmetic)
     and the counts are int64, so per-shard histograms add up to the one-process histogram
     bit for bit, in any order and grouping.

TensorFlow's calibrator (tensorflow/compiler/mlir/quantization/.../
calibration_statistics_collector_histogram.cc) builds its grid from the first batch and
widens it with same-width bins, redistributing later batches' counts in proportion to bin
overlap: its histogram depends on which batch comes first. The two passes cost one more
run of the float model and give a grid that (a) does not depend on order or sharding and
(b) spends all `bins` bins on the values' range (a grown grid used between half and all).
"""

from __future__ import annotations

import math

import numpy as np

DEFAULT_BINS = 2048


class Histogram:
    """Counts of values in [lo, hi] (the exact extremes of everything it will be given:
    calibration's first pass) on `bins` equal bins over [min(lo, 0), max(hi, 0)]."""

    def __init__(self, lo: float, hi: float, bins: int = DEFAULT_BINS) -> None:
        self.bins = int(bins)
        self.min, self.max = float(lo), float(hi)    # exact extremes of the data
        self.lo = min(self.min, 0.0)
        top = max(self.max, 0.0)
        self.width = (top - self.lo) / self.bins if math.isfinite(top - self.lo) else 0.0
        self.counts = np.zeros(self.bins, np.int64)

    @property
    def hi(self) -> float:
        return self.lo + self.bins * self.width

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    @property
    def empty_grid(self) -> bool:
        """Every value was 0.0 (or the range is not finite): no scale to build bins on."""
        return self.width == 0.0

    def edges(self) -> np.ndarray:
        return self.lo + self.width * np.arange(self.bins + 1, dtype=np.float64)

    def add(self, x: np.ndarray) -> None:
        x = np.asarray(x).ravel()
        if x.size == 0:
            return
        if self.empty_grid:
            self.counts[0] += x.size
            return
        self.counts += np.bincount(self.index(x), minlength=self.bins)

    def index(self, x: np.ndarray) -> np.ndarray:
        """Each value's bin. x >= lo, so truncation is floor; values outside the grid
        clamp to its end bins (the top edge belongs to the last bin)."""
        t = np.subtract(x, self.lo, dtype=np.float64)
        t *= 1.0 / self.width
        i = t.astype(np.int64)
        return np.clip(i, 0, self.bins - 1, out=i)

    def merge(self, other: "Histogram") -> None:
        """Add another shard's counts (same grid: the same first-pass extremes)."""
        if (other.lo, other.width, other.bins) != (self.lo, self.width, self.bins):
            raise ValueError("histograms on different grids do not merge")
        self.counts += other.counts

    def quantile(self, q: float) -> float:
        """The q-quantile (0..1), interpolating linearly inside the bin where the cumulative
        count crosses q * total; clamped to the exact observed [min, max]."""
        if self.empty_grid:
            return 0.0
        cdf = np.cumsum(self.counts.astype(np.float64))
        target = q * cdf[-1]
        k = min(int(np.searchsorted(cdf, target, side="left")), self.bins - 1)
        before = cdf[k - 1] if k else 0.0
        frac = (target - before) / self.counts[k] if self.counts[k] else 0.0
        value = self.lo + (k + frac) * self.width
        return float(np.clip(value, self.min, self.max))
