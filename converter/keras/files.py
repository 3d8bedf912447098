"""Open a Keras model file: the model's config (a dict) and its weights.

Two layouts, told apart by their bytes rather than their extension:
- Keras 3 `.keras`: a zip holding `config.json` and `model.weights.h5` (weights under
  `layers/<attribute>/vars/<i>`, each `vars` group naming its layer in an attribute);
- legacy `.h5` (Keras 2 / tf.keras, Keras 3's `save("x.h5")`): an HDF5 file whose
  `model_config` attribute holds the config JSON and whose `model_weights` group holds one
  group per top-level layer listing its `weight_names`.
h5py is imported only here, when a Keras file is read (the `edgelite[keras]` extra).
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from dataclasses import dataclass

from edgelite.errors import EdgeliteError, ModelFormatError
from edgelite.fileio import read_regular
from ..files import quoted_path

ZIP_MAGIC = b"PK\x03\x04"
HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
MAX_KERAS_BYTES = 2 << 30
MAX_CONFIG_BYTES = 64 << 20


def h5py_module():
    try:
        import h5py
    except ImportError:
        raise EdgeliteError("reading Keras files (.keras, .h5) needs h5py: "
                            "pip install 'edgelite[keras]'") from None
    return h5py


KERAS_SUFFIXES = (".keras", ".h5", ".hdf5")


def is_keras_file(source) -> bool:
    """True for a .keras zip or an HDF5 file (path or bytes, sniffed from the first bytes).
    A file named .keras / .h5 / .hdf5 that is neither is refused here, in one line."""
    if isinstance(source, (bytes, bytearray)):
        head = bytes(source[:8])
    else:
        path = os.fspath(source)
        if not os.path.isfile(path):
            return False
        with open(path, "rb") as f:
            head = f.read(8)
    if head.startswith(ZIP_MAGIC) or head == HDF5_MAGIC:
        return True
    if not isinstance(source, (bytes, bytearray)) and path.lower().endswith(KERAS_SUFFIXES):
        raise ModelFormatError(f"{quoted_path(path)} is neither a .keras archive (zip) nor an "
                               "HDF5 file: not a Keras model file")
    return False


@dataclass
class KerasFile:
    where: str          # the file, as messages name it
    config: dict        # {"class_name": ..., "config": {...}} of the model
    weights: object     # the open h5py root the weights are read from
    legacy: bool        # True: model_weights/<layer> groups with weight_names (Keras 2 .h5)
    keras_version: str = "3"


def open_keras(source) -> KerasFile:
    where = "Keras file" if isinstance(source, (bytes, bytearray)) else quoted_path(source)
    data = bytes(source) if isinstance(source, (bytes, bytearray)) else \
        read_regular(source, where, ModelFormatError, MAX_KERAS_BYTES)
    h5py = h5py_module()
    if data.startswith(ZIP_MAGIC):
        return _open_zip(data, where, h5py)
    try:
        root = h5py.File(io.BytesIO(data), "r")
    except OSError as e:
        raise ModelFormatError(f"{where}: not a readable HDF5 file ({e})") from None
    text = root.attrs.get("model_config")
    if text is None:
        raise ModelFormatError(f"{where} holds weights only (no model_config): save the whole "
                               "model (model.save('m.keras') or model.save('m.h5'))")
    config = _json(text, where)
    if "model_weights" not in root:
        raise ModelFormatError(f"{where} holds no model_weights group: save the whole model "
                               "(model.save('m.h5'))")
    version = root.attrs.get("keras_version", b"2")
    version = version.decode() if isinstance(version, bytes) else str(version)
    return KerasFile(where, config, root["model_weights"], True, version)


def _open_zip(data: bytes, where: str, h5py) -> KerasFile:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = set(archive.namelist())
        if "config.json" not in names:
            raise ModelFormatError(f"{where} is a zip without config.json: not a .keras model")
        if archive.getinfo("config.json").file_size > MAX_CONFIG_BYTES:
            raise ModelFormatError(f"{where}: config.json is larger than "
                                   f"{MAX_CONFIG_BYTES >> 20} MB")
        config = _json(archive.read("config.json"), where)
        if "model.weights.h5" not in names:
            raise ModelFormatError(f"{where} holds no model.weights.h5: save the model with "
                                   "model.save('m.keras')")
        weights = h5py.File(io.BytesIO(archive.read("model.weights.h5")), "r")
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        raise ModelFormatError(f"{where}: unreadable .keras archive ({e})") from None
    return KerasFile(where, config, weights, False)


def _json(text, where: str) -> dict:
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    try:
        config = json.loads(text)
    except ValueError as e:
        raise ModelFormatError(f"{where}: the model config is not JSON ({e})") from None
    if not isinstance(config, dict) or "class_name" not in config:
        raise ModelFormatError(f"{where}: the model config names no model class")
    return config
