"""Quantized sample models: interop with LiteRT, bit-exactness, accuracy and size vs TF.

TensorFlow's own int8 conversions of the same GraphDefs, calibrated on the same 100 samples
(models/digits_calib.npy), are committed with their measured accuracy and size
(models/build_quantized.py -> models/quantized_reference.json).
"""

import json

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import IOType, QuantizeOptions, QuantMode
from edgelite.interpreter import Interpreter
from tests.conftest import MODELS
from tests.support import KERNEL_SETS, edgelite_interpreter, litert_interpreter

CALIB = MODELS / "digits_calib.npy"
MODES = ["int8", "uint8", "dynamic", "float16"]


def convert(name, mode, **kw):
    q = QuantizeOptions(mode=QuantMode(mode), calib=str(CALIB), **kw)
    return convert_detailed(MODELS / f"{name}.pb", ConvertOptions(quantize=q))


@pytest.fixture(scope="module")
def test_set():
    d = np.load(MODELS / "digits_test.npz")
    return d["x"], d["y"]


@pytest.fixture(scope="module")
def reference():
    return json.loads((MODELS / "quantized_reference.json").read_text())     # committed


def predict(interp, xs):
    interp.allocate_tensors()
    inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
    outs = []
    for x in xs:
        x = x[None]
        if inp["dtype"] != np.float32:
            s, z = inp["quantization"]
            info = np.iinfo(inp["dtype"])
            x = np.clip(np.round(x / s) + z, info.min, info.max).astype(inp["dtype"])
        interp.set_tensor(inp["index"], x)
        interp.invoke()
        outs.append(interp.get_tensor(out["index"])[0])
    return np.array(outs)


@pytest.mark.parametrize("name", ["tf1_cnn", "keras_cnn"])
@pytest.mark.parametrize("mode", MODES)
def test_quantized_model_runs_in_litert(name, mode, test_set, litert):
    model = convert(name, mode).model
    x, y = test_set
    acc = (predict(litert.Interpreter(model_content=model), x[:64]).argmax(1) == y[:64]).mean()
    assert acc > 0.85


def assert_predictions_bit_exact(model: bytes, x: np.ndarray, what: str) -> None:
    """edgelite's kernels="reference" / "default" reproduce LiteRT's BUILTIN_REF / AUTO."""
    for kernels in KERNEL_SETS:
        ours = predict(edgelite_interpreter(model, kernels), x)
        theirs = predict(litert_interpreter(model, kernels), x)
        np.testing.assert_array_equal(ours, theirs, err_msg=f"{what} model, {kernels}")


@pytest.mark.parametrize("name", ["tf1_cnn", "keras_cnn"])
@pytest.mark.parametrize("mode,io", [("int8", "float"), ("uint8", "float"), ("int8", "int8"),
                                     ("uint8", "uint8"), ("int8", "uint8")])
def test_bit_exact_with_litert(name, mode, io, test_set):
    model = convert(name, mode, io_type=IOType(io)).model
    x = test_set[0][:48]
    assert_predictions_bit_exact(model, x, "edgelite's")


@pytest.mark.parametrize("name", ["tf1_cnn", "keras_cnn"])
def test_tensorflow_int8_models_bit_exact(name, test_set):
    for suffix in ("tf_int8", "tf_int8_io"):           # committed (models/build_quantized.py)
        path = MODELS / f"{name}.{suffix}.tflite"
        model = path.read_bytes()
        assert_predictions_bit_exact(model, test_set[0][:48], path.name)


@pytest.mark.parametrize("name", ["tf1_cnn", "keras_cnn"])
def test_int8_accuracy_and_size_vs_float_and_tensorflow(name, test_set, reference, capsys):
    x, y = test_set
    float_acc = (predict(Interpreter(model_content=convert_detailed(
        MODELS / f"{name}.pb").model), x).argmax(1) == y).mean()
    model = convert(name, "int8").model
    int8_acc = (predict(Interpreter(model_content=model), x).argmax(1) == y).mean()
    tf = reference[name]["tf_int8"]
    tf_acc, tf_size = tf["accuracy"], tf["size"]
    with capsys.disabled():
        print(f"\n{name}: float {float_acc:.4f}  edgelite int8 {int8_acc:.4f}  "
              f"TF int8 {tf_acc:.4f}  size {len(model)} B vs TF {tf_size} B")
    assert int8_acc >= float_acc - 0.01
    assert int8_acc >= tf_acc - 0.5 / len(y)  # the json keeps 6 decimals
    assert len(model) <= 1.05 * tf_size


def test_int8_text_classifier_with_integer_token_inputs(tmp_path):
    """Token ids are plain int32 inputs: calibration feeds them as they are."""
    golden = np.load(MODELS / "text_classifier.golden.npz")
    np.save(tmp_path / "tokens.npy", golden["input"])
    q = QuantizeOptions(mode=QuantMode.INT8, calib=str(tmp_path / "tokens.npy"))
    model = convert_detailed(MODELS / "text_classifier.pb", ConvertOptions(quantize=q)).model
    for x, ref in zip(golden["input"], golden["output"]):
        ours = Interpreter(model_content=model, kernels="reference")
        ours.allocate_tensors()
        ours.set_tensor(ours.get_input_details()[0]["index"], x[None])
        ours.invoke()
        y = ours.get_tensor(ours.get_output_details()[0]["index"])[0]
        assert y.argmax() == ref.argmax() and np.abs(y - ref).max() < 0.02
