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
    assert len(runs) == 1 and set(found) == set(METHODS)     # the second pass: when read
    read = {method: dict(found[method]) for method in METHODS}
    assert len(runs) == 2
    for method in METHODS:
        expected = collect_ranges(model, samples, None, method=method, only=only).ranges
        assert read[method] == expected, method
        assert list(read[method]) == list(expected), method   # the same order
    assert len({tuple(sorted(r.items())) for r in read.values()}) == len(METHODS)


def test_nothing_is_computed_before_it_is_read(setup, monkeypatch):
    """Min/max alone needs one run; one tensor's entropy range one KL search."""
    model, samples = setup
    name = "keras_cnn/dw2_relu/Relu"
    method = CalibConfig.parse("entropy")
    expected = collect_ranges(model, samples, None, method=method).ranges
    runs, searches = [], []
    real = calibrate_methods.Observed.run
    monkeypatch.setattr(calibrate_methods.Observed, "run",
                        lambda self, *a: runs.append(1) or real(self, *a))
    entropy = calibrate_methods.EntropyObserver.range
    monkeypatch.setattr(calibrate_methods.EntropyObserver, "range",
                        lambda self: searches.append(1) or entropy(self))
    found = calibrate_methods.collect_methods(model, samples, METHODS)
    minmax = dict(found[CalibConfig.parse("minmax")])
    assert len(runs) == 1 and not searches
    ranges = found[method]
    assert len(runs) == 1                        # the second pass: when a range is read
    assert ranges[name] == expected[name] != minmax[name]
    assert len(runs) == 2 and len(searches) == 1
    assert found[method][name] == expected[name] and len(searches) == 1   # computed once
    assert dict(ranges) == expected and len(runs) == 2
