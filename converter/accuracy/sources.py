"""Models and data for compare / eval: load a model (a .tflite, or a GraphDef converted to a
float model) and read input samples and labels. Models run in the converter's one model
runner (runner.py: ModelRunner), one sample at a time.

Data files: .npy (one input; first axis = samples) or .npz (arrays named after the model
inputs, or an array "x", or a single array). Labels: .npy, or .npz with "y" / "labels" (or a
single array); class indices (N,) or one-hot (N, C). Arrays may be passed directly too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, Union

import numpy as np

from edgelite.errors import DTypeError, EdgeliteError
from edgelite.fileio import read_regular
from edgelite.names import quoted
from ..files import quoted_path
from ..keras.files import is_keras_file
from ..runner import ModelRunner
from ..sample_data import names_list, pick_inputs, read_arrays

GRAPHDEF_EXTENSIONS = (".pb", ".pbtxt")
ModelSource = Union[str, os.PathLike, bytes]
DataSource = Union[str, os.PathLike, np.ndarray, Mapping[str, np.ndarray]]


@dataclass
class LoadedModel:
    label: str       # the path (or "<bytes>") for tables
    content: bytes   # .tflite bytes
    converted: bool  # True: converted from a GraphDef to a float model here

    def runner(self, keep_all: bool = False) -> ModelRunner:
        """The model in the converter's model runner (`keep_all`: every tensor readable)."""
        return ModelRunner(self.content, keep_all, self.label)


def load_model(source: ModelSource, label: str | None = None, inputs=None, outputs=None,
               input_shapes=None) -> LoadedModel:
    """A .tflite path or bytes as is; a .pb/.pbtxt path (or GraphDef bytes), a SavedModel
    or a Keras file converted to a float .tflite with `inputs` / `outputs` / `input_shapes` as in `edgelite convert`."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        content = bytes(source)
        if _is_tflite(content):
            return LoadedModel(label or "<bytes>", content, False)
        return _convert(content, label or "<bytes>", inputs, outputs, input_shapes)
    path = os.fspath(source)
    if path.lower().endswith(GRAPHDEF_EXTENSIONS) or os.path.isdir(path) or \
            is_keras_file(path):  # or a SavedModel, or a Keras file (.keras / .h5)
        return _convert(path, label or path, inputs, outputs, input_shapes)
    content = read_regular(path, f"model {quoted_path(path)}")
    if not path.lower().endswith(".tflite") and not _is_tflite(content):
        raise EdgeliteError(f"{quoted_path(path)} is neither a .tflite model (no 'TFL3' "
                            "identifier) nor a GraphDef (.pb / .pbtxt) nor a Keras file")
    return LoadedModel(label or path, content, False)


def _is_tflite(content: bytes) -> bool:
    return len(content) >= 8 and content[4:8] == b"TFL3"


def _convert(source, label: str, inputs, outputs, input_shapes) -> LoadedModel:
    from .. import ConvertOptions, convert_detailed
    options = ConvertOptions(inputs=inputs, outputs=outputs, input_shapes=input_shapes or {})
    return LoadedModel(label, convert_detailed(source, options).model, True)


def read_data(data: DataSource) -> tuple[np.ndarray | dict[str, np.ndarray], str]:
    """(array or {name: array}, a description for messages); reads a path once, through the
    one data reader (sample_data.read_arrays: checked before anything is allocated)."""
    if isinstance(data, (str, os.PathLike)):
        path = os.fspath(data)
        return read_arrays(path, "input data"), f"input data {quoted_path(path)}"
    return data, "the data"


def load_inputs(data: DataSource, input_names: list[str], what: str | None = None,
                aliases: Mapping[str, str] | None = None) -> dict[str, np.ndarray]:
    """{input name: array whose first axis is the sample axis}, all with the same length and
    free of NaN / inf."""
    if what is None:
        data, what = read_data(data)
    arrays = pick_inputs(data, input_names, what, aliases)
    for name, a in arrays.items():
        if a.dtype.kind == "f":
            bad = np.flatnonzero(~np.isfinite(a.reshape(len(a), -1)).all(axis=1))
            if bad.size:
                raise EdgeliteError(f"{what}: {bad.size} sample(s) for input {quoted(name)} "
                                    f"hold NaN or inf (indices {bad[:10].tolist()}); remove "
                                    "them")
    return arrays


def sample_at(arrays: Mapping[str, np.ndarray], i: int) -> dict[str, np.ndarray]:
    """Sample `i` of {input name: array whose first axis is the sample axis}."""
    return {name: a[i] for name, a in arrays.items()}


def load_labels(labels: DataSource) -> np.ndarray:
    """Class indices (N,) int64 from indices or one-hot rows."""
    what = "the labels"
    if isinstance(labels, (str, os.PathLike)):
        what = f"labels {quoted_path(os.fspath(labels))}"
        labels = read_arrays(os.fspath(labels), "labels")
    if not isinstance(labels, np.ndarray) and hasattr(labels, "keys"):
        keys = list(labels.keys())
        key = next((k for k in ("y", "labels", "label") if k in keys),
                   keys[0] if len(keys) == 1 else None)
        if key is None:
            raise EdgeliteError(f"{what} holds arrays {names_list(keys)}; expected one named "
                                "'y' or 'labels'")
        labels = labels[key]
    y = np.asarray(labels)
    if y.ndim == 2 and y.shape[1] > 1:
        y = y.argmax(axis=1)  # one-hot
    y = y.reshape(-1) if y.ndim == 2 else y
    if y.ndim != 1 or y.dtype.kind not in "iub" and not (
            y.dtype.kind == "f" and np.all(np.mod(y, 1) == 0)):
        raise DTypeError(f"{what}: expected class indices (N,) or one-hot (N, C), got "
                         f"{y.dtype.name} {list(y.shape)}")
    return y.astype(np.int64)
