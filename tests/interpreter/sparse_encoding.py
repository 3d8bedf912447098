"""Encode a dense array in TFLite's sparse format (test helper; the inverse of sparsity.py).

Written from the format's definition (tflite.fbs, SparsityParameters), level by level like
TFLite's DenseToSparse: a block dim splits original dim ``block_map[j]`` into (outer,
inner); the levels are the ``n + k`` dims in ``traversal_order``; a DENSE level keeps every
coordinate, a SPARSE_CSR level only those whose sub-tensor holds a nonzero.

    enc = encode(dense, order=(0, 1, 2), block_map=(1,), blocks=(4,), csr=(False, True, False))
    enc.record()                      # model_objects.Sparsity, for sparsity.densify
    enc.flatbuffer(np.uint8)          # tfl.SparsityParametersT, for ModelBuilder.tensor
    enc.values                        # the stored values, in storage order
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.interpreter.loader.model_objects import DimensionMetadata, Sparsity
from edgelite.schema import generated_tflite as tfl

INDEX_VECTORS = {np.int32: (tfl.SparseIndexVector.Int32Vector, tfl.Int32VectorT),
                 np.uint16: (tfl.SparseIndexVector.Uint16Vector, tfl.Uint16VectorT),
                 np.uint8: (tfl.SparseIndexVector.Uint8Vector, tfl.Uint8VectorT)}


@dataclass
class Encoded:
    order: tuple[int, ...]
    block_map: tuple[int, ...]
    levels: list  # per level: (is_csr, dense_size, segments or None, indices or None)
    values: np.ndarray

    def record(self) -> Sparsity:
        dims = tuple(DimensionMetadata(csr, size, None if seg is None else np.array(seg, np.int64),
                                       None if idx is None else np.array(idx, np.int64))
                     for csr, size, seg, idx in self.levels)
        return Sparsity(self.order, self.block_map, dims)

    def flatbuffer(self, index_type=np.int32):
        code, cls = INDEX_VECTORS[index_type]
        sp = tfl.SparsityParametersT()
        sp.traversalOrder = list(self.order)
        sp.blockMap = list(self.block_map)
        sp.dimMetadata = []
        for csr, size, seg, idx in self.levels:
            dm = tfl.DimensionMetadataT()
            dm.format = int(csr)
            dm.denseSize = 0 if csr else size
            if csr:
                dm.arraySegmentsType = dm.arrayIndicesType = code
                dm.arraySegments, dm.arrayIndices = cls(), cls()
                dm.arraySegments.values = [int(v) for v in seg]
                dm.arrayIndices.values = [int(v) for v in idx]
            sp.dimMetadata.append(dm)
        return sp


def encode(dense: np.ndarray, order, csr, block_map=(), blocks=()) -> Encoded:
    dense = np.asarray(dense)
    n, k = dense.ndim, len(block_map)
    # split each blocked dim d into (outer, inner), then move the inner axes last
    split_shape, inner_axes, axis = [], {}, 0
    for d in range(n):
        if d in block_map:
            b = blocks[block_map.index(d)]
            split_shape += [dense.shape[d] // b, b]
            inner_axes[d] = axis + 1
            axis += 2
        else:
            split_shape.append(dense.shape[d])
            axis += 1
    outer_axes = [a for a in range(axis) if a not in inner_axes.values()]
    expanded = dense.reshape(split_shape).transpose(
        outer_axes + [inner_axes[d] for d in block_map])
    levels_array = expanded.transpose(order)  # axes in storage order
    positions: list[tuple[int, ...]] = [()]
    levels = []
    for level in range(n + k):
        size = levels_array.shape[level]
        if not csr[level]:
            positions = [p + (c,) for p in positions for c in range(size)]
            levels.append((False, size, None, None))
            continue
        segments, indices, nxt = [0], [], []
        for p in positions:
            for c in range(size):
                if np.any(levels_array[p + (c,)] != 0):
                    indices.append(c)
                    nxt.append(p + (c,))
            segments.append(len(indices))
        positions = nxt
        levels.append((True, 0, segments, indices))
    values = np.array([levels_array[p] for p in positions], dense.dtype)
    return Encoded(tuple(order), tuple(block_map), levels, values)


def pruned(rng: np.random.Generator, shape, dtype=np.float32, keep=0.3) -> np.ndarray:
    """Random values with about ``1 - keep`` of them zero."""
    values = rng.uniform(-4, 4, size=shape) * (rng.random(shape) < keep)
    if np.dtype(dtype).kind in "iu":
        values = np.round(values * 20)
    return values.astype(dtype)
