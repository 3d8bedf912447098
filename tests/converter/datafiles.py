"""Small hostile .npy bytes for tests of the data reader and of the commands using it."""

from __future__ import annotations

import io

import numpy as np


def npy_header(descr="<f4", shape=(10**12,), fortran=False, version=1) -> bytes:
    """A .npy header (magic, length, dict text padded to 64 bytes) declaring anything."""
    text = f"{{'descr': {descr!r}, 'fortran_order': {fortran}, 'shape': {shape}, }}".encode()
    width = 2 if version == 1 else 4
    pad = -(6 + 2 + width + len(text) + 1) % 64
    text += b" " * pad + b"\n"
    return (b"\x93NUMPY" + bytes([version, 0]) + len(text).to_bytes(width, "little") + text)


def npy_bytes(x, allow_pickle=False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, x, allow_pickle=allow_pickle)
    return buf.getvalue()
