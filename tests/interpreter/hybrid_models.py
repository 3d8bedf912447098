"""Dynamic-range (hybrid) test models' pieces -- int8 weights, float inputs -- and the
comparison with LiteRT's two kernel sets (test_hybrid*.py)."""

from __future__ import annotations

import numpy as np

from tests.support import KERNEL_SETS, run_edgelite, run_litert

SAME, VALID = 0, 1
RELU, RELU6, RELU_N1_TO_1 = 1, 3, 2
SEEDS = 12  # random cases per test (measured with 300 each: all pass)


def check(model: bytes, feeds, exact=KERNEL_SETS) -> None:
    """Bit-identical with LiteRT for the kernel sets in ``exact``; the others within
    LiteRT's own spread between its two kernel sets (elementwise max over the output)."""
    expected = {k: run_litert(model, feeds, k) for k in KERNEL_SETS}
    for k in KERNEL_SETS:
        ours = run_edgelite(model, feeds, k)
        for i, (a, b) in enumerate(zip(ours, expected[k])):
            assert a.dtype == b.dtype == np.float32 and a.shape == b.shape
            if k in exact:
                assert np.array_equal(a, b), (k, i, float(np.abs(a - b).max()))
            else:
                spread = float(np.abs(expected["reference"][i] - expected["default"][i]).max())
                assert float(np.abs(a - b).max()) <= spread, (k, i, spread)


def weights(rng, shape, channels, per_channel, axis=0):
    w = rng.integers(-127, 128, size=shape).astype(np.int8)
    scale = rng.uniform(0.002, 0.02, channels) if per_channel else rng.uniform(0.002, 0.02)
    return w, np.float32(scale), dict(zp=np.zeros(np.size(scale), int), axis=axis)


def feed(rng, shape, kind="normal"):
    x = rng.standard_normal(shape).astype(np.float32) * np.float32(rng.uniform(0.1, 4))
    if kind == "positive":
        return np.abs(x)
    if kind == "zeros":
        x[0] = 0
    return x
