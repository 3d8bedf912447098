"""Several calibration methods' ranges from one calibration (`--calib-method auto` tries five
on every fold of the calibration samples).

The first pass (every tensor's exact min / max) is the minmax method and fixes the grids;
one second pass then fills, per tensor, one histogram of x and one of |x|, which every
histogram method reads (percentile and mse the first, entropy the second). These are the
counts each method's own two passes (calibrate.collect_ranges) build, so every method's
ranges equal collect_ranges' bit for bit -- two runs of the model instead of one or two per
method.
"""

from __future__ import annotations

import numpy as np

from ..runner import ModelRunner
from .calibrate import Observed, check_used, collect_ranges
from .observers import (CalibConfig, CalibMethod, EntropyObserver, Histogram, MinMaxObserver,
                        MseObserver, Observer, PercentileObserver)
from .observers.entropy import magnitude_histogram


class _Shared(Observer):
    """The second pass's histograms of one tensor, read by every histogram method."""

    needs_extremes = True

    def __init__(self, extremes: tuple[float, float], bins: int, magnitude: bool) -> None:
        self.extremes = extremes
        self.signed = Histogram(*extremes, bins)
        self.magnitude = magnitude_histogram(extremes, bins) if magnitude else None

    def observe(self, x: np.ndarray) -> None:
        self.signed.add(x)
        if self.magnitude is not None:
            self.magnitude.add(np.abs(x))

    def observer(self, config: CalibConfig) -> Observer:
        """`config`'s observer, over these counts."""
        e, bins = self.extremes, config.bins
        if config.method is CalibMethod.PERCENTILE:
            return PercentileObserver(e, config.percentile, bins, self.signed)
        if config.method is CalibMethod.MSE:
            return MseObserver(e, bins, self.signed)
        return EntropyObserver(e, bins, self.magnitude)


def collect_methods(model: bytes, samples: list, methods, only: set[str] | None = None
                    ) -> dict[CalibConfig, dict[str, tuple[float, float]]]:
    """{method: collect_ranges(model, samples, None, method=method, only=only).ranges} for
    every method of `methods`, in two runs over the samples (module doc)."""
    methods = [CalibConfig.parse(m) for m in methods]
    shared = [m for m in methods if m.two_pass]
    bins = {m.bins for m in shared}
    if any(m.method is CalibMethod.MOVING_AVERAGE for m in methods) or len(bins) > 1:
        return {m: collect_ranges(model, samples, None, method=m, only=only).ranges
                for m in methods}
    runner = ModelRunner(model, keep_all=True, label="the float model")
    first = Observed(runner, lambda name: MinMaxObserver(), lambda name, k: MinMaxObserver())
    skipped: list[int] = []
    check_used(first.run(iter(samples), None, skipped, None), skipped)
    base, _ = first.ranges()
    out = {m: base for m in methods if not m.two_pass}
    if not shared:
        return out
    magnitude = any(m.method is CalibMethod.ENTROPY for m in shared)
    size = bins.pop()
    second = Observed(runner, lambda name: _Shared(first.extremes(name), size, magnitude)
                      if only is None or name in only else None,
                      lambda name, k: _Shared(first.extremes(name, k), size, magnitude))
    second.run(iter(samples), None, [], None)
    for m in shared:
        ranges = dict(base)
        ranges.update({n: r for n, s in second.observers.items()
                       if (r := s.observer(m).range()) is not None})
        out[m] = ranges
    return out
