"""Keras files (models/keras/, written by models/builders/keras_files.py and
keras_applications.py) converted without TensorFlow: outputs within 1e-5 of Keras' own,
LiteRT agreeing, op counts at most those of TensorFlow's converter (from_keras_model,
recorded when the files were built); int8 models bit-exact with LiteRT."""

from __future__ import annotations

import json

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, QuantizeOptions, convert_detailed
from edgelite.interpreter.loader.model import load_model
from tests.conftest import MODELS
from tests.support import assert_close, run_edgelite
from tests.support import run_litert as run_litert_ref
KERAS = MODELS / "keras"
META = {**json.loads((KERAS / "keras_files.json").read_text()),
        **json.loads((KERAS / "keras_applications.json").read_text())}


def _golden(stem: str):
    g = np.load(KERAS / f"{stem}.golden.npz")
    ins = [g[k] for k in sorted(k for k in g.files if k.startswith("in_"))]
    outs = [g[f"out_{j}"] for j in range(sum(k.startswith("out_") for k in g.files))]
    return ins, outs


@pytest.mark.parametrize("stem", sorted(META))
def test_matches_keras_and_litert(stem):
    result = convert_detailed(str(KERAS / META[stem]["file"]))
    ins, outs = _golden(stem)
    n_ops = sum(len(sg.operators) for sg in load_model(result.model).subgraphs)
    assert n_ops <= META[stem]["tf_ops"], (n_ops, result.graph.op_counts())
    for i in range(ins[0].shape[0]):
        feeds = [x[i:i + 1] for x in ins]
        ours = run_edgelite(result.model, feeds)
        assert len(ours) == len(outs)
        for got, want in zip(ours, outs):
            assert_close(got, want[i:i + 1], rtol=1e-5, atol_factor=1e-5)
        for got, ref in zip(ours, run_litert_ref(result.model, feeds, "default")):
            assert_close(got, ref, rtol=1e-5, atol_factor=1e-5)


INPUT_NAMES = {"mobilenetv2_035": ["input_layer"], "cnn_legacy": ["image"],
               "merge_multi_io": ["a", "b"], "fer_emotion": ["input_1"], "rnn_lstm": ["seq"],
               "attention": ["seq"], "text_encoder": ["tokens"]}


@pytest.mark.parametrize("stem", sorted(INPUT_NAMES))
def test_int8_runs_in_litert_bit_exact(stem, tmp_path):
    ins, outs = _golden(stem)
    path = tmp_path / "calib.npz"   # arrays named after the input layers
    names = INPUT_NAMES.get(stem, ["input"])
    np.savez(path, **dict(zip(names, ins)))
    options = ConvertOptions(quantize=QuantizeOptions(calib=str(path)))
    result = convert_detailed(str(KERAS / META[stem]["file"]), options)
    assert result.graph.op_counts().get("DEQUANTIZE", 0) <= len(outs)
    for i in range(ins[0].shape[0]):
        feeds = [x[i:i + 1] for x in ins]
        ours = run_edgelite(result.model, feeds, kernels="reference")
        for got, ref, want in zip(ours, run_litert_ref(result.model, feeds), outs):
            np.testing.assert_array_equal(got, ref)
            # int8 of a calibrated model follows the float outputs
            cos = float(np.dot(got.ravel(), want[i].ravel()) /
                        (np.linalg.norm(got) * np.linalg.norm(want[i]) + 1e-12))
            assert cos > 0.95, cos


def test_unknown_input_dims_are_fixed_by_input_shapes(tmp_path):
    """A [batch, None, 4] input: refused naming --input-shape, converted with it."""
    from edgelite.errors import ShapeError
    from tests.converter.keras.kfiles import convert_config, functional
    config = functional([("dense", "Dense", {"name": "dense", "units": 2})], (None, None, 4))
    kernel = np.arange(8, dtype=np.float32).reshape(4, 2) / 8
    weights = {"dense": [kernel, np.array([0.5, -0.5], np.float32)]}
    with pytest.raises(ShapeError, match=r"layer 'dense' \(Dense\): input shape \[\?, \?, 4\] "
                                         r"has unknown dimensions: give the model's input a "
                                         r"full shape \(--input-shape NAME=\.\.\.\)"):
        convert_config(tmp_path, config, weights)
    result = convert_config(tmp_path, config, weights, input_shapes={"x": (1, 3, 4)})
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(1, 3, 4)
    (y,) = run_edgelite(result.model, [x])
    np.testing.assert_allclose(y, x @ kernel + weights["dense"][1], rtol=1e-6)


def test_a_layer_reading_a_tensor_no_layer_makes_is_named(tmp_path):
    from edgelite.errors import GraphError
    from tests.converter.keras.kfiles import convert_config, functional
    config = functional([("dense", "Dense", {"name": "dense", "units": 2})])
    node = config["config"]["layers"][1]["inbound_nodes"][0]
    node["args"][0]["config"]["keras_history"] = ["ghost", 0, 0]
    with pytest.raises(GraphError, match=r"model 'model': layers 'dense' read tensors no "
                                         r"layer makes"):
        convert_config(tmp_path, config, {"dense": [np.zeros((4, 2), np.float32),
                                                    np.zeros(2, np.float32)]})


@pytest.mark.slow
def test_large_applications_match_keras():
    """EfficientNetB0 / ResNet50 / DenseNet121 (too big to commit): built into a folder by
    `python -m models.builders.keras_applications --all DIR` and named here by
    EDGELITE_KERAS_APPS=DIR."""
    import os
    from pathlib import Path
    folder = os.environ.get("EDGELITE_KERAS_APPS")
    if not folder:
        pytest.skip("EDGELITE_KERAS_APPS names no folder of built keras.applications files")
    meta = json.loads((Path(folder) / "keras_applications.json").read_text())
    for stem, entry in sorted(meta.items()):
        result = convert_detailed(str(Path(folder) / entry["file"]))
        n_ops = sum(len(sg.operators) for sg in load_model(result.model).subgraphs)
        assert n_ops <= entry["tf_ops"], (stem, n_ops, entry["tf_ops"])
        g = np.load(Path(folder) / f"{stem}.golden.npz")
        for i in range(g["in_0"].shape[0]):
            (y,) = run_edgelite(result.model, [g["in_0"][i:i + 1]])
            want = g["out_0"][i:i + 1]
            # deep random-weight nets: TF's own float file is 1.2e-4 off Keras on EfficientNetB0
            assert np.max(np.abs(y - want)) <= 1e-4 * np.max(np.abs(want)), stem


@pytest.mark.parametrize("mutate, message", [
    (lambda c: c["config"]["layers"][1]["config"].update(units="many"),
     r"layer 'dense' \(Dense\): malformed config or weights \(ValueError"),
    (lambda c: c["config"].update(layers=[3]), r"malformed Keras model config \("),
    (lambda c: c["config"]["layers"][1]["inbound_nodes"][0]["args"][0]["config"].update(
        keras_history=["x", 0, 5]), r"a call reads output 5 of layer 'x', which has 1"),
])
def test_malformed_configs_are_one_line(tmp_path, mutate, message):
    from edgelite.errors import EdgeliteError
    from tests.converter.keras.kfiles import convert_config, dense_model
    config, weights = dense_model()
    mutate(config)
    with pytest.raises(EdgeliteError, match=message):
        convert_config(tmp_path, config, weights)
