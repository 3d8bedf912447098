"""The rule by which a quantization candidate replaces a simpler one (converter/quantize/
choice.py), on synthetic fold scores: a clear win across the folds -- on every fold, or a
mean gain above the folds' spread -- by more than the margin, and no loss at the outputs."""

import math

import numpy as np
import pytest

from edgelite.converter.quantize.choice import GAIN_CAP_DB, MARGIN_DB, SPREAD_K, Score, judge

SIGNAL = 100.0


def _score(*gains_db: float, output_db: float = 30.0) -> Score:
    """A candidate whose error on fold f is the baseline's (1.0) lowered by gains_db[f]."""
    return Score(SIGNAL, tuple(10.0 ** (-g / 10.0) for g in gains_db), output_db)


BASE = _score(0.0, 0.0, 0.0, 0.0)


def test_the_constants():
    assert (MARGIN_DB, SPREAD_K) == (0.05, 1.0)


def test_gains_are_per_fold_decibels():
    cand = Score(SIGNAL, (0.5, 1.0, 2.0, 0.1), 30.0)
    np.testing.assert_allclose(cand.gains(BASE), [3.0103, 0.0, -3.0103, 10.0], atol=1e-4)
    assert math.isclose(BASE.db, 10 * math.log10(SIGNAL / 4.0))


def test_winning_on_every_fold_is_kept():
    v = judge(_score(0.2, 0.1, 0.3, 0.1), BASE)
    assert v.kept and v.reason == "wins on every fold"
    assert math.isclose(v.mean, 0.175) and math.isclose(v.spread, np.std([.2, .1, .3, .1], ddof=1))


def test_a_mean_gain_above_the_spread_is_kept_despite_a_lost_fold():
    v = judge(_score(3.0, 3.2, 2.8, -0.1), BASE)
    assert v.kept and v.reason == "mean gain > spread" and v.mean > v.spread


def test_winning_on_average_but_losing_a_fold_by_more_than_the_spread_allows_is_not_kept():
    """The issue's overfit: a large gain on most folds from a few samples, a loss on one."""
    v = judge(_score(8.0, 7.5, 0.5, -0.3), BASE)
    assert v.mean == pytest.approx(3.925) and v.spread > v.mean
    assert not v.kept and v.reason == "loses on fold 3, mean gain <= spread"
    lucky = judge(_score(12.0, -1.0, -0.5, 0.0), BASE)    # one lucky fold
    assert not lucky.kept and lucky.reason == "loses on fold 1, 2, 3, mean gain <= spread"


def test_a_gain_within_the_margin_is_not_kept():
    v = judge(_score(0.04, 0.04, 0.04, 0.04), BASE)
    assert not v.kept and v.reason == "mean gain not above 0.05 dB"
    assert not judge(_score(-1.0, -2.0, -1.0, -1.0), BASE).kept


def test_a_loss_at_the_outputs_is_not_kept():
    v = judge(_score(1.0, 1.0, 1.0, 1.0, output_db=29.9), BASE)
    assert not v.kept and v.reason == "outputs -0.10 dB"
    assert judge(_score(1.0, 1.0, 1.0, 1.0, output_db=30.0), BASE).kept


def test_a_fold_without_error_counts_as_the_cap():
    perfect = Score(SIGNAL, (0.0, 1.0, 1.0, 1.0), 30.0)
    assert perfect.gains(BASE) == (GAIN_CAP_DB, 0.0, 0.0, 0.0)
    assert BASE.gains(perfect) == (-GAIN_CAP_DB, 0.0, 0.0, 0.0)
    assert Score(SIGNAL, (0.0,) * 4, 30.0).gains(Score(SIGNAL, (0.0,) * 4, 30.0)) == (0.0,) * 4
