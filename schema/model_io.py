"""Serialize a TFLite ``ModelT`` (object API) to .tflite bytes.

The flatc Python generator ignores the schema's ``force_align: 16`` on
``Buffer.data`` and packs byte lists one element at a time, so
``ModelT.Pack`` alone gives unaligned constant data and is slow for real
weights. ``pack_model`` fixes both: buffer data is written as one numpy vector
whose first byte sits on a ``buffer_alignment`` boundary of the output (as
TFLite's own writer does), and the file identifier "TFL3" is set. It packs
with writer.Builder (flatbuffers.Builder's bytes, fewer steps); a model made of
writer.ModelT / SubGraphT / TensorRow / OperatorRow / BufferT objects (the converter's
export) packs in bulk.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import generated_tflite as tfl
from .writer import Builder

FILE_IDENTIFIER = b"TFL3"
SCHEMA_VERSION = 3


def _as_uint8(data: Any) -> np.ndarray:
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    if isinstance(data, (bytes, bytearray, memoryview)):
        return np.frombuffer(bytes(data), dtype=np.uint8)
    return np.asarray(data, dtype=np.uint8).reshape(-1)


def pack_model(model: Any, *, file_identifier: bytes = FILE_IDENTIFIER,
               buffer_alignment: int = 16) -> bytes:
    """Pack a ``generated_tflite.ModelT`` into .tflite bytes.

    ``Buffer.data`` may be bytes, a list of ints or any numpy array (its raw
    little-endian bytes are used); it is converted in place to a uint8 array.
    """
    total = 0
    for buf in model.buffers or []:
        if buf.data is not None:
            buf.data = _as_uint8(buf.data)
            total += buf.data.size + buffer_alignment
    builder = Builder(max(1024, total + 4096), buffer_alignment)
    root = model.Pack(builder)
    builder.Finish(root, file_identifier=file_identifier)
    return bytes(builder.Output())


def has_identifier(data: bytes, file_identifier: bytes = FILE_IDENTIFIER) -> bool:
    """True if ``data`` carries the TFLite file identifier at bytes 4..8."""
    return len(data) >= 8 and bytes(data[4:8]) == file_identifier


__all__ = ["FILE_IDENTIFIER", "SCHEMA_VERSION", "pack_model", "has_identifier"]
