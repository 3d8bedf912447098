"""percentile[:P]: clip each tail at a percentile of the observed values (default 99.99).

    range = [Q(1 - P/100), Q(P/100)]       Q = quantile of all values of the tensor
over every calibration sample, read from a fixed-grid histogram (histogram.py: linear
inside a bin) and clamped to the observed [min, max]. Each tail is cut separately (not |x|) because int8
activations are asymmetric: a post-ReLU tensor keeps lo = 0 and only its top is cut.
P = 100 gives min/max.

Optimises: coverage -- the range holds P % of the values on each side; rare outliers beyond
are clipped so the remaining values get a finer scale.
"""

from __future__ import annotations

import numpy as np

from .base import Observer
from .histogram import DEFAULT_BINS, Histogram

DEFAULT_PERCENTILE = 99.99


class PercentileObserver(Observer):
    needs_extremes = True

    def __init__(self, extremes: tuple[float, float], percentile: float = DEFAULT_PERCENTILE,
                 bins: int = DEFAULT_BINS, hist: Histogram | None = None) -> None:
        self.p = float(percentile) / 100.0
        self.hist = hist or Histogram(*extremes, bins)   # `hist`: one already filled

    def observe(self, x: np.ndarray) -> None:
        self.hist.add(x)

    def merge(self, other: "PercentileObserver") -> None:
        self.hist.merge(other.hist)

    def range(self) -> tuple[float, float] | None:
        h = self.hist
        if h.total == 0:
            return None
        if self.p >= 1.0:
            return h.min, h.max
        lo = h.quantile(1.0 - self.p) if h.min < 0 else h.min
        hi = h.quantile(self.p) if h.max > 0 else h.max
        return lo, hi
