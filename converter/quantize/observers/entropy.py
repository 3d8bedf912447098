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


BLOCK = 64   # candidate thresholds scored together (arrays of BLOCK x bins)
NATIVE_BLOCK = 256   # the same on the native kernels (rows of up to bins values each)


def kl_threshold(hist: np.ndarray, width: float, levels: int, native: bool | None = None
                 ) -> float:
    """The threshold (module doc) of the |x| histogram `hist` with bins of `width`; on the
    native kernels where built (`native`: as Interpreter's; the same threshold either way:
    interpreter/native/entropy.c computes kl_divergences' numbers bit for bit)."""
    hist = hist.astype(np.float64)
    bins = hist.size
    if bins > 1:
        hist[0] = hist[1]   # the spike of exact zeros (after ReLU) must not decide
    if bins <= levels:
        return bins * width
    module = _native_module(native)
    if module is not None:
        return _NativeSearch(module, hist, levels).search() * width
    best_i, best_d = bins, np.inf
    for start in range(levels, bins + 1, BLOCK):
        cands = np.arange(start, min(start + BLOCK, bins + 1))
        for i, d in zip(cands, kl_divergences(hist, levels, cands)):
            if d <= best_d:     # ties: the widest range
                best_i, best_d = int(i), d
    return best_i * width


def kl_divergences(hist: np.ndarray, levels: int, cands: np.ndarray) -> list[float]:
    """D(i) for each candidate threshold bin i of `cands` (module doc): the element-wise
    work for all of them at once (rows of a BLOCK x max(cands) array; columns past i are
    padding, zero), the three sums over each row's first i columns one row at a time (as a
    single candidate's would be summed: the same numbers bit for bit)."""
    n = int(cands.max())
    cols = np.arange(n)
    rows = np.arange(cands.size)
    valid = cols[None, :] < cands[:, None]
    suffix = np.concatenate([np.cumsum(hist[::-1])[::-1], [0.0]])  # suffix[i] = sum hist[i:]
    p = np.where(valid, hist[None, :n], 0.0)
    p[rows, cands - 1] += suffix[cands]                 # the outliers go to the last bin
    nonzero = p != 0
    merged = cands // levels                             # bins per quantized level
    starts = np.arange(levels)[None, :] * merged[:, None]
    ends = starts + merged[:, None]
    ends[:, -1] = cands                                  # the last level takes the rest
    counts = np.concatenate([[0.0], np.cumsum(hist)])    # exact: sums of integer counts
    filled = np.concatenate([[0], np.cumsum(hist != 0)])
    groups = counts[ends] - counts[starts]
    norm = (filled[ends] - filled[starts]).astype(np.float64)
    norm[:, -1] += (hist[cands - 1] == 0) & (suffix[cands] != 0)   # the last bin's outliers
    per_bin = np.divide(groups, norm, out=np.zeros_like(groups), where=norm > 0)
    owners = np.minimum(cols[None, :] // merged[:, None], levels - 1)
    q = np.where(nonzero, np.take_along_axis(per_bin, owners, 1), 0.0)
    p, p_ok = _smooth(p, valid)
    q, q_ok = _smooth(q, valid)
    ok = p_ok & q_ok & ~(((p <= 0) | (q <= 0)) & valid).any(axis=1)
    p_sum, q_sum = (_row_sums(a, cands, ok) for a in (p, q))
    with np.errstate(divide="ignore", invalid="ignore"):   # padding and rows not ok
        p /= p_sum[:, None]
        q /= q_sum[:, None]
        terms = np.where(valid, p * np.log(p / q), 0.0)
    d = _row_sums(terms, cands, ok)
    return [float(x) if good else np.inf for x, good in zip(d, ok)]


def _native_module(native: bool | None):
    from ....interpreter import native as backend
    module = backend.module if backend.choose(native) else None
    return module if module is not None and hasattr(module, "kl_prepare") else None


class _NativeSearch:
    """kl_divergences for every candidate, a block of NATIVE_BLOCK at a time: two C passes
    around numpy's log (interpreter/native/entropy.c)."""

    def __init__(self, module, hist: np.ndarray, levels: int) -> None:
        self.module, self.hist, self.levels = module, hist, levels
        self.suffix = np.concatenate([np.cumsum(hist[::-1])[::-1], [0.0]])
        self.counts = np.concatenate([[0.0], np.cumsum(hist)])
        self.filled = np.concatenate([[0], np.cumsum(hist != 0)]).astype(np.int64)

    def block(self, first: int, rows: int) -> np.ndarray:
        """D(i) for i = first .. first + rows - 1 (inf where kl_divergences gives inf)."""
        size = rows * first + rows * (rows - 1) // 2
        p, r = np.empty(size), np.empty(size)
        ok, d = np.empty(rows), np.empty(rows)
        self.module.kl_prepare(self.hist, self.suffix, self.counts, self.filled,
                               self.levels, first, rows, p, r, ok)
        np.log(r, out=r)
        self.module.kl_finish(p, r, ok, first, d)
        return d

    def search(self) -> int:
        """The candidate bin with the smallest D, the largest one on ties (kl_threshold)."""
        bins = self.hist.size
        d = np.concatenate([self.block(s, min(NATIVE_BLOCK, bins + 1 - s))
                            for s in range(self.levels, bins + 1, NATIVE_BLOCK)])
        return self.levels + int(np.flatnonzero(d == d.min())[-1])


def _row_sums(a: np.ndarray, lengths: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Per row r (where ok), the sum of its first lengths[r] entries, summed as that slice
    alone would be (numpy's pairwise order depends on the length)."""
    return np.array([a[r, :i].sum() if good else 1.0
                     for r, (i, good) in enumerate(zip(lengths, ok))])


def _smooth(p: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's zero bins (among its valid ones) get EPS counts, taken evenly from its
    non-zero bins (on raw counts, as MXNet's _smooth_distribution); and whether a row has
    a non-zero bin at all."""
    zero = (p == 0) & valid
    n_zero = zero.sum(axis=1)
    n_nonzero = valid.sum(axis=1) - n_zero
    take = np.divide(EPS * n_zero, n_nonzero, out=np.zeros(len(p)), where=n_nonzero > 0)
    smoothed = p + EPS * zero - take[:, None] * (~zero & valid)
    return np.where((n_zero > 0)[:, None], smoothed, p), n_nonzero > 0
