"""minmax: TFLite's calibrator -- the global minimum and maximum over all samples.

Optimises: nothing is ever clipped (max error = scale / 2 everywhere), at the price of a
coarse scale when a few outliers stretch the range.
"""

from __future__ import annotations

import math

import numpy as np

from .base import Observer


class MinMaxObserver(Observer):
    def __init__(self) -> None:
        self.lo, self.hi = math.inf, -math.inf

    def observe(self, x: np.ndarray) -> None:
        if x.size:
            self.lo = min(self.lo, float(x.min()))
            self.hi = max(self.hi, float(x.max()))

    def range(self) -> tuple[float, float] | None:
        return (self.lo, self.hi) if math.isfinite(self.lo) else None

    def merge(self, other: "MinMaxObserver") -> None:
        self.lo, self.hi = min(self.lo, other.lo), max(self.hi, other.hi)
