"""Random input values and quantization parameters for tests."""

from __future__ import annotations

import numpy as np


def rand(rng: np.random.Generator, shape, dtype=np.float32, low=-1.0, high=1.0):
    """Uniform values in [low, high) (integers: [low, high)) of ``dtype``."""
    if np.dtype(dtype).kind in "iu":
        return rng.integers(low, high, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def full_range(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    """Integers over the whole range of ``dtype``."""
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)


def random_qparams(rng: np.random.Generator, dtype, low=0.005, high=0.1):
    """(scale, zero point) with the zero point anywhere in the middle of the range."""
    info = np.iinfo(dtype)
    span = info.max - info.min
    zp = int(rng.integers(info.min + span // 4, info.max - span // 4))
    return float(np.float32(rng.uniform(low, high))), zp
