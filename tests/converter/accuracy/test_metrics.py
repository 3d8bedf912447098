"""Accuracy metrics against hand-computed values."""

import math

import numpy as np
import pytest

from edgelite.converter.accuracy import TensorStats, cosine, sqnr, top_k_hits
from edgelite.converter.accuracy.metrics import sqnr_from_sums
from edgelite.converter.quantize import metrics as quantize_metrics


def test_sqnr_is_the_quantizers_own():
    assert sqnr is quantize_metrics.sqnr


def test_sqnr_of_a_known_signal_and_noise():
    # signal: 100 values of 2 -> sum 400; noise: 0.2 on each -> sum 4; 10 log10(100) = 20 dB
    ref = np.full(100, 2.0)
    assert sqnr(ref, ref + 0.2) == pytest.approx(20.0)
    # a sine of amplitude 1 over whole periods has mean power 1/2; noise of +-0.01 (power 1e-4)
    t = np.arange(1000) / 1000
    s = np.sin(2 * np.pi * 5 * t)
    noise = np.where(np.arange(1000) % 2 == 0, 0.01, -0.01)
    assert sqnr(s, s + noise) == pytest.approx(10 * math.log10(0.5 / 1e-4))   # 36.99 dB
    assert sqnr(ref, ref) == math.inf
    assert sqnr(np.zeros(3), np.ones(3)) == -math.inf


def test_sqnr_from_sums():
    assert sqnr_from_sums(1000.0, 1.0) == pytest.approx(30.0)
    assert sqnr_from_sums(5.0, 0.0) == math.inf
    assert sqnr_from_sums(0.0, 2.0) == -math.inf


def test_cosine_hand_values():
    assert cosine([1, 0], [0, 1]) == 0.0
    assert cosine([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert cosine([1, 2, 3], [-1, -2, -3]) == pytest.approx(-1.0)
    assert cosine([1, 1], [1, 0]) == pytest.approx(1 / math.sqrt(2))
    assert cosine([[3, 4]], [[4, 3]]) == pytest.approx(24 / 25)   # flattened
    assert cosine([0, 0], [0, 0]) == 1.0 and cosine([0, 0], [1, 0]) == 0.0
    with pytest.raises(ValueError, match="3 values.*2"):
        cosine([1, 2, 3], [1, 2])


def test_tensor_stats_stream_over_samples():
    s = TensorStats(scale=0.5)
    s.update(np.array([1.0, 2.0]), np.array([1.0, 2.5]))    # errors 0, +0.5
    s.update(np.array([[3.0, 4.0]]), np.array([[2.7, 4.0]]))  # errors -0.3, 0
    assert s.count == 4
    assert s.mean_error == pytest.approx((0.5 - 0.3) / 4)
    assert s.max_abs == pytest.approx(0.5) and s.max_error_lsb == pytest.approx(1.0)
    ref = np.array([1.0, 2.0, 3.0, 4.0])
    test = np.array([1.0, 2.5, 2.7, 4.0])
    assert s.sqnr_db == pytest.approx(10 * math.log10(30 / (0.25 + 0.09)))
    assert s.cosine == pytest.approx(cosine(ref, test))


def test_tensor_stats_per_channel_scale_and_float():
    # errors of 0.1 in both channels; channel scales 0.1 and 0.05 -> 1 and 2 steps
    s = TensorStats(scale=np.array([[0.1, 0.05]]))
    s.update(np.zeros((3, 2)), np.full((3, 2), 0.1))
    assert s.max_error_lsb == pytest.approx(2.0)
    f = TensorStats()
    f.update(np.ones(2), np.ones(2) * 1.5)
    assert f.max_error_lsb is None and f.max_abs == 0.5


def test_top_k_hits_break_ties_like_argmax():
    scores = np.array([[0.1, 0.7, 0.2],
                       [0.5, 0.5, 0.0],    # tie: argmax says class 0
                       [0.3, 0.3, 0.4]])
    labels = np.array([1, 1, 0])
    assert top_k_hits(scores, labels, 1).tolist() == [True, False, False]
    assert top_k_hits(scores, labels, 2).tolist() == [True, True, True]
    assert top_k_hits(scores, labels, 1).tolist() == (scores.argmax(1) == labels).tolist()
