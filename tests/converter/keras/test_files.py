"""converter/keras/files.py: Keras files told by their bytes, and every malformed one
refused in one line."""

from __future__ import annotations

import io
import json
import sys
import zipfile

import h5py
import numpy as np
import pytest

from edgelite.converter import convert
from edgelite.converter.keras.files import is_keras_file
from edgelite.errors import EdgeliteError, ModelFormatError
from tests.conftest import MODELS
from tests.converter.keras.kfiles import dense_model, keras_bytes, legacy_bytes
from tests.support import run_edgelite


def _zip(**members) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in members.items():
            z.writestr(name.replace("_", ".", 1) if name.startswith("config") else name, data)
    return out.getvalue()


def test_keras_files_are_told_by_their_bytes(tmp_path):
    config, weights = dense_model()
    path = tmp_path / "model.bin"        # any extension
    path.write_bytes(keras_bytes(config, weights))
    assert is_keras_file(path)
    assert is_keras_file(MODELS / "keras" / "cnn_legacy.h5")
    assert not is_keras_file(MODELS / "tf1_cnn.pb")
    assert not is_keras_file(tmp_path / "missing.keras")
    x = np.array([[1, 2, 3, 4]], np.float32)
    (y,) = run_edgelite(convert(str(path)), [x])
    np.testing.assert_allclose(y, x @ weights["dense"][0] + weights["dense"][1], rtol=1e-6)


def _h5(**attrs) -> bytes:
    out = io.BytesIO()
    with h5py.File(out, "w") as f:
        for k, v in attrs.items():
            f.attrs[k] = v
        f.create_group("layers")
    return out.getvalue()


@pytest.mark.parametrize("data, message", [
    (_h5(), "holds weights only (no model_config): save the whole model"),
    (_h5(model_config=json.dumps(dense_model()[0])), "holds no model_weights group"),
    (_h5(model_config="{not json"), "the model config is not JSON"),
    (_zip(model_weights_h5=b""), "is a zip without config.json: not a .keras model"),
    (_zip(config_json=json.dumps(dense_model()[0])), "holds no model.weights.h5"),
    (_zip(config_json=json.dumps({"layers": []}), **{"model.weights.h5": b""}),
     "the model config names no model class"),
    (b"PK\x03\x04 truncated", "unreadable .keras archive"),
    (b"\x89HDF\r\n\x1a\n truncated", "not a readable HDF5 file"),
    (b"", "is neither a .keras archive (zip) nor an HDF5 file"),
    (b"node { name: 'x' }", "is neither a .keras archive (zip) nor an HDF5 file"),
])
def test_malformed_files_are_refused_in_one_line(tmp_path, data, message):
    path = tmp_path / "bad.keras"
    path.write_bytes(data)
    with pytest.raises(ModelFormatError, match=message.replace("(", r"\(").replace(")", r"\)")):
        convert(str(path))


def test_a_sequential_without_an_input_shape_is_refused(tmp_path):
    config = {"class_name": "Sequential",
              "config": {"name": "s", "layers": [{"class_name": "Dense",
                                                  "config": {"name": "d", "units": 2}}]}}
    path = tmp_path / "m.keras"
    path.write_bytes(keras_bytes(config, {}))
    with pytest.raises(ModelFormatError, match="names no input shape: build it with an Input"):
        convert(str(path))


def test_missing_h5py_is_one_line(tmp_path, monkeypatch):
    config, weights = dense_model()
    path = tmp_path / "m.h5"
    path.write_bytes(legacy_bytes(config, {}))
    monkeypatch.setitem(sys.modules, "h5py", None)   # import h5py raises ImportError
    with pytest.raises(EdgeliteError, match=r"needs h5py: pip install 'edgelite\[keras\]'"):
        convert(str(path))


def test_cli_converts_keras_files_and_refuses_in_one_line(tmp_path):
    from tests.support.cli import error_line, invoke
    from tests.converter.keras.kfiles import functional
    out = tmp_path / "m.tflite"
    calib = tmp_path / "calib.npy"   # one input: a plain array
    np.save(calib, np.load(MODELS / "keras" / "cnn_legacy.golden.npz")["in_0"])
    result = invoke("convert", MODELS / "keras" / "cnn_legacy.h5", "-o", out, "--quantize",
                    "int8", "--calib", calib)
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output and out.stat().st_size > 0
    bad = tmp_path / "lambda.keras"
    bad.write_bytes(keras_bytes(functional([("odd", "Lambda", {"name": "odd"})]), {}))
    line = error_line(invoke("convert", bad, "-o", tmp_path / "x.tflite"))
    assert line == ("error: layer 'odd' (Lambda): a Lambda layer's Python code is not in the "
                    "file; export the model with TensorFlow (model.export('saved_dir')) and "
                    "convert that directory")


def test_compare_and_eval_read_a_keras_file_as_the_float_model():
    from edgelite.converter.accuracy.sources import load_model
    loaded = load_model(MODELS / "keras" / "fer_emotion.h5")
    assert loaded.converted
    g = np.load(MODELS / "keras" / "fer_emotion.golden.npz")
    (y,) = run_edgelite(loaded.content, [g["in_0"][:1]])
    np.testing.assert_allclose(y, g["out_0"][:1], rtol=1e-5, atol=1e-6)
