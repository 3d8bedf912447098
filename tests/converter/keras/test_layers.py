"""The layer registry (converter/keras/layers/): every layer class it reads is in a
committed Keras file whose outputs test_walker.py compares with Keras', and what it does
not read is refused in one line naming the layer and its class."""

from __future__ import annotations

import json
import zipfile

import h5py
import numpy as np
import pytest

from edgelite.converter.keras.layers import OP_RULES, REGISTRY, core
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
    assert not set(OP_RULES) - op_layers, sorted(set(OP_RULES) - op_layers)
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


def _op_layer(cls: str, args: list, cfg: dict | None = None, dtype="float32"):
    """A Keras 3 model: input 'x' [batch, 3, 4] of `dtype` -> keras.ops layer `cls` called
    with args (the input written as "x") and ReLU after it."""
    config = functional([("relu", "ReLU", {"name": "relu"})], (None, 3, 4), dtype)
    tensor = config["config"]["layers"][1]["inbound_nodes"][0]["args"][0]
    config["config"]["layers"].insert(1, {
        "module": "keras.src.ops.numpy", "class_name": cls, "name": "op",
        "registered_name": cls, "config": {"name": "op", **(cfg or {})},
        "inbound_nodes": [{"args": [tensor if a == "x" else a for a in args], "kwargs": {}}]})
    config["config"]["layers"][2]["inbound_nodes"][0]["args"][0] = \
        {"class_name": "__keras_tensor__", "config": {"keras_history": ["op", 0, 0]}}
    return config


def _run_config(tmp_path, config, x):
    from tests.support import run_edgelite
    return run_edgelite(convert_config(tmp_path, config, {}).model, [x])[0]


def test_constant_arguments_and_indexing(tmp_path):
    """Keras 3's inline constants (`__tensor__`, `__numpy__`) as operands, and x[key] with
    ints, slices, None and an Ellipsis, against numpy."""
    x = np.linspace(-2, 2, 24, dtype=np.float32).reshape(2, 3, 4)[:1]
    table = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    for kind, value in (("__tensor__", table), ("__numpy__", table.astype(np.float64))):
        const = {"class_name": kind, "config": {"value": value.tolist(),
                                                "dtype": str(value.dtype)}}
        got = _run_config(tmp_path, _op_layer("Add", ["x", const]), x)
        np.testing.assert_allclose(got, np.maximum(x + table, 0), rtol=1e-6)

    def sl(start=None, stop=None, step=None):
        return {"class_name": "__slice__", "config": {"start": start, "stop": stop,
                                                      "step": step}}
    ellipsis = {"class_name": "__ellipsis__", "config": {}}
    for key, want in (([sl(), 0], x[:, 0]), ([sl(), None, sl(1, None, 2)], x[:, None, 1::2]),
                      ([ellipsis, sl(-3, -1)], x[..., -3:-1]), ([sl(), -1, sl(None, None, -1)],
                                                                 x[:, -1, ::-1])):
        got = _run_config(tmp_path, _op_layer("GetItem", ["x", key]), x)
        np.testing.assert_array_equal(got, np.maximum(want, 0))


@pytest.mark.parametrize("args, message", [
    (["x", {"class_name": "__tensor__", "config": {"value": [1.0], "dtype": "complex64"}}],
     r"a constant call argument has dtype complex64"),
    (["x", {"class_name": "__numpy__", "config": {"value": [0.5], "dtype": "float64"}}],
     r"layer 'op' \(Add\): argument 1 is a float64 constant on a int32 tensor"),
    (["x", [{"class_name": "__slice__", "config": {"start": 0, "stop": 1, "step": 0}}]],
     r"layer 'op' \(GetItem\): slices with step 0"),
    (["x", [{"class_name": "__slice__", "config": {}}, 7]],
     r"layer 'op' \(GetItem\): index 7 is out of range for axis 1 of size 3"),
    (["x", [0, 0, 0, 0]], r"layer 'op' \(GetItem\): indexes 4 axes of a rank-3 tensor"),
])
def test_bad_constants_and_keys_are_refused_by_name(tmp_path, args, message):
    from edgelite.errors import EdgeliteError
    cls = "GetItem" if "GetItem" in message else "Add"
    dtype = "int32" if "int32" in message else "float32"
    with pytest.raises(EdgeliteError, match=message):
        convert_config(tmp_path, _op_layer(cls, args, dtype=dtype), {})
