"""Classification accuracy (accuracy/classification.py): top-k and per-class accuracy side
by side, and CI thresholds."""

import numpy as np
import pytest

from edgelite import DTypeError, EdgeliteError, Interpreter, ShapeError
from edgelite.converter.accuracy import evaluate
from tests.conftest import MODELS

from ..accuracy_models import PB, digits, float_model, int8_model


def _argmax_accuracy(model: bytes, x, y) -> float:
    it = Interpreter(model_content=model)
    it.allocate_tensors()
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    hits = 0
    for sample, label in zip(x, y):
        it.set_tensor(inp["index"], sample.reshape(inp["shape"]).astype(np.float32))
        it.invoke()
        hits += int(it.get_tensor(out["index"]).argmax() == label)
    return hits / len(y)


@pytest.fixture(scope="module")
def report():
    x, y = digits()
    return evaluate([PB, int8_model(), MODELS / "keras_cnn.tf_uint8.tflite"], x, y, top_k=3)


def test_side_by_side(report):
    x, y = digits()
    assert report.samples == len(y) == 397 and report.top_k == 3
    assert [m.precision for m in report.models] == ["float", "int8", "uint8"]
    assert report.models[0].accuracy == pytest.approx(_argmax_accuracy(float_model(), x, y))
    assert report.models[1].accuracy == pytest.approx(_argmax_accuracy(int8_model(), x, y))
    for m in report.models:
        assert 0.9 < m.accuracy <= m.top_k_accuracy <= 1.0
        # per-class accuracies weighted by class counts give the accuracy back
        assert np.dot(m.per_class, report.class_counts) / report.samples == \
            pytest.approx(m.accuracy)
    assert report.classes == list(range(10)) and sum(report.class_counts) == 397
    assert report.checks == [] and report.passed


def test_table(report):
    text = report.table()
    assert "397 samples, 10 classes" in text and "top-3" in text and "vs first" in text
    assert "per-class accuracy" in text and "[3] " in text and "uint8" in text


def test_thresholds():
    x, y = digits()
    models = [PB, MODELS / "keras_cnn.tf_uint8.tflite"]
    r = evaluate(models, x, y, min_accuracy=0.9, max_drop=0.01)
    assert r.passed and [c.kind for c in r.checks] == ["min_accuracy"] * 2 + ["max_drop"]
    r = evaluate(models, x, y, min_accuracy=0.99)
    assert not r.passed and len(r.failures) == 2
    assert "below the minimum 99.00%" in r.failures[0].message
    r = evaluate(models, x, y, max_drop=0.0)   # uint8 loses one sample: 0.25 points
    assert [c.model for c in r.failures] == [str(models[1])]
    assert r.failures[0].value == pytest.approx(1 / 397)
    assert "0.25 point(s) below" in r.failures[0].message


def test_integer_io_model_and_one_hot_labels():
    x, y = digits()
    one_hot = np.eye(10, dtype=np.float32)[y]
    r = evaluate([MODELS / "tf1_cnn.pb", MODELS / "tf1_cnn.tf_int8_io.tflite"], x[:60],
                 one_hot[:60], max_drop=0.05)
    assert r.models[1].precision == "int8" and r.passed


def test_samples_limit_and_npz_data():
    r = evaluate([float_model()], MODELS / "digits_test.npz", MODELS / "digits_test.npz",
                 samples=50)
    assert r.samples == 50 and sum(r.class_counts) == 50


def test_errors():
    x, y = digits()
    with pytest.raises(ShapeError, match="397 samples but the labels 10"):
        evaluate([float_model()], x, y[:10])
    with pytest.raises(EdgeliteError, match="10 score\\(s\\) per sample; labels range over "
                                            "0..12"):
        evaluate([float_model()], x[:3], np.array([0, 1, 12]))
    with pytest.raises(DTypeError, match="class indices"):
        evaluate([float_model()], x[:2], np.array([0.5, 1.0]))
    with pytest.raises(EdgeliteError, match="fraction in \\[0, 1\\]"):
        evaluate([float_model()], x, y, min_accuracy=95)
    with pytest.raises(EdgeliteError, match="no output 'logits'"):
        evaluate([float_model()], x, y, output="logits")


@pytest.mark.parametrize("quantized, kind", [(False, "float"), (True, "int8")])
def test_precision_of_a_qat_graph(quantized, kind):
    """A QAT graph's float model holds int8 tensors between QUANTIZE and DEQUANTIZE (its
    FakeQuants, as TF's converter writes them in float mode): it computes in float."""
    from edgelite.converter import QuantizeOptions, convert
    from edgelite.converter.accuracy.classification import precision
    from edgelite.converter.runner import ModelRunner

    model = convert(MODELS / "qat_cnn.pb", quantize=QuantizeOptions() if quantized else None)
    assert precision(ModelRunner(model)) == kind
