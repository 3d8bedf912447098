"""`edgelite eval` (cli/eval_cmd.py) end to end: accuracy per model, thresholds and their
exit codes, JSON."""

import json

import numpy as np

from tests.conftest import MODELS
from tests.converter.accuracy_models import PB
from tests.support.cli import invoke

TEST = MODELS / "digits_test.npz"
UINT8 = MODELS / "keras_cnn.tf_uint8.tflite"


def test_eval_json():
    result = invoke("eval", PB, UINT8, "--data", TEST, "--labels", TEST, "--top-k", 3,
                    "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [m["precision"] for m in data["models"]] == ["float", "uint8"]
    assert data["samples"] == 397 and data["passed"] is True
    assert set(data["models"][0]["per_class"]) == {str(c) for c in range(10)}
    assert data["models"][0]["top3_accuracy"] >= data["models"][0]["accuracy"]


def test_eval_min_accuracy_exit_codes():
    ok = invoke("eval", PB, "--data", TEST, "--labels", TEST, "--min-accuracy", "90%")
    assert ok.exit_code == 0, ok.output
    assert "ok: " in ok.output and "at least the minimum 90.00%" in ok.output
    bad = invoke("eval", PB, "--data", TEST, "--labels", TEST, "--min-accuracy", "0.99")
    assert bad.exit_code == 1
    assert "FAIL: " in bad.output and "below the minimum 99.00%" in bad.output


def test_eval_max_drop_exit_codes():
    bad = invoke("eval", PB, UINT8, "--data", TEST, "--labels", TEST, "--max-drop", 0)
    assert bad.exit_code == 1 and "FAIL: " in bad.output and str(UINT8) in bad.output
    ok = invoke("eval", PB, UINT8, "--data", TEST, "--labels", TEST, "--max-drop", "1%")
    assert ok.exit_code == 0, ok.output
    as_json = invoke("eval", PB, UINT8, "--data", TEST, "--labels", TEST, "--max-drop", 0,
                     "--json")
    assert as_json.exit_code == 1
    assert json.loads(as_json.stdout)["passed"] is False


def test_eval_bad_threshold_and_labels(tmp_path):
    result = invoke("eval", PB, "--data", TEST, "--labels", TEST, "--min-accuracy", "95")
    assert result.exit_code == 2 and "write 0.9 or 90%" in result.output
    labels = tmp_path / "y.npy"
    np.save(labels, np.zeros(5, np.int64))
    result = invoke("eval", PB, "--data", TEST, "--labels", labels)
    assert result.exit_code == 1 and "holds 397 samples but the labels 5" in result.output
