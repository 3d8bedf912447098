"""The layer registry (converter/keras/layers/): every layer class it reads is in a
committed Keras file whose outputs test_walker.py compares with Keras', and what it does
not read is refused in one line naming the layer and its class."""

from __future__ import annotations

import json
import zipfile

import h5py
import pytest

from edgelite.converter.keras.layers import REGISTRY, core, ops
from edgelite.errors import UnsupportedOpError
from tests.conftest import MODELS
from tests.converter.keras.kfiles import convert_config, dense_model, functional

KERAS = MODELS / "keras"


def _classes(config, into: set, op_into: set) -> None:
    if isinstance(config, dict):
        if "class_name" in config and "inbound_nodes" in config:
            module = config.get("module") or ""
            (op_into if module.startswith("keras.src.ops") else into).add(config["class_name"])
        for v in config.values():
            _classes(v, into, op_into)
    elif isinstance(config, list):
        for v in config:
            _classes(v, into, op_into)


def _committed_classes():
    layers, op_layers = set(), set()
    for path in KERAS.glob("*.keras"):
        _classes(json.loads(zipfile.ZipFile(path).read("config.json")), layers, op_layers)
    for path in KERAS.glob("*.h5"):
        with h5py.File(path, "r") as f:
            _classes(json.loads(f.attrs["model_config"]), layers, op_layers)
    return layers, op_layers


def test_every_layer_rule_runs_on_a_committed_keras_file():
    layers, op_layers = _committed_classes()
    assert not set(REGISTRY) - layers, sorted(set(REGISTRY) - layers)
    assert not set(ops.RULES) - op_layers, sorted(set(ops.RULES) - op_layers)
    assert {cls for _, cls in core.APPLICATION_LAYERS} <= layers


@pytest.mark.parametrize("cls, message", [
    ("Lambda", "layer 'odd' (Lambda): a Lambda layer's Python code is not in the file; "
               "export the model with TensorFlow (model.export('saved_dir'))"),
    ("MyBlock", "layer 'odd' (MyBlock): not a built-in Keras layer edgelite reads"),
])
def test_lambda_and_custom_layers_are_refused_by_name(tmp_path, cls, message):
    config = functional([("odd", cls, {"name": "odd"})])
    with pytest.raises(UnsupportedOpError, match=message.replace("(", r"\(").replace(")", r"\)")):
        convert_config(tmp_path, config, {})


def test_registered_custom_class_is_refused_even_with_a_builtin_name(tmp_path):
    config = functional([("dense", "Dense", {"name": "dense", "units": 2})])
    config["config"]["layers"][1]["registered_name"] = "my_pkg>Dense"
    with pytest.raises(UnsupportedOpError, match=r"layer 'dense' \(my_pkg>Dense\)"):
        convert_config(tmp_path, config, {})


def test_a_builtin_name_from_another_module_is_refused(tmp_path):
    config = functional([("dense", "Dense", {"name": "dense", "units": 2})])
    config["config"]["layers"][1]["module"] = "__main__"
    with pytest.raises(UnsupportedOpError, match=r"layer 'dense' \(Dense\): not a built-in"):
        convert_config(tmp_path, config, {})


def test_unknown_activation_is_refused(tmp_path):
    config, weights = dense_model(activation="sparsemax")
    with pytest.raises(UnsupportedOpError, match=r"layer 'dense' \(Dense\): activation "
                                                  r"'sparsemax'"):
        convert_config(tmp_path, config, weights)


def test_an_unknown_tf_function_is_refused_by_name(tmp_path):
    config = functional([("op", "TFOpLambda", {"name": "op", "function": "image.resize"})])
    with pytest.raises(UnsupportedOpError, match=r"layer 'op' \(TFOpLambda\): tf.image.resize "
                                                  r"is not a function edgelite reads"):
        convert_config(tmp_path, config, {})
