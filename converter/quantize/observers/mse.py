"""mse: the clipping range that minimises the mean squared quantization error.

Over the histogram of the tensor's values (histogram.py: a fixed grid over [min, max]) (values assumed uniform inside each bin of width
w), a candidate range [a, b] (a <= 0 <= b, both on bin edges) with 256 levels has step
s = (b - a) / 255 and expected total squared error
    E(a, b) = N_in * s^2 / 12                                   rounding inside [a, b]
            + sum_{bins above b} n_j * ((c_j - b)^2 + w^2 / 12)   clipping at b
            + sum_{bins below a} n_j * ((a - c_j)^2 + w^2 / 12)   clipping at a
(c_j = bin centre). The clipping sums come from prefix sums of n, n*c, n*c^2, so every
pair (a, b) on a grid of up to 512 edges per side is scored exactly; the argmin wins.
The result is clamped to the observed [min, max].

Optimises: mean squared error of the quantized tensor vs the float one (rounding noise
traded against clipping error).
"""

from __future__ import annotations

import numpy as np

from .base import Observer
from .histogram import DEFAULT_BINS, Histogram

LEVELS = 256
MAX_CANDIDATES = 512   # per side


class MseObserver(Observer):
    needs_extremes = True

    def __init__(self, extremes: tuple[float, float], bins: int = DEFAULT_BINS,
                 hist: Histogram | None = None) -> None:
        self.hist = hist or Histogram(*extremes, bins)   # `hist`: one already filled

    def observe(self, x: np.ndarray) -> None:
        self.hist.add(x)

    def merge(self, other: "MseObserver") -> None:
        self.hist.merge(other.hist)

    def range(self) -> tuple[float, float] | None:
        h = self.hist
        if h.total == 0:
            return None
        if h.empty_grid:
            return 0.0, 0.0
        a, b = best_range(h.counts, h.lo, h.width)
        return max(a, h.min), min(b, h.max)


def best_range(counts: np.ndarray, lo: float, w: float) -> tuple[float, float]:
    n = counts.astype(np.float64)
    bins = n.size
    edges = lo + w * np.arange(bins + 1)
    centres = edges[:-1] + w / 2
    # prefix sums over bins [0, k): S0 = sum n, S1 = sum n c, S2 = sum n c^2
    s0 = np.concatenate([[0.0], np.cumsum(n)])
    s1 = np.concatenate([[0.0], np.cumsum(n * centres)])
    s2 = np.concatenate([[0.0], np.cumsum(n * centres ** 2)])
    stride = max(1, bins // MAX_CANDIDATES)
    ks = np.unique(np.concatenate([np.arange(0, bins + 1, stride), [bins]]))
    ka = ks[edges[ks] <= 0]                       # lower ends at or below 0
    kb = ks[edges[ks] >= 0]                       # upper ends at or above 0
    if ka.size == 0:
        ka = np.array([0])
    if kb.size == 0:
        kb = np.array([bins])
    a, b = edges[ka], edges[kb]
    # clipping below a: bins [0, ka)
    below0, below1, below2 = s0[ka], s1[ka], s2[ka]
    clip_lo = below2 - 2 * a * below1 + (a ** 2 + w * w / 12) * below0
    # clipping above b: bins [kb, bins)
    above0, above1, above2 = s0[-1] - s0[kb], s1[-1] - s1[kb], s2[-1] - s2[kb]
    clip_hi = above2 - 2 * b * above1 + (b ** 2 + w * w / 12) * above0
    step = (b[None, :] - a[:, None]) / (LEVELS - 1)
    inside = s0[-1] - below0[:, None] - above0[None, :]
    err = inside * step ** 2 / 12 + clip_lo[:, None] + clip_hi[None, :]
    i, j = np.unravel_index(int(np.argmin(err)), err.shape)
    return float(a[i]), float(b[j])
