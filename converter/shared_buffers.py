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


def share_identical_buffers(model) -> int:
    """Point every tensor of ``model`` (a ``ModelT``) whose buffer repeats an earlier one's
    bytes at that earlier buffer, and drop the repeats; buffer 0 (the empty sentinel) and
    buffers without data stay. Returns how many buffers were dropped."""
    kept = [model.buffers[0]]
    new_index = {0: 0}
    seen: dict[tuple[int, bytes], list[int]] = {}   # (size, digest) -> indices into kept
    for i, buffer in enumerate(model.buffers[1:], start=1):
        raw = _raw(buffer)
        if raw is not None:
            # small buffers are their own key (their bytes); larger ones by digest
            key = (raw.size, raw.tobytes() if raw.size <= SMALL_BYTES else
                   hashlib.blake2b(raw, digest_size=16).digest())
            twin = next((k for k in seen.get(key, ()) if np.array_equal(_raw(kept[k]), raw)),
                        None)
            if twin is not None:
                new_index[i] = twin
                continue
            seen.setdefault(key, []).append(len(kept))
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
