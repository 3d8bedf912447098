"""Sparse constant tensors: check a SparsityParameters encoding and expand it to the dense value.

TFLite stores a pruned constant (TF's ``Optimize.EXPERIMENTAL_SPARSITY``) in a TACO-like
format (tflite.fbs, SparsityParameters). The tensor's ``shape`` is the dense shape; with
``k`` entries in ``block_map``, original dim ``block_map[j]`` is split into an outer dim
(``shape / b_j`` blocks) and a block dim ``n + j`` of ``b_j`` elements. ``traversal_order``
lists the ``n + k`` dims in the order they are stored, and ``dim_metadata[L]`` describes the
dim stored at level ``L``:

* DENSE: every one of its ``dense_size`` coordinates is stored;
* SPARSE_CSR: only some are. ``indices[i]`` is the coordinate of stored position ``i``, and
  the positions under parent position ``p`` (the position reached at the level above,
  counted over that whole level) are ``segments[p] .. segments[p + 1]``.

The buffer holds the stored values in that (depth-first) order. Examples: 2-D CSR is
levels (DENSE rows, CSR cols); TF's 1x4 block-sparse FULLY_CONNECTED weights are
(DENSE rows, CSR column blocks, DENSE 4) with ``block_map [1]``.

``densify()`` follows TFLite's FormatConverter::SparseToDense
(tensorflow/lite/kernels/internal/utils/sparsity_format_converter.cc): dense level sizes,
the block size of block dim ``j`` (the dense_size of level ``n + j``), the coordinate of a
value ``orig[d] = outer * b + inner``. It walks all levels at once with numpy (one array of
flat destinations per level, in storage order), not one value at a time. A file is
untrusted, so everything FormatConverter assumes is checked first, with one
ModelFormatError naming the tensor: the lengths of the parameters, that the traversal
order is a permutation (original dims first, then the block dims in order: FormatConverter
reads a block's size as if they were), every DENSE size equals its dim, every block size
divides its dim, CSR segments start at 0, never decrease and end at the number of indices,
indices lie inside their dim, and the values fill the buffer exactly. All of that is
checked in Python ints before any array is made; the index arrays then hold one entry per
position of a level, and no level has more positions than the next CSR level has
segments, or than the buffer has values: a few crafted bytes cannot make them big. (The
dense value itself is bounded by the caller: model.py's dense budget.)
"""

from __future__ import annotations

import numpy as np

from edgelite.errors import ModelFormatError
from .model_objects import DimensionMetadata, Sparsity, num_elements

# The dense bytes one file may expand to at load, beyond what its shapes allow: at most
# max(DENSIFY_ALWAYS_BYTES, DENSIFY_GROWTH x the file size) in all. A pruned model stores
# about a tenth of its weights (a 99%-sparse CSR float32 tensor is ~80x smaller than its
# dense value); a few crafted bytes must not claim gigabytes.
DENSIFY_ALWAYS_BYTES = 2**24
DENSIFY_GROWTH = 256

__all__ = ["densify", "dense_budget", "DimensionMetadata", "Sparsity"]


def dense_budget(file_size: int) -> int:
    """The dense bytes a file of ``file_size`` bytes may densify at load, in all."""
    return max(DENSIFY_ALWAYS_BYTES, DENSIFY_GROWTH * int(file_size))


def _fail(where: str, message: str) -> ModelFormatError:
    return ModelFormatError(f"{where}: sparse encoding: {message}")


def _level_sizes(shape: tuple[int, ...], sp: Sparsity, where: str) -> list[int]:
    """The size of each of the n + k dims (outer dims, then block dims); checks the
    traversal order, the block map and the block sizes."""
    n, k = len(shape), len(sp.block_map)
    if len(sp.traversal_order) != n + k or len(sp.dim_metadata) != n + k:
        raise _fail(where, f"a rank-{n} tensor with {k} block dim(s) needs {n + k} "
                           f"traversal_order and dim_metadata entries, the file gives "
                           f"{len(sp.traversal_order)} and {len(sp.dim_metadata)}")
    order = sp.traversal_order
    if sorted(order[:n]) != list(range(n)) or list(order[n:]) != list(range(n, n + k)):
        raise _fail(where, f"traversal_order {list(order)} is not a permutation of the "
                           f"{n} dims followed by the block dims {list(range(n, n + k))}")
    if any(not 0 <= d < n for d in sp.block_map) or \
            any(a >= b for a, b in zip(sp.block_map, sp.block_map[1:])):
        raise _fail(where, f"block_map {list(sp.block_map)} must name distinct dims of "
                           f"the rank-{n} tensor in increasing order")
    if min(shape, default=0) < 0:
        raise _fail(where, f"the shape {list(shape)} has an unknown dimension")
    sizes = list(shape)
    for j, d in enumerate(sp.block_map):
        meta = sp.dim_metadata[n + j]
        b = meta.dense_size
        if meta.is_csr or b < 1 or shape[d] % b:
            what = "is SPARSE_CSR" if meta.is_csr else f"has size {b}"
            raise _fail(where, f"block dim {n + j} (of dim {d}, size {shape[d]}) {what}; "
                               "a block dim must be DENSE with a size dividing its dim")
        sizes[d] //= b
        sizes.append(b)
    return sizes


def _check_csr(meta: DimensionMetadata, level: int, span: int, size: int,
               where: str) -> None:
    seg, idx = meta.segments, meta.indices
    if seg is None or idx is None:
        raise _fail(where, f"level {level} is SPARSE_CSR without array_segments and "
                           "array_indices (Int32Vector, Uint16Vector or Uint8Vector)")
    if len(seg) != span + 1:
        raise _fail(where, f"level {level} has {len(seg)} array_segments, its parent "
                           f"level has {span} positions (needs {span + 1})")
    if seg[0] != 0 or np.any(np.diff(seg) < 0) or seg[-1] != len(idx):
        raise _fail(where, f"level {level}: array_segments must start at 0, never "
                           f"decrease and end at the {len(idx)} array_indices")
    if len(idx) and (idx.min() < 0 or idx.max() >= size):
        bad = int(idx.min()) if idx.min() < 0 else int(idx.max())
        raise _fail(where, f"level {level}: index {bad} is outside its dim of size {size}")


def _stored_count(sizes: list[int], sp: Sparsity, where: str) -> int:
    """Checks every level against its dim (in Python ints, before anything is allocated)
    and returns how many values the encoding stores. The positions of a level are
    numbered 0 .. span - 1 and every one of them is reached: a DENSE level of size s has
    span * s, a CSR level one per index."""
    span = 1
    for level, (dim, meta) in enumerate(zip(sp.traversal_order, sp.dim_metadata)):
        size = sizes[dim]
        if meta.is_csr:
            _check_csr(meta, level, span, size, where)
            span = len(meta.indices)
        elif meta.dense_size != size:
            raise _fail(where, f"level {level} (dim {dim}) is DENSE of size "
                               f"{meta.dense_size}, the dim has {size}")
        else:
            span *= size
    return span


def _positions(shape: tuple[int, ...], sp: Sparsity, sizes: list[int]) -> np.ndarray:
    """The flat dense index of every stored value, in storage order (the encoding is
    checked: no level has more positions than a CSR array of the file or the values)."""
    n = len(shape)
    strides = [num_elements(shape[d + 1:]) for d in range(n)]
    # what one step along each dim moves in the dense tensor: an outer dim steps a block
    weights = list(strides)
    for j, d in enumerate(sp.block_map):
        weights[d] = strides[d] * sizes[n + j]
        weights.append(strides[d])
    flat = np.zeros(1, np.int64)  # the dense index of each position of the level
    for dim, meta in zip(sp.traversal_order, sp.dim_metadata):
        if meta.is_csr:
            # position i of this level lies under parent p where seg[p] <= i < seg[p + 1]
            parent = np.repeat(np.arange(len(flat)), np.diff(meta.segments))
            flat = flat[parent] + meta.indices * weights[dim]
        else:
            coords = np.arange(sizes[dim], dtype=np.int64)
            flat = (flat[:, None] + coords * weights[dim]).reshape(-1)
    return flat


def densify(values: np.ndarray, shape: tuple[int, ...], sp: Sparsity,
            where: str) -> np.ndarray:
    """The dense value of a sparse constant: zeros, with the stored ``values`` (1-D, in
    storage order) at their places."""
    shape = tuple(int(d) for d in shape)
    sizes = _level_sizes(shape, sp, where)
    count = _stored_count(sizes, sp, where)
    if count != len(values):
        raise _fail(where, f"the encoding stores {count} values, the buffer holds "
                           f"{len(values)}")
    limit = num_elements(shape)
    if count > limit:
        raise _fail(where, f"the encoding stores {count} values, more than the {limit} "
                           f"elements of shape {list(shape)}")
    dense = np.zeros(limit, values.dtype)
    dense[_positions(shape, sp, sizes)] = values
    return dense.reshape(shape)
