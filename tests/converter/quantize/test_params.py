"""Scale / zero-point rules, checked against hand-computed values."""

import numpy as np
import pytest

from edgelite.converter.lower.fake_quant import fake_quantize, nudge
from edgelite.converter.quantize.params import (QType, asymmetric, quantize, round_half_away,
                                                symmetric_weights)


def test_round_half_away_from_zero():
    np.testing.assert_array_equal(round_half_away([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]),
                                  [-3, -2, -1, 1, 2, 3])


@pytest.mark.parametrize("rmin,rmax,qt,scale,zp", [
    (-1.0, 1.0, QType.INT8, 2 / 255, -1),       # zp_from_min = -128 + 127.5 = -0.5 -> -1
    (0.0, 6.0, QType.INT8, 6 / 255, -128),
    (0.0, 6.0, QType.UINT8, 6 / 255, 0),
    (2.0, 5.0, QType.UINT8, 5 / 255, 0),        # widened to include 0: [0, 5]
    (-3.0, -1.0, QType.INT8, 3 / 255, 127),     # widened to [-3, 0]
    (-0.5, 1.5, QType.UINT8, 2 / 255, 64),      # 0 + 0.5 / (2/255) = 63.75 -> 64
    (0.0, 0.0, QType.INT8, 1.0, 0),             # degenerate range: scale 1
])
def test_asymmetric(rmin, rmax, qt, scale, zp):
    p = asymmetric(rmin, rmax, qt)
    assert p.scale[0] == pytest.approx(scale, rel=1e-6)
    assert p.zero_point[0] == zp


def test_zero_is_exact_after_nudging():
    for rmin, rmax in [(-0.37, 2.9), (-5.1, 0.3), (0.2, 7.0)]:
        p = asymmetric(rmin, rmax, QType.INT8)
        q = quantize(np.zeros(3, np.float32), p, np.int8, -128, 127)
        assert (p.scale[0] * (q.astype(np.int64) - p.zero_point[0]) == 0.0).all()


def test_symmetric_weights_per_channel_and_tensor():
    w = np.array([[1.0, -2.0], [0.5, 0.25], [0.0, 0.0]], np.float32)
    p = symmetric_weights(w, axis=0)
    np.testing.assert_allclose(p.scale, [2 / 127, 0.5 / 127, 1.0], rtol=1e-6)
    assert not p.zero_point.any()
    q = quantize(w, p, np.int8, -127, 127)
    np.testing.assert_array_equal(q, [[64, -127], [127, 64], [0, 0]])  # 63.5 -> 64
    pt = symmetric_weights(w, axis=None)
    assert pt.scale.shape == (1,) and pt.scale[0] == pytest.approx(2 / 127)


@pytest.mark.parametrize("rmin,rmax,bits,narrow,nmin,nmax", [
    # zp_from_min = 0.1 / (0.6/255) = 42.5 (TF computes it in float32, as we do): zp 43
    (-0.1, 0.5, 8, False, -43 * 0.6 / 255, 212 * 0.6 / 255),
    (0.0, 6.0, 8, False, 0.0, 6.0),
    (-1.0, 1.0, 8, True, -1.0, 1.0),                 # narrow: 254 steps, zp 127
    (0.5, 2.0, 4, False, 0.0, 1.5),                   # range can't hold 0: zp clamps to 0
])
def test_fake_quant_nudging(rmin, rmax, bits, narrow, nmin, nmax):
    lo, hi, _ = nudge(rmin, rmax, bits, narrow)
    assert float(lo) == pytest.approx(nmin, abs=1e-6)
    assert float(hi) == pytest.approx(nmax, abs=1e-6)


def test_fake_quantize_values():
    # [-1, 1], 8 bits: step 2/255; zp_from_min = 1 / float32(2/255) = 127.49999 in float32
    # (as in TF) -> zp 127, nudged range [-127, 128] steps
    x = np.array([-2.0, -0.5, 0.0, 0.3, 2.0], np.float32)
    y = fake_quantize(x, -1.0, 1.0, 8, False)
    step = 2 / 255
    np.testing.assert_allclose(y, [-127 * step, -64 * step, 0.0, 38 * step, 128 * step],
                               atol=1e-6)


def test_int16_activations_are_symmetric():
    from edgelite.converter.quantize.params import activation, symmetric_activation
    p = symmetric_activation(0.0, 1.0)
    assert p.scale[0] == np.float32(1 / 32767) and p.zero_point[0] == 0  # TF's input scale
    p = activation(-3.0, 2.0, QType.INT16)
    assert p.scale[0] == np.float32(3 / 32767) and p.zero_point[0] == 0
    assert activation(0.0, 0.0, QType.INT16).scale[0] == 1.0
    assert QType.INT16.bias_dtype == np.int64 and QType.INT8.bias_dtype == np.int32
