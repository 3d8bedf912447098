"""The real trained models of issue 12 (models/build_fashion.py): an Xception-style network
and a MobileNetV2-style network trained on Fashion-MNIST, with TensorFlow's own int8 files
calibrated on the same 50 samples (models/fashion_calib.npz).

Float conversion, op counts and names: tests/models/test_sample_models.py. Here: both int8
files (TF's and ours) run bit-exactly as in LiteRT, and ours is as accurate as TF's on the
400 held-out test images."""

import json

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import QuantizeOptions
from edgelite.converter.quantize.metrics import sqnr
from edgelite.interpreter import Interpreter
from tests.conftest import MODELS
from tests.models.test_quantized_models import assert_predictions_bit_exact, predict

NAMES = ["fashion_xception", "fashion_mobilenet_v2"]
CALIB = MODELS / "fashion_calib.npz"


@pytest.fixture(scope="module")
def held_out():
    d = np.load(MODELS / "fashion_test.npz")
    return d["x"].astype(np.float32), d["y"]


@pytest.fixture(scope="module", params=NAMES)
def models(request, held_out):
    name = request.param
    float_model = convert_detailed(MODELS / f"{name}.pb").model
    ours = convert_detailed(MODELS / f"{name}.pb", ConvertOptions(
        quantize=QuantizeOptions(calib=str(CALIB)))).model
    theirs = (MODELS / f"{name}.tf_int8.tflite").read_bytes()
    meta = json.loads((MODELS / f"{name}.tf_ops.json").read_text())
    reference = predict(Interpreter(model_content=float_model), held_out[0])
    return name, ours, theirs, meta, reference


def test_both_int8_files_are_bit_exact_with_litert(models, held_out):
    name, ours, theirs, _, _ = models
    x = held_out[0][:32]
    assert_predictions_bit_exact(theirs, x, f"TensorFlow's {name}")
    assert_predictions_bit_exact(ours, x, f"edgelite's {name}")


def test_float_accuracy_is_the_recorded_one(models, held_out):
    name, _, _, meta, reference = models
    accuracy = float(np.mean(reference.argmax(1) == held_out[1]))
    assert accuracy == pytest.approx(meta["tflite_float_held_out_accuracy"], abs=1e-9)
    assert accuracy > 0.9


def test_int8_is_as_accurate_as_tensorflows(models, held_out):
    """min/max int8, per-channel weights: TF's converter's own choices. On the 400 held-out
    images: accuracy within one image of TF's int8, output SQNR within 0.2 dB of it (the two
    converters fold and calibrate the same way; they differ in float rounding of the folded
    weights)."""
    name, ours, theirs, meta, reference = models
    x, y = held_out
    # the reference kernels: TF's recorded accuracy is LiteRT's BUILTIN_REF (its optimized
    # kernels round one image of fashion_xception the other way: 0.9325)
    mine, tf = (predict(Interpreter(model_content=m, kernels="reference"), x)
                for m in (ours, theirs))
    acc_mine, acc_tf = (float(np.mean(p.argmax(1) == y)) for p in (mine, tf))
    assert acc_tf == pytest.approx(meta["tf_int8"]["held_out_accuracy"], abs=1e-9)
    assert acc_mine >= acc_tf - 1 / len(y)
    assert sqnr(reference, mine) >= sqnr(reference, tf) - 0.2
