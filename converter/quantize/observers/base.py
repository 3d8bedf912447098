"""The observer interface: observe(x) for every calibration sample (or batch of samples),
then range().

A histogram observer (`needs_extremes`) is built for calibration's second pass with the
tensor's exact global min / max from the first (histogram.py says why); `merge` adds another
shard's observer of the same tensor, exactly (order-dependent observers cannot)."""

from __future__ import annotations

import numpy as np


class Observer:
    needs_extremes = False

    def observe(self, x: np.ndarray) -> None:
        raise NotImplementedError

    def range(self) -> tuple[float, float] | None:
        """The real-value range to quantize over, or None if nothing was observed."""
        raise NotImplementedError

    def merge(self, other: "Observer") -> None:
        raise NotImplementedError(f"{type(self).__name__} depends on sample order")
