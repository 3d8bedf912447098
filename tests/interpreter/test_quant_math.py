"""interpreter/quant_math.py against hand-computed cases and exact rational arithmetic."""

from fractions import Fraction

import numpy as np
import pytest

from edgelite.interpreter import quant_math as qm
from edgelite.interpreter.quant_math import INT32_MAX, INT32_MIN, Rounding

DOUBLE, SINGLE = Rounding.DOUBLE, Rounding.SINGLE


# --------------------------------------------------------------------------- QuantizeMultiplier


@pytest.mark.parametrize("real,expected", [
    (1.0, (2**30, 1)),  # frexp(1) = (0.5, 1)
    (0.5, (2**30, 0)),
    (0.25, (2**30, -1)),
    (0.3, (1288490189, -1)),  # round(0.6 * 2^31) = round(1288490188.8)
    (0.75, (1610612736, 0)),
    (3.0, (1610612736, 2)),
    (2.0**-31, (2**30, -30)),
    (2.0**-32, (2**30, -31)),  # shift -31 is still allowed
    (2.0**-33, (0, 0)),  # shift -32: flushed to zero
    (1e-12, (0, 0)),
    (0.0, (0, 0)),
    (1.0 - 2.0**-40, (2**30, 1)),  # the mantissa rounds up to 2^31: halve it, shift + 1
    (-0.25, (-(2**30), -1)),
])
def test_quantize_multiplier(real, expected):
    assert qm.quantize_multiplier(real, DOUBLE) == expected


def test_quantize_multiplier_single_rounding_saturates_large_shifts():
    assert qm.quantize_multiplier(2.0**31, DOUBLE) == (2**30, 32)
    assert qm.quantize_multiplier(2.0**31, SINGLE) == (INT32_MAX, 30)
    assert qm.quantize_multiplier(2.0**29, SINGLE) == (2**30, 30)


def test_quantize_multiplier_variants_check_their_range():
    assert qm.quantize_multiplier_smaller_than_one_exp(0.25) == (2**30, -1)
    assert qm.quantize_multiplier_greater_than_one(3.0) == (1610612736, 2)
    with pytest.raises(ValueError):
        qm.quantize_multiplier_smaller_than_one_exp(1.0)
    with pytest.raises(ValueError):
        qm.quantize_multiplier_greater_than_one(1.0)
    with pytest.raises(ValueError):
        qm.quantize_multiplier(float("nan"))


def test_quantize_multipliers_per_channel():
    m, s = qm.quantize_multipliers([0.25, 0.3, 0.0])
    assert m.tolist() == [2**30, 1288490189, 0] and s.tolist() == [-1, -1, 0]


# --------------------------------------------------------------------------- gemmlowp


@pytest.mark.parametrize("a,b,expected", [
    (INT32_MIN, INT32_MIN, INT32_MAX),  # the one overflow saturates
    (2**30, 2**30, 2**29),
    (1, 2**30, 1),  # 0.5 -> 1
    (-1, 2**30, 0),  # -0.5 -> 0: ties go up
    (3, 2**30, 2),  # 1.5 -> 2
    (-3, 2**30, -1),  # -1.5 -> -1
    (-5, 2**30, -2),  # -2.5 -> -2
    (INT32_MIN, INT32_MAX, -2147483647),
    (INT32_MAX, INT32_MAX, 2147483646),
    (0, INT32_MIN, 0),
])
def test_saturating_rounding_doubling_high_mul(a, b, expected):
    assert int(qm.saturating_rounding_doubling_high_mul(a, b)) == expected


@pytest.mark.parametrize("x,exponent,expected", [
    (5, 1, 3), (-5, 1, -3),  # +-2.5: half away from zero
    (6, 2, 2), (-6, 2, -2),  # +-1.5
    (-7, 2, -2), (7, 2, 2),  # +-1.75
    (-9, 2, -2), (9, 2, 2),  # +-2.25
    (12345, 0, 12345), (-12345, 0, -12345),  # exponent 0: identity
    (INT32_MIN, 31, -1), (INT32_MAX, 31, 1),
    (2**30, 31, 1), (-(2**30), 31, -1), (2**30 - 1, 31, 0), (-(2**30) + 1, 31, 0),
])
def test_rounding_divide_by_pot(x, exponent, expected):
    assert int(qm.rounding_divide_by_pot(x, exponent)) == expected


def test_rounding_divide_by_pot_per_channel_exponents():
    out = qm.rounding_divide_by_pot(np.array([[-5, -5, -5]]), np.array([0, 1, 2]))
    assert out.tolist() == [[-5, -3, -1]]


def test_saturating_rounding_multiply_by_pot():
    assert qm.saturating_rounding_multiply_by_pot(3, 2).tolist() == 12
    assert int(qm.saturating_rounding_multiply_by_pot(2**29, 2)) == INT32_MAX
    assert int(qm.saturating_rounding_multiply_by_pot(-(2**29) - 1, 2)) == INT32_MIN
    assert int(qm.saturating_rounding_multiply_by_pot(-6, -2)) == -2


# --------------------------------------------------------------------------- MBQM


@pytest.mark.parametrize("x,m,shift,double,single", [
    (-6, 2**30, -1, -2, -1),  # -1.5: double rounds half away, single half up
    (6, 2**30, -1, 2, 2),  # 1.5
    (5, 2**30, -1, 2, 1),  # 1.25: double rounding error (5/2 -> 3, 3/2 -> 2)
    (-3, 2**30, 0, -1, -1),  # shift 0: -1.5 -> -1 in both (SRDHM rounds half up)
    (2**30, 2**30, -30, 1, 1),  # multiplier 2^-31: 0.5
    (-(2**30), 2**30, -30, -1, 0),  # -0.5
    (2**30, 2**30, -31, 0, 0),  # 0.25 with the smallest shift
    (100, 1610612736, 2, 300, 300),  # multiplier 3.0, left shift
    (2**30 - 1, 2**30, 1, 2**30 - 1, 2**30 - 1),  # multiplier 1.0 = (2^30, 1): identity
    (INT32_MAX, 2**30, 1, -1, INT32_MAX),  # ... but double rounding's x * 2 wraps in int32
    (INT32_MIN, INT32_MIN, 0, INT32_MAX, INT32_MIN),  # saturation vs the int64 product
])
def test_multiply_by_quantized_multiplier(x, m, shift, double, single):
    assert int(qm.multiply_by_quantized_multiplier(x, m, shift, DOUBLE)) == double
    if m >= 0:
        assert int(qm.multiply_by_quantized_multiplier(x, m, shift, SINGLE)) == single


def _exact_double(x, m, shift):
    """SRDHM then RDBPOT, from exact rationals (round half up, then half away)."""
    left, right = max(shift, 0), max(-shift, 0)
    x = ((x << left) + 2**31) % 2**32 - 2**31
    high = Fraction(x * m, 2**31)
    if x == m == INT32_MIN:
        y = INT32_MAX
    else:
        y = int((high + Fraction(1, 2)).__floor__())
    v = Fraction(y, 2**right)
    return int((abs(v) + Fraction(1, 2)).__floor__()) * (1 if v >= 0 else -1)


def _exact_single(x, m, shift):
    return int((Fraction(x * m, 2**(31 - shift)) + Fraction(1, 2)).__floor__())


def test_mbqm_matches_exact_rationals():
    rng = np.random.default_rng(7)
    xs = np.concatenate([rng.integers(-(2**31), 2**31, 300), rng.integers(-5000, 5000, 300),
                         [INT32_MIN, INT32_MAX, 0, 1, -1]])
    for x in xs:
        m = int(rng.integers(2**30, 2**31))
        shift = int(rng.integers(-31, 1))
        x = int(x)
        assert int(qm.multiply_by_quantized_multiplier(x, m, shift, DOUBLE)) == \
            _exact_double(x, m, shift), (x, m, shift)
        single = _exact_single(x, m, shift)
        if INT32_MIN <= single <= INT32_MAX:
            assert int(qm.multiply_by_quantized_multiplier(x, m, shift, SINGLE)) == single


def test_mbqm_vectorised_per_channel():
    x = np.array([[-6, 5, 7], [6, -5, -7]])
    m = np.array([2**30, 2**30, 1288490189])
    s = np.array([-1, -1, 0])
    out = qm.multiply_by_quantized_multiplier(x, m, s, DOUBLE)
    expected = [[_exact_double(int(v), int(mm), int(ss)) for v, mm, ss in zip(row, m, s)]
                for row in x]
    assert out.tolist() == expected


def test_mbqm_smaller_and_greater_than_one():
    assert int(qm.multiply_by_quantized_multiplier_smaller_than_one_exp(-6, 2**30, -1)) == -2
    assert int(qm.multiply_by_quantized_multiplier_greater_than_one(7, 1610612736, 2)) == 21
    with pytest.raises(ValueError):
        qm.multiply_by_quantized_multiplier_smaller_than_one_exp(1, 2**30, 1)
    with pytest.raises(ValueError):
        qm.multiply_by_quantized_multiplier_greater_than_one(1, 2**30, -1)


def test_mbqm_neon_rounds_the_final_shift_half_up():
    # SRDHM(-6, 2^30) = -3, then -3 / 2 = -1.5: NEON's vrshl gives -1, RDBPOT -2.
    assert int(qm.multiply_by_quantized_multiplier_neon(-6, 2**30, -1)) == -1
    assert int(qm.multiply_by_quantized_multiplier_neon(6, 2**30, -1)) == 2
    assert int(qm.multiply_by_quantized_multiplier_neon(-7, 2**30, 0)) == -3  # -3.5 -> -3


def test_mbqm_int64_overload():
    assert int(qm.multiply_by_quantized_multiplier_int64(2**32, 2**30, -1)) == 2**30
    assert int(qm.multiply_by_quantized_multiplier_int64(-(2**40), 2**30, -12)) == -(2**27)
    # reduced multiplier: (m + 2^15) >> 16, saturating at 0x7FFF.
    assert int(qm.multiply_by_quantized_multiplier_int64(3, 0x7FFFFFFF, 0)) == 3


# --------------------------------------------------------------------------- quantize


def test_round_half_away_differs_from_numpy():
    v = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999, -2.5001])
    assert qm.round_half_away(v).tolist() == [1, 2, 3, -1, -2, -3, 2, -3]
    assert np.round(v).tolist() != qm.round_half_away(v).tolist()


def test_quantize_and_dequantize():
    assert qm.quantize([0.5, -0.5, 2.5, -2.5, 1000, -1000], 1.0, 0, np.int8).tolist() == \
        [1, -1, 3, -3, 127, -128]
    assert qm.quantize([0.0, 0.25, -1.0], 0.5, 128, np.uint8).tolist() == [128, 129, 126]
    assert qm.quantize([np.inf, -np.inf], 0.1, 0, np.uint8).tolist() == [255, 0]
    assert qm.dequantize(np.array([0, 255], np.uint8), 0.5, 128).tolist() == [-64.0, 63.5]


def test_activation_range():
    # RELU6 on scale 6/255, zero point -128: q(6) = -128 + round(255.0) = 127.
    assert qm.activation_range(3, 6 / 255, -128, np.int8) == (-128, 127)
    assert qm.activation_range(1, 0.1, 10, np.int8) == (10, 127)
    assert qm.activation_range(2, 0.5, 0, np.uint8) == (0, 2)
    assert qm.activation_range(0, 0.5, 3, np.uint8) == (0, 255)


def test_wrap_and_saturate():
    assert qm.wrap_int32(2**31).tolist() == INT32_MIN
    assert qm.wrap_int32(-(2**31) - 1).tolist() == INT32_MAX
    assert qm.saturate_int32([2**40, -(2**40)]).tolist() == [INT32_MAX, INT32_MIN]


def test_mbqm_fast_path_equals_the_gemmlowp_composition():
    rng = np.random.default_rng(3)
    x = rng.integers(-(2**31), 2**31, size=(400, 8))
    x[:10] = rng.integers(-300, 300, size=(10, 8))
    m = rng.integers(0, 2**31, size=8)
    shift = np.array([0, -1, -2, -7, -15, -30, -31, 0])
    composed = qm.rounding_divide_by_pot(qm.saturating_rounding_doubling_high_mul(x, m),
                                         -shift)
    assert np.array_equal(qm.multiply_by_quantized_multiplier(x, m, shift, DOUBLE), composed)
