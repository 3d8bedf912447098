"""interpreter/kernels/hybrid/rows.py: the hybrid recurrent kernels' row quantization and
products, on rows whose results follow from the formulas by hand (the kernels against
LiteRT: lstm/test_hybrid_cell.py, test_rnn.py, test_svdf.py)."""

import numpy as np

from edgelite.interpreter.kernels.hybrid.rows import (HybridWeights, accumulate_products,
                                                      quantize_rows)

F32 = np.float32


def test_symmetric_rows():
    x = F32([[0.5, -1.0, 0.25], [0, 0, 0], [2.54, 0.01, -1.27]])
    r = quantize_rows(x, asymmetric=False)
    assert r.zero_point is None and r.q.dtype == np.float64
    # row 0: range 1, q = round(x * 127); zeros: q 0, scale 1; row 2: 127 / 2.54 = 50
    np.testing.assert_array_equal(r.q, [[64, -127, 32], [0, 0, 0], [127, 1, -64]])
    np.testing.assert_array_equal(r.scale, F32([1 / 127, 1, 2.54 / 127]))


def test_asymmetric_rows_hold_zero_and_use_the_full_range():
    x = F32([[0.0, 2.55, 1.0], [-1.0, -0.5, -0.25]])
    r = quantize_rows(x, asymmetric=True)
    # row 0: [0, 2.55] -> scale 0.01, zero point -128; row 1 widened to [-1, 0]
    assert r.scale[0] == F32(2.55 / 255) and r.zero_point.tolist()[0] == -128
    assert r.q[0].tolist() == [-128, 127, -28]
    assert r.zero_point[1] == 127 and r.q[1].tolist() == [-128, 0, 63]


def test_accumulate_products_subtracts_the_zero_point_sums():
    w1, w2 = np.int8([[1, 2], [3, -4]]), np.int8([[5, 6]])
    weights = HybridWeights.of([w1, w2], [0.5, 0.25])
    assert weights.w.shape == (2, 3) and weights.scale.tolist() == [0.5, 0.5, 0.25]
    assert weights.row_sums.tolist() == [3, -1, 11]
    x = F32([[1.0, -0.5]])
    for asymmetric in (False, True):
        rows = quantize_rows(x, asymmetric)
        acc = np.full((1, 3), F32(1.0))
        accumulate_products(acc, rows, weights)
        exact = x.astype(np.float64) @ np.concatenate([w1 * 0.5, w2 * 0.25]).T
        np.testing.assert_allclose(acc - 1.0, exact, atol=0.02)  # within the input step
        assert acc.dtype == F32
