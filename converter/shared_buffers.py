"""Identical constants stored once: tensors whose bytes are equal point at one buffer.

An unrolled RNN (Keras ``unroll=True``, TF1 ``static_rnn``) freezes to one copy of the
cell's weights per time step -- identical tensors under different names (a 32-unit LSTM
over 16 steps: 538 KB where TensorFlow's fused file holds 78 KB). The schema lets several
tensors name the same buffer (constants are read-only; LiteRT, TFLite Micro and edgelite's
interpreter all read them in place), so the tensors stay as they are -- own names, types,
shapes and quantization -- and only their bytes are shared, in every subgraph.

Buffers are grouped by (size, BLAKE2b digest) and compared byte for byte before sharing, so a
hash collision can never merge different constants.
"""

from __future__ import annotations

import hashlib

import numpy as np

SMALL_BYTES = 64  # a buffer this small is compared by its bytes directly, not hashed first


def _raw(buffer) -> np.ndarray | None:
    """A buffer's bytes as a flat uint8 view (None: no data)."""
    data = getattr(buffer, "data", None)
    if data is None:
        return None
    raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    return raw if raw.size else None


def _twin(raw: np.ndarray, number: int, seen: dict, kept_raw: dict) -> int | None:
    """The index of a kept buffer with the same bytes as `raw`, else None (and `raw` is
    noted as kept buffer `number`). A small buffer's key is its
    bytes, so an equal key is an equal buffer; a larger one's is its digest, compared byte
    for byte with each candidate."""
    small = raw.size <= SMALL_BYTES
    key = (raw.size, raw.tobytes() if small else hashlib.blake2b(raw, digest_size=16).digest())
    candidates = seen.get(key)
    if candidates is not None:
        if small:
            return candidates[0]
        twin = next((k for k in candidates if np.array_equal(kept_raw[k], raw)), None)
        if twin is not None:
            return twin
    seen.setdefault(key, []).append(number)
    if not small:
        kept_raw[number] = raw
    return None


def share_identical_buffers(model) -> int:
    """Point every tensor of ``model`` (a ``ModelT``) whose buffer repeats an earlier one's
    bytes at that earlier buffer, and drop the repeats; buffer 0 (the empty sentinel) and
    buffers without data stay. Returns how many buffers were dropped."""
    kept = [model.buffers[0]]
    new_index = {0: 0}
    seen: dict[tuple[int, bytes], list[int]] = {}   # (size, key) -> indices into kept
    kept_raw: dict[int, np.ndarray] = {}   # index into kept -> its bytes (large ones)
    for i, buffer in enumerate(model.buffers[1:], start=1):
        raw = _raw(buffer)
        if raw is not None:
            twin = _twin(raw, len(kept), seen, kept_raw)
            if twin is not None:
                new_index[i] = twin
                continue
        new_index[i] = len(kept)
        kept.append(buffer)
    for subgraph in model.subgraphs or ():
        for tensor in subgraph.tensors or ():
            tensor.buffer = new_index[tensor.buffer]
    for entry in getattr(model, "metadata", None) or ():
        entry.buffer = new_index[entry.buffer]
    dropped = len(model.buffers) - len(kept)
    model.buffers = kept
    return dropped
