"""Calibration observers: one per tensor, fed one calibration sample at a time.

Each observer turns what it saw into the real-value range [lo, hi] that the tensor is
quantized over (params.asymmetric then widens it to contain 0 and picks scale/zero point):

| method            | range                                             | optimises               |
|-------------------|---------------------------------------------------|-------------------------|
| minmax            | global min / max (TFLite's calibrator)            | no clipping at all      |
| moving-average    | EMA of per-sample min / max (TF QAT's ranges)     | typical, not extreme    |
| percentile[:P]    | [P_(100-P), P_P] of the values (each tail)        | coverage of P % of data |
| mse               | argmin over clip ranges of E[(x - Q(x))^2]        | mean squared error      |
| entropy           | TensorRT's argmin KL(P || Q) on a |x| histogram   | distribution similarity |

Histogram observers keep a fixed number of bins (histogram.Histogram), never the values.
They calibrate in two passes: the exact global min / max first, then integer counts on a
grid fixed by it, so their statistics merge exactly over shards (histogram.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from edgelite.errors import EdgeliteError
from edgelite.names import quoted
from .base import Observer
from .entropy import EntropyObserver
from .histogram import DEFAULT_BINS, Histogram
from .minmax import MinMaxObserver
from .moving_average import DEFAULT_DECAY, MovingAverageObserver
from .mse import MseObserver
from .percentile import DEFAULT_PERCENTILE, PercentileObserver


class CalibMethod(Enum):
    MINMAX = "minmax"
    MOVING_AVERAGE = "moving-average"
    PERCENTILE = "percentile"
    MSE = "mse"
    ENTROPY = "entropy"


@dataclass(frozen=True)
class CalibConfig:
    """A calibration method and its parameter (`percentile:99.9`, `moving-average:0.95`)."""

    method: CalibMethod = CalibMethod.MINMAX
    percentile: float = DEFAULT_PERCENTILE
    decay: float = DEFAULT_DECAY
    bins: int = DEFAULT_BINS

    @classmethod
    def parse(cls, text: "str | CalibMethod | CalibConfig | None") -> "CalibConfig":
        if text is None:
            return cls()
        if isinstance(text, CalibConfig):
            return text
        if isinstance(text, CalibMethod):
            return cls(text)
        name, sep, arg = str(text).strip().partition(":")
        try:
            method = CalibMethod(name.strip().lower())
        except ValueError:
            choices = ", ".join(m.value for m in CalibMethod)
            raise EdgeliteError(f"calibration method {quoted(text)}: expected one of {choices} "
                                "(percentile:P and moving-average:DECAY take a number)") from None
        if not sep:
            return cls(method)
        try:
            value = float(arg)
        except ValueError:
            value = float("nan")
        if method is CalibMethod.PERCENTILE and 50.0 < value <= 100.0:
            return cls(method, percentile=value)
        if method is CalibMethod.MOVING_AVERAGE and 0.0 <= value < 1.0:
            return cls(method, decay=value)
        raise EdgeliteError(f"calibration method {quoted(text)}: percentile takes P in (50, 100], "
                            "moving-average a decay in [0, 1); the others take no argument")

    def __str__(self) -> str:
        if self.method is CalibMethod.PERCENTILE:
            return f"percentile:{self.percentile:g}"
        if self.method is CalibMethod.MOVING_AVERAGE:
            return f"moving-average:{self.decay:g}"
        return self.method.value

    @property
    def two_pass(self) -> bool:
        """A histogram method: its observers need the first pass's min / max."""
        return self.method in (CalibMethod.PERCENTILE, CalibMethod.MSE, CalibMethod.ENTROPY)

    def observer(self, extremes: tuple[float, float] | None = None) -> Observer:
        """A fresh observer; a histogram method's (two_pass) takes the tensor's exact
        global (min, max) from calibration's first pass."""
        m = self.method
        if m is CalibMethod.MINMAX:
            return MinMaxObserver()
        if m is CalibMethod.MOVING_AVERAGE:
            return MovingAverageObserver(self.decay)
        if extremes is None:
            raise ValueError(f"{self} observes in a second pass: give the first pass's extremes")
        if m is CalibMethod.PERCENTILE:
            return PercentileObserver(extremes, self.percentile, self.bins)
        if m is CalibMethod.MSE:
            return MseObserver(extremes, self.bins)
        return EntropyObserver(extremes, self.bins)


__all__ = ["CalibMethod", "CalibConfig", "Observer", "Histogram", "MinMaxObserver",
           "MovingAverageObserver", "PercentileObserver", "MseObserver", "EntropyObserver"]
