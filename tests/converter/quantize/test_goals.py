"""goals.py: which accuracy goal is asked (one clear line for contradictions), and top-1
accuracy of the first output against labels."""

import numpy as np
import pytest

from edgelite.converter.quantize import PrecisionOptions
from edgelite.converter.quantize.goals import calibration_labels, goal_kind, top1
from edgelite.converter.quantize.selective import GoalKind
from edgelite.errors import EdgeliteError


def test_goal_kind():
    assert goal_kind(PrecisionOptions()) is None
    assert goal_kind(PrecisionOptions(min_sqnr=30.0)) is GoalKind.MIN_SQNR
    assert goal_kind(PrecisionOptions(max_accuracy_drop=0.01, labels="y.npy")) \
        is GoalKind.MAX_ACCURACY_DROP


@pytest.mark.parametrize("kwargs, message", [
    (dict(min_sqnr=30.0, max_accuracy_drop=0.1, labels="y"), "not both"),
    (dict(max_accuracy_drop=1.5, labels="y"), r"fraction in \[0, 1\]"),
    (dict(max_accuracy_drop=0.1), "needs --labels"),
    (dict(labels="y.npy"), "only used by --max-accuracy-drop"),
])
def test_goal_kind_refuses(kwargs, message):
    with pytest.raises(EdgeliteError, match=message):
        goal_kind(PrecisionOptions(**kwargs))


def test_top1():
    outputs = [[np.array([[0.1, 0.9]])], [np.array([[0.8, 0.2]])], [np.array([[0.3, 0.7]])]]
    assert top1(outputs, np.array([1, 0, 0])) == pytest.approx(2 / 3)
    with pytest.raises(EdgeliteError, match="2 score"):
        top1(outputs, np.array([1, 0, 5]))


def test_calibration_labels_pick_the_samples_used(tmp_path):
    path = tmp_path / "y.npy"
    np.save(path, np.array([3, 1, 4, 1, 5]))
    assert calibration_labels(str(path), [0, 2, 4]).tolist() == [3, 4, 5]
    with pytest.raises(EdgeliteError, match="holds 5 labels for at least 7"):
        calibration_labels(str(path), [0, 6])
