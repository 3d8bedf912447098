"""moving-average: TF quantization-aware training's range estimate, applied to calibration.

TF's MovingAvgQuantize (tf.contrib.quantize / tfmot quant_ops) tracks each activation's range
as an exponential moving average of the per-batch min and max:
    ema_min <- decay * ema_min + (1 - decay) * min(batch)      (same for max)
Calibration feeds one sample per batch. TF starts the averages at fixed values and uses
decay 0.999 over thousands of training steps; for a calibration run of ~100 samples we use
decay 0.99 (PyTorch's MovingAverageMinMaxObserver, averaging_constant 0.01) and TF's
zero-debiased form (assign_moving_average(zero_debias=True)) so the start value has no weight:
    acc_t = decay * acc_(t-1) + (1 - decay) * m_t,  acc_0 = 0,   range_t = acc_t / (1 - decay^t)
i.e. a weighted mean of the per-sample extremes with weights proportional to decay^(t - i).

Optimises: the typical per-sample range; extremes reached by only a few samples are clipped.
"""

from __future__ import annotations

import numpy as np

from .base import Observer

DEFAULT_DECAY = 0.99


class MovingAverageObserver(Observer):
    def __init__(self, decay: float = DEFAULT_DECAY) -> None:
        self.decay = float(decay)
        self.acc_lo = self.acc_hi = 0.0
        self.weight = 1.0   # decay^t
        self.t = 0

    def observe(self, x: np.ndarray) -> None:
        if not x.size:
            return
        d = self.decay
        self.acc_lo = d * self.acc_lo + (1 - d) * float(x.min())
        self.acc_hi = d * self.acc_hi + (1 - d) * float(x.max())
        self.weight *= d
        self.t += 1

    def range(self) -> tuple[float, float] | None:
        if self.t == 0:
            return None
        debias = 1.0 - self.weight
        if debias == 0.0:   # decay 0: the last sample's range
            return self.acc_lo, self.acc_hi
        return self.acc_lo / debias, self.acc_hi / debias
