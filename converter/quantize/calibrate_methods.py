"""Several calibration methods' ranges from one calibration (`--calib-method auto` tries five
on every fold of the calibration samples).

The first pass (every tensor's exact min / max) is the minmax method and fixes the grids;
one second pass then fills, per tensor, one histogram of x and one of |x|, which every
histogram method reads (percentile and mse the first, entropy the second). These are the
counts each method's own two passes (calibrate.collect_ranges) build, so every method's
ranges equal collect_ranges' bit for bit -- two runs of the model instead of one or two per
method.

Nothing is computed before it is read (``Methods``): the second pass runs when a histogram
method is first asked for, and a method's range of a tensor when it is first read. auto
reads every method of the plain folds, but of the equalized ones mostly min / max, and of
the others single tensors (its per-tensor overrides) -- and the entropy search is the most
expensive step of a calibration (a KL divergence per candidate threshold, per tensor).
"""

from __future__ import annotations

from collections.abc import Mapping

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


class Methods(Mapping):
    """{method: {tensor: range}} of one calibration, each range computed when first read
    (module doc); a second pass shared by every histogram method, run when first needed."""

    def __init__(self, model: bytes, samples: list, first: Observed,
                 methods: list[CalibConfig], only: set[str] | None) -> None:
        self.model, self.samples, self.first, self.only = model, samples, first, only
        self.methods = methods
        self.base, _ = first.ranges()
        self._second: Observed | None = None
        self._ranges: dict[CalibConfig, _Ranges] = {}

    def second(self) -> Observed:
        if self._second is None:
            shared = [m for m in self.methods if m.two_pass]
            size = shared[0].bins
            magnitude = any(m.method is CalibMethod.ENTROPY for m in shared)
            first, only = self.first, self.only
            runner = ModelRunner(self.model, keep_all=True, label="the float model")
            self._second = Observed(
                runner, lambda name: _Shared(first.extremes(name), size, magnitude)
                if only is None or name in only else None,
                lambda name, k: _Shared(first.extremes(name, k), size, magnitude))
            self._second.run(iter(self.samples), None, [], None)
            self._second.runner = None   # (its interpreter, every tensor kept: not held)
        return self._second

    def __getitem__(self, method: CalibConfig) -> Mapping:
        if method not in self.methods:
            raise KeyError(method)
        if not method.two_pass:
            return self.base
        if method not in self._ranges:
            self._ranges[method] = _Ranges(self, method)
        return self._ranges[method]

    def __iter__(self):
        return iter(self.methods)

    def __len__(self) -> int:
        return len(self.methods)


class _Ranges(Mapping):
    """One histogram method's ranges: the first pass's, replaced per tensor by the method's
    range of the second pass's histograms where it gives one; each computed when read."""

    def __init__(self, found: Methods, method: CalibConfig) -> None:
        self.found, self.base, self.method = found, found.base, method
        only = found.only
        self.shared = [n for n in found.first.observers if only is None or n in only]
        self._range: dict[str, tuple[float, float] | None] = {}

    def range(self, name: str) -> tuple[float, float] | None:
        """The method's own range of `name` (None: none, or not in the second pass)."""
        if name not in self._range:
            s = self.found.second().observers.get(name)
            self._range[name] = None if s is None else s.observer(self.method).range()
        return self._range[name]

    def __getitem__(self, name: str) -> tuple[float, float]:
        r = self.range(name)
        return self.base[name] if r is None else r

    def __iter__(self):
        yield from self.base
        yield from (n for n in self.shared if n not in self.base and self.range(n) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def collect_methods(model: bytes, samples: list, methods, only: set[str] | None = None
                    ) -> Mapping[CalibConfig, Mapping[str, tuple[float, float]]]:
    """{method: collect_ranges(model, samples, None, method=method, only=only).ranges} for
    every method of `methods`, in two runs over the samples at most, each range computed
    when read (module doc)."""
    methods = [CalibConfig.parse(m) for m in methods]
    bins = {m.bins for m in methods if m.two_pass}
    if any(m.method is CalibMethod.MOVING_AVERAGE for m in methods) or len(bins) > 1:
        return {m: collect_ranges(model, samples, None, method=m, only=only).ranges
                for m in methods}
    runner = ModelRunner(model, keep_all=True, label="the float model")
    first = Observed(runner, lambda name: MinMaxObserver(), lambda name, k: MinMaxObserver())
    skipped: list[int] = []
    check_used(first.run(iter(samples), None, skipped, None), skipped)
    first.runner = None   # (its interpreter, every tensor kept: not held by the ranges)
    return Methods(model, samples, first, methods, only)
