"""The observer interface: observe(x) once per calibration sample, then range()."""

from __future__ import annotations

import numpy as np


class Observer:
    def observe(self, x: np.ndarray) -> None:
        raise NotImplementedError

    def range(self) -> tuple[float, float] | None:
        """The real-value range to quantize over, or None if nothing was observed."""
        raise NotImplementedError
