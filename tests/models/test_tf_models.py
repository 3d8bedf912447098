"""TensorFlow's own .tflite files (models/*.tf.tflite) in edgelite vs LiteRT and goldens."""

import json
from pathlib import Path

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from tests.support import assert_close, litert_interpreter


MODELS_DIR = Path(__file__).resolve().parents[2] / "models"
NAMES = ["tf1_cnn", "keras_cnn"]
GOLDEN_ATOL = 1e-5  # what build_models.py allows between LiteRT and TensorFlow


def _files(name):
    """TF's .tflite and TF's outputs (committed; models/build_models.py makes them)."""
    model, golden = MODELS_DIR / f"{name}.tf.tflite", MODELS_DIR / f"{name}.golden.npz"
    return model.read_bytes(), np.load(golden)


@pytest.mark.parametrize("name", NAMES)
def test_tf_tflite_matches_litert_and_golden(name):
    model, golden = _files(name)
    ours = Interpreter(model_content=model)
    ours.allocate_tensors()
    ref = litert_interpreter(model)
    (inp,) = ours.get_input_details()
    (out,) = ours.get_output_details()
    for i in range(len(golden["input"])):
        x = golden["input"][i:i + 1]
        for interp in (ours, ref):
            interp.set_tensor(inp["index"], x)
            interp.invoke()
        y = ours.get_tensor(out["index"])
        assert_close(y, ref.get_tensor(out["index"]))
        np.testing.assert_allclose(y, golden["output"][i:i + 1], atol=GOLDEN_ATOL)


@pytest.mark.parametrize("name", NAMES)
def test_tf_tflite_batched_after_resize(name):
    model, golden = _files(name)
    x = golden["input"]
    interp = Interpreter(model_content=model)
    interp.resize_tensor_input(0, x.shape)
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    y = interp.get_tensor(interp.get_output_details()[0]["index"])
    np.testing.assert_allclose(y, golden["output"], atol=GOLDEN_ATOL)
    assert (y.argmax(axis=1) == golden["labels"]).mean() > 0.9


@pytest.mark.parametrize("name", NAMES)
def test_tf_tflite_ops_and_details(name):
    model, _ = _files(name)
    ours = Interpreter(model_content=model)
    ours.allocate_tensors()
    ref = litert_interpreter(model)
    assert [d["op_name"] for d in ours._get_ops_details()] == \
        [d["op_name"] for d in ref._get_ops_details()]
    info_path = MODELS_DIR / f"{name}.tf_ops.json"
    if info_path.exists():
        info = json.loads(info_path.read_text())
        assert [d["op_name"] for d in ours._get_ops_details()] == info["ops"]
    mine_all = ours.get_tensor_details()
    # LiteRT appends unnamed kernel temporaries (e.g. MEAN's accumulator) after the file's
    # tensors; compare the file's tensors only.
    theirs_all = [d for d in ref.get_tensor_details() if d["index"] < len(mine_all)]
    for mine, theirs in zip(mine_all, theirs_all, strict=True):
        assert mine["name"] == theirs["name"] and mine["index"] == theirs["index"]
        assert mine["dtype"] is theirs["dtype"]
        np.testing.assert_array_equal(mine["shape"], theirs["shape"])
        np.testing.assert_array_equal(mine["shape_signature"], theirs["shape_signature"])
