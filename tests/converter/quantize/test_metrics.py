"""converter/quantize/metrics.py: SQNR in dB over every element of every array given."""

import math

import numpy as np
import pytest

from edgelite.converter.quantize.metrics import sqnr


def test_sqnr_in_db():
    ref = np.array([3.0, -4.0], np.float32)            # signal 25
    test = ref + np.array([0.5, 0.0], np.float32)      # noise 0.25
    assert sqnr(ref, test) == pytest.approx(20.0)      # 10 * log10(100)
    assert sqnr(ref, ref) == math.inf
    assert sqnr(np.zeros(2), np.ones(2)) == -math.inf


def test_several_outputs_are_one_signal():
    a, b = np.array([[1.0, 2.0]]), np.array([2.0])     # signal 1 + 4 + 4 = 9
    noisy = [a + np.array([[0.0, 0.3]]), b]            # noise 0.09
    assert sqnr([a, b], noisy) == pytest.approx(20.0)
    assert sqnr([], []) == math.inf


def test_a_different_count_is_refused():
    with pytest.raises(ValueError, match=r"^sqnr: reference has 3 values, test has 2$"):
        sqnr(np.zeros(3), [np.zeros(1), np.zeros(1)])
