"""Write small Keras files in tests, without Keras: a Keras 3 `.keras` zip (config.json +
model.weights.h5 with positional `vars`) or a legacy `.h5`, from a config and weights."""

from __future__ import annotations

import io
import json
import zipfile

import h5py
import numpy as np

from edgelite.converter import convert_detailed


def _tensor(layer: str) -> dict:
    return {"class_name": "__keras_tensor__", "config": {"keras_history": [layer, 0, 0]}}


def functional(chain, input_shape=(None, 4), dtype="float32") -> dict:
    """A Keras 3 Functional config: input 'x' then `chain` [(name, class, config)] in a row."""
    layers = [{"class_name": "InputLayer", "name": "x", "inbound_nodes": [],
               "config": {"name": "x", "batch_shape": list(input_shape), "dtype": dtype}}]
    previous = "x"
    for name, cls, cfg in chain:
        layers.append({"module": "keras.layers", "class_name": cls, "name": name,
                       "registered_name": None, "config": cfg,
                       "inbound_nodes": [{"args": [_tensor(previous)], "kwargs": {}}]})
        previous = name
    return {"class_name": "Functional",
            "config": {"name": "model", "layers": layers, "input_layers": [["x", 0, 0]],
                       "output_layers": [[previous, 0, 0]]}}


def dense_model(activation="linear", units=3):
    config = functional([("dense", "Dense", {"name": "dense", "units": units,
                                             "activation": activation, "use_bias": True})])
    kernel = np.arange(4 * units, dtype=np.float32).reshape(4, units) / 10
    return config, {"dense": [kernel, np.ones(units, np.float32)]}


def keras_bytes(config: dict, weights: dict) -> bytes:
    """A .keras archive: weights {layer name: [arrays]} under layers/<name>/vars/<i>."""
    h5 = io.BytesIO()
    with h5py.File(h5, "w") as f:
        for name, arrays in weights.items():
            group = f.create_group(f"layers/{name}/vars")
            group.attrs["name"] = name
            for i, a in enumerate(arrays):
                group.create_dataset(str(i), data=a)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("config.json", json.dumps(config))
        z.writestr("model.weights.h5", h5.getvalue())
    return out.getvalue()


def legacy_bytes(config: dict, weights: dict, keras_version: str = "2.15.0") -> bytes:
    """A Keras 2 .h5: weights {layer: {"layer/kernel:0": array}} in model_weights."""
    out = io.BytesIO()
    with h5py.File(out, "w") as f:
        f.attrs["model_config"] = json.dumps(config)
        f.attrs["keras_version"] = keras_version
        root = f.create_group("model_weights")
        for layer, named in weights.items():
            group = root.create_group(layer)
            group.attrs["weight_names"] = [n.encode() for n in named]
            for n, a in named.items():
                group.create_dataset(n, data=a)
    return out.getvalue()


def convert_config(tmp_path, config: dict, weights: dict, name="m.keras", **options):
    path = tmp_path / name
    path.write_bytes(keras_bytes(config, weights))
    from edgelite.converter import ConvertOptions
    return convert_detailed(str(path), ConvertOptions(**options))
