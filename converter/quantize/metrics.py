"""Accuracy metrics shared by calibration, the transforms and selective quantization.

    SQNR(ref, test) = 10 * log10( sum(ref^2) / sum((ref - test)^2) )   in dB
over every element of every array given (several outputs are flattened and concatenated).
+inf when test equals ref; -inf when ref is all zero and test is not.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def _flat(x) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x.astype(np.float64).ravel()
    parts = [_flat(p) for p in x]
    return np.concatenate(parts) if parts else np.zeros(0)


def sqnr(ref: np.ndarray | Sequence, test: np.ndarray | Sequence) -> float:
    """Signal-to-quantization-noise ratio of `test` against `ref`, in dB (see module doc)."""
    r, t = _flat(ref), _flat(test)
    if r.shape != t.shape:
        raise ValueError(f"sqnr: reference has {r.size} values, test has {t.size}")
    signal = float(np.sum(r * r))
    noise = float(np.sum((r - t) ** 2))
    if noise == 0.0:
        return float("inf")
    if signal == 0.0:
        return float("-inf")
    return 10.0 * float(np.log10(signal / noise))
