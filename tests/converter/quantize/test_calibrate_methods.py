"""Every method's ranges from one calibration (auto's folds) equal each method's own
calibration bit for bit, in two runs of the model instead of one or two per method."""

import numpy as np
import pytest

from edgelite.converter import convert_detailed
from edgelite.converter.quantize import calibrate_methods
from edgelite.converter.quantize.auto import METHODS
from edgelite.converter.quantize.calibrate import collect_ranges, load_samples
from edgelite.converter.quantize.observers import CalibConfig
from tests.conftest import MODELS


@pytest.fixture(scope="module")
def setup():
    model = convert_detailed(MODELS / "keras_cnn.pb").model
    samples = list(load_samples(MODELS / "digits_calib.npy", ["input"]))[:40]
    return model, samples


def test_each_method_as_its_own_calibration(setup, monkeypatch):
    model, samples = setup
    runs = []
    real = calibrate_methods.Observed.run
    monkeypatch.setattr(calibrate_methods.Observed, "run",
                        lambda self, *a: runs.append(1) or real(self, *a))
    only = {"input", "keras_cnn/conv1_relu6/Relu6", "keras_cnn/dw2_relu/Relu",
            "keras_cnn/logits/BiasAdd"}
    found = calibrate_methods.collect_methods(model, samples, METHODS, only)
    assert len(runs) == 2 and set(found) == set(METHODS)
    for method in METHODS:
        expected = collect_ranges(model, samples, None, method=method, only=only).ranges
        assert found[method] == expected, method
    assert len({tuple(sorted(r.items())) for r in found.values()}) == len(METHODS)


def test_moving_average_is_calibrated_on_its_own(setup):
    model, samples = setup
    found = calibrate_methods.collect_methods(model, samples, ["moving-average", "mse"])
    for text in ("moving-average", "mse"):
        expected = collect_ranges(model, samples, None, method=text).ranges
        assert found[CalibConfig.parse(text)] == expected
