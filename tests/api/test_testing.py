"""edgelite.testing: accuracy checks as one assertion, with a readable failure."""

import pytest

import edgelite.testing as et
from tests.conftest import MODELS
from tests.converter.accuracy_models import PB, digits, float_model, int8_model


def test_assert_accuracy_passes_and_returns_the_report():
    x, y = digits()
    report = et.assert_accuracy(int8_model(), x, y, min_accuracy=0.9, max_drop=0.01,
                                reference=PB)
    assert report.passed and [m.precision for m in report.models] == ["float", "int8"]
    # min_accuracy applies to the model under test, not to the reference
    assert [c.kind for c in report.checks] == ["max_drop", "min_accuracy"]
    assert report.checks[-1].model.startswith("model (")


def test_assert_accuracy_fails_with_the_table():
    x, y = digits()
    with pytest.raises(AssertionError) as info:
        et.assert_accuracy(MODELS / "keras_cnn.tf_uint8.tflite", x, y, reference=PB,
                           max_drop=0.0, min_accuracy=0.99)
    text = str(info.value)
    assert "below the minimum 99.00%" in text and "0.25 point(s) below" in text
    assert "per-class accuracy" in text          # the whole table follows
    assert text.count("below the minimum") == 1   # the reference is not checked


def test_assert_accuracy_needs_a_threshold():
    x, y = digits()
    with pytest.raises(ValueError, match="min_accuracy and/or max_drop"):
        et.assert_accuracy(PB, x, y)
    with pytest.raises(ValueError, match="reference="):
        et.assert_accuracy(PB, x, y, max_drop=0.01)


def test_assert_sqnr():
    x = digits()[0][:50]
    report = et.assert_sqnr(PB, int8_model(), x, min_db=25)
    assert report.output_sqnr_db >= 25
    ruined = int8_model("keras_cnn/conv1_relu6/Relu6", 30.0)
    with pytest.raises(AssertionError) as info:
        et.assert_sqnr(float_model(), ruined, x, min_db=25, top=3)
    text = str(info.value)
    assert text.startswith("output SQNR") and "is below 25.00 dB" in text
    assert "(worst 3 of 8)" in text
    culprit = text.splitlines().index(next(l for l in text.splitlines()
                                           if l.startswith("tensors,")))
    assert "keras_cnn/conv1_relu6/Relu6" in text.splitlines()[culprit + 2]


def test_hostile_data_paths_are_refused_before_allocating(tmp_path):
    """The API reads data paths with the same checked reader as the command line."""
    from edgelite import EdgeliteError
    from tests.converter.datafiles import npy_header
    bomb = tmp_path / "x.npy"
    bomb.write_bytes(npy_header(shape=(10**6, 8, 8, 1)) + b"\0" * 64)
    x, y = digits()
    with pytest.raises(EdgeliteError, match="input data '.*x.npy' declares float32 "
                       "\\[1000000, 8, 8, 1\\], 256000000 bytes .244.1 MiB., but holds only "
                       "64 bytes"):
        et.assert_accuracy(PB, bomb, y, min_accuracy=0.5)
    with pytest.raises(EdgeliteError, match="labels '.*x.npy' declares"):
        et.assert_accuracy(PB, x, bomb, min_accuracy=0.5)
