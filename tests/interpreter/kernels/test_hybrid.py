"""Dynamic-range (hybrid) BATCH_MATMUL on hybrid/'s arithmetic: float32 input, int8
weights, bit-identical with LiteRT's two kernel sets (BUILTIN_REF; XNNPACK's dynamically
quantized operators). FULLY_CONNECTED: hybrid/test_fully_connected.py; CONV_2D and DEPTHWISE_CONV_2D:
hybrid/test_conv.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.interpreter.tflite_builder import QuantModel

from ..hybrid_models import SEEDS, check, feed, weights


BMM_CASES = [  # (lhs shape, rhs shape, adj_x, adj_y)
    ((2, 3, 5), (5, 4), False, False),
    ((2, 3, 5), (2, 4, 5), False, True),
    ((1, 5, 3), (5, 4), True, False),
    ((2, 1, 4, 6), (3, 6, 5), False, False),
    ((4, 17), (17, 9), False, False),
    # several batch dimensions: LiteRT's reference kernel reads the scales, offsets and
    # column sums of other matrices there (batch_matmul._batch_strides), XNNPACK does not
    ((2, 4, 1, 16), (4, 16, 24), False, False),
    ((2, 3, 4, 5), (2, 3, 6, 5), False, True),
    ((1, 2, 3, 5, 4), (3, 5, 2), True, False),
]


@pytest.mark.parametrize("case", BMM_CASES)
@pytest.mark.parametrize("asym", [False, True])
def test_batch_matmul(case, asym):
    lhs, rhs, adj_x, adj_y = case
    rng = np.random.default_rng(len(lhs) + 3 * asym)
    m = QuantModel()
    x = m.input("x", lhs, np.float32)
    w, scale, q = weights(rng, rhs, 1, False)
    a = np.zeros(lhs)
    b = np.zeros(rhs)
    out = np.matmul(a.swapaxes(-1, -2) if adj_x else a, b.swapaxes(-1, -2) if adj_y else b)
    y = m.output("y", out.shape, np.float32)
    m.op("BATCH_MATMUL", [x, m.const("w", w, np.int8, scale=scale, **q)], [y],
         version=4 if asym else 1, adj_x=adj_x, adj_y=adj_y, asymmetric_quantize_inputs=asym)
    model = m.build()
    for kind in ("normal", "positive", "zeros"):
        check(model, [feed(rng, lhs, kind)])


@pytest.mark.parametrize("seed", range(SEEDS))
def test_random_batch_matmul(seed):
    """Random batch dimensions (broadcast either way), adjoints, asymmetric inputs."""
    rng = np.random.default_rng(300 + seed)
    batch = tuple(int(rng.integers(1, 4)) for _ in range(int(rng.integers(0, 4))))
    rhs_batch = tuple(1 if rng.integers(0, 3) == 0 else d
                      for d in batch[int(rng.integers(0, len(batch) + 1)):])
    m_, k, n = (int(rng.integers(1, 30)) for _ in range(3))
    adj_x, adj_y, asym = (bool(rng.integers(0, 2)) for _ in range(3))
    # LiteRT's reference kernel reads column sums it never computed for a 5-D rhs whose
    # first dimension is > 1 (batch_matmul._reference_indexing): symmetric there.
    asym = asym and not (len(rhs_batch) == 3 and rhs_batch[0] > 1)
    lhs = batch + ((k, m_) if adj_x else (m_, k))
    rhs = rhs_batch + ((n, k) if adj_y else (k, n))
    m = QuantModel()
    x = m.input("x", lhs, np.float32)
    w, scale, q = weights(rng, rhs, 1, False)
    a, b = np.zeros(lhs), np.zeros(rhs)
    out = np.matmul(a.swapaxes(-1, -2) if adj_x else a, b.swapaxes(-1, -2) if adj_y else b)
    y = m.output("y", out.shape, np.float32)
    m.op("BATCH_MATMUL", [x, m.const("w", w, np.int8, scale=scale, **q)], [y],
         version=4 if asym else 1, adj_x=adj_x, adj_y=adj_y, asymmetric_quantize_inputs=asym)
    check(m.build(), [feed(rng, lhs, str(rng.choice(["normal", "positive", "zeros"])))])
