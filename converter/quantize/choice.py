"""When a quantization candidate replaces a simpler one: a clear win across the folds.

auto.py scores each candidate by cross-validation: ``FOLDS`` folds of the calibration
samples, each scored by a model calibrated on the others (``Score``: the error per fold at
the scored tensors, the logits of a final softmax, and over all folds at the outputs). With
a few dozen samples a fold holds a handful, and among many candidates some win on the
folds by luck -- the best of many noisy scores is biased upward. Issue 25: a face
classifier calibrated on 32 faces got min/max + AdaRound (+3.9 dB on its folds), which then
lost 0.29 dB and 3 of 64 top-1 on 64 new faces against plain min/max.

So a candidate replaces the one it is compared with -- a simpler one: auto.py tries them
simplest first (min/max; other ranges; equalization and bias correction; AdaRound; 16x8) --
only when it wins clearly (``judge``):

  * per fold f its gain is g_f = 10 log10(noise_f(simpler) / noise_f(candidate)) dB at the
    scored tensors (both are scored on the same held-out samples, so the signal cancels);
  * the mean gain exceeds ``MARGIN_DB``, and
  * it wins on every fold (every g_f > 0), or the mean gain exceeds the folds' spread:
    mean(g) > SPREAD_K * std(g) (sample standard deviation, ddof 1) -- a gain larger than
    its own fold-to-fold noise; and
  * it is no worse at the outputs, over all held-out samples.

Otherwise the simpler candidate stays. ``Verdict`` keeps the numbers and the reason; the
auto report prints them for every candidate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MARGIN_DB = 0.05   # the mean gain a candidate must exceed
SPREAD_K = 1.0     # ... and, unless it wins on every fold, SPREAD_K fold spreads
GAIN_CAP_DB = 100.0  # a fold without error counts as this much better (not infinitely)


def db(signal: float, noise: float) -> float:
    if noise == 0.0:
        return math.inf
    return -math.inf if signal == 0.0 else 10.0 * math.log10(signal / noise)


@dataclass(frozen=True)
class Score:
    """A candidate's error on the held-out samples of every fold: at the scored tensors
    (the logits where the model ends in a softmax: auto.scoring_graph) and at the outputs."""

    signal: float                   # sum of squares of the float scored tensors, all folds
    noise: tuple[float, ...]        # sum of squared errors there, per fold
    output_db: float                # output SQNR over all held-out samples

    @property
    def db(self) -> float:
        """SQNR of the scored tensors over all held-out samples (each scored by the fold
        calibrated without it)."""
        return db(self.signal, sum(self.noise))

    def gains(self, simpler: "Score") -> tuple[float, ...]:
        """Per fold, how many dB less error than `simpler` (on the same held-out samples)."""
        return tuple(_gain(b, c) for b, c in zip(simpler.noise, self.noise))

    def beats(self, simpler: "Score") -> bool:
        return judge(self, simpler).kept


def _gain(base: float, cand: float) -> float:
    if base == cand:
        return 0.0
    if cand == 0.0 or base == 0.0:
        return GAIN_CAP_DB if cand == 0.0 else -GAIN_CAP_DB
    return float(np.clip(10.0 * math.log10(base / cand), -GAIN_CAP_DB, GAIN_CAP_DB))


@dataclass(frozen=True)
class Verdict:
    """A candidate against the simpler one it would replace."""

    gains: tuple[float, ...]        # dB per fold
    mean: float
    spread: float                   # sample standard deviation of the gains
    kept: bool
    reason: str

    def gains_text(self) -> str:
        return " ".join(f"{g:+6.2f}" for g in self.gains)


def judge(cand: Score, simpler: Score) -> Verdict:
    """Whether `cand` wins clearly over `simpler` (module doc), and why (not)."""
    gains = cand.gains(simpler)
    mean = float(np.mean(gains))
    spread = float(np.std(gains, ddof=1)) if len(gains) > 1 else 0.0
    every = all(g > 0 for g in gains)
    above_spread = mean > SPREAD_K * spread
    losses = [f for f, g in enumerate(gains) if g <= 0]
    if mean <= MARGIN_DB:
        return Verdict(gains, mean, spread, False, f"mean gain not above {MARGIN_DB} dB")
    if not (every or above_spread):
        folds = ", ".join(str(f) for f in losses)
        return Verdict(gains, mean, spread, False,
                       f"loses on fold {folds}, mean gain <= spread")
    if cand.output_db < simpler.output_db:
        return Verdict(gains, mean, spread, False,
                       f"outputs {cand.output_db - simpler.output_db:+.2f} dB")
    why = "wins on every fold" if every else "mean gain > spread"
    return Verdict(gains, mean, spread, True, why)
