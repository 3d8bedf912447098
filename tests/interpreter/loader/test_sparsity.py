"""sparsity.densify: TFLite's sparse constants back to their dense value; hostile encodings
refused in one line naming the tensor (unit tests on hand-built SparsityParameters)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from edgelite.errors import ModelFormatError
from edgelite.interpreter.loader.model import load_model
from edgelite.interpreter.loader.model_objects import DimensionMetadata, Sparsity
from edgelite.interpreter.loader.sparsity import densify, dense_budget

from ..sparse_encoding import encode, pruned
from ..tflite_builder import ModelBuilder

D, S = False, True  # a level's format: DENSE, SPARSE_CSR
WHERE = "subgraph 0: tensor 0 'w'"
# (shape, traversal order, formats, block_map, block sizes)
ENCODINGS = {
    "csr_2d": ((5, 7), (0, 1), (D, S), (), ()),
    "csr_2d_column_major": ((5, 7), (1, 0), (D, S), (), ()),
    "csr_both_levels": ((6, 4), (0, 1), (S, S), (), ()),
    "dense_only_permuted": ((3, 4, 2), (2, 0, 1), (D, D, D), (), ()),
    "block_1x4": ((8, 16), (0, 1, 2), (D, S, D), (1,), (4,)),
    "block_1x16": ((4, 32), (0, 1, 2), (D, S, D), (1,), (16,)),
    "block_4x4": ((8, 12), (0, 1, 2, 3), (D, S, D, D), (0, 1), (4, 4)),
    "block_16x1": ((32, 3), (0, 1, 2), (D, S, D), (0,), (16,)),
    "block_2x1_transposed": ((6, 5), (1, 0, 2), (D, S, D), (0,), (2,)),
    "conv_4d": ((4, 3, 3, 5), (0, 1, 2, 3), (D, D, D, S), (), ()),
    "conv_4d_sparse_outer": ((4, 3, 3, 5), (0, 3, 1, 2), (S, D, S, S), (), ()),
    "conv_4d_block": ((4, 2, 2, 8), (0, 1, 2, 3, 4), (D, D, D, S, D), (3,), (4,)),
    "rank_1": ((9,), (0,), (S,), (), ()),
}


@pytest.mark.parametrize("name", sorted(ENCODINGS))
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float16, np.int32])
@pytest.mark.parametrize("seed", [0, 1])
def test_densify_inverts_the_encoding(name, dtype, seed):
    shape, order, csr, block_map, blocks = ENCODINGS[name]
    dense = pruned(np.random.default_rng(seed), shape, dtype)
    # one whole block (one element when unblocked) of zeros, which a CSR level leaves out
    dense[tuple(slice(0, blocks[block_map.index(d)] if d in block_map else 1)
                for d in range(len(shape)))] = 0
    enc = encode(dense, order, csr, block_map, blocks)
    assert len(enc.values) < dense.size or not any(csr)
    out = densify(enc.values, shape, enc.record(), WHERE)
    assert out.dtype == dense.dtype
    np.testing.assert_array_equal(out, dense)


def test_all_zero_and_empty_tensors():
    enc = encode(np.zeros((3, 8), np.float32), (0, 1, 2), (D, S, D), (1,), (4,))
    assert enc.values.size == 0
    np.testing.assert_array_equal(densify(enc.values, (3, 8), enc.record(), WHERE),
                                  np.zeros((3, 8)))
    enc = encode(np.zeros((0, 4), np.int8), (0, 1), (D, S))
    assert densify(enc.values, (0, 4), enc.record(), WHERE).shape == (0, 4)


def _csr_2d():
    dense = np.array([[0, 1, 0, 2], [0, 0, 0, 0], [3, 0, 0, 4]], np.float32)
    return dense, encode(dense, (0, 1), (D, S))


def _with_level(sp: Sparsity, level: int, **changes) -> Sparsity:
    dims = list(sp.dim_metadata)
    dims[level] = replace(dims[level], **changes)
    return replace(sp, dim_metadata=tuple(dims))


def _hostile():
    """(label, Sparsity, values, message) for encodings densify must refuse."""
    dense, enc = _csr_2d()
    sp, v = enc.record(), enc.values
    seg, idx = sp.dim_metadata[1].segments, sp.dim_metadata[1].indices
    yield "short traversal", replace(sp, traversal_order=(0,)), v, "needs 2 traversal_order"
    yield "repeated dim", replace(sp, traversal_order=(0, 0)), v, "not a permutation"
    yield "dim out of range", replace(sp, traversal_order=(0, 5)), v, "not a permutation"
    yield "dense size", _with_level(sp, 0, dense_size=4), v, "DENSE of size 4, the dim has 3"
    yield "no arrays", _with_level(sp, 1, segments=None), v, "without array_segments"
    yield "segments length", _with_level(sp, 1, segments=seg[:-1]), v, "3 array_segments"
    yield "segments start", _with_level(sp, 1, segments=seg + 1), v, "must start at 0"
    yield "segments decrease", _with_level(sp, 1, segments=np.array([0, 3, 2, 4])), v, \
        "never decrease"
    yield "segments end", _with_level(sp, 1, segments=np.array([0, 2, 2, 3])), v, \
        "end at the 4 array_indices"
    yield "index too big", _with_level(sp, 1, indices=idx + 3), v, "index 6 is outside"
    yield "index negative", _with_level(sp, 1, indices=idx - 1), v, "index -1 is outside"
    yield "values short", sp, v[:-1], "stores 4 values, the buffer holds 3"
    yield "values long", sp, np.append(v, v), "stores 4 values, the buffer holds 8"
    block = encode(np.ones((4, 8), np.float32), (0, 1, 2), (D, S, D), (1,), (4,))
    bs, bv = block.record(), block.values
    yield "block size", _with_level(bs, 2, dense_size=3), bv, "size dividing its dim"
    yield "block csr", _with_level(bs, 2, is_csr=True), bv, "block dim 2 (of dim 1, size 8)"
    yield "block map range", replace(bs, block_map=(2,)), bv, "block_map [2]"
    yield "block order", replace(bs, traversal_order=(0, 2, 1)), bv, "not a permutation"
    # a CSR level whose segments claim more positions than the tensor has (repeated indices)
    many = Sparsity((0, 1), (), (DimensionMetadata(False, 3, None, None),
                                 DimensionMetadata(True, 0, np.array([0, 9, 18, 27]),
                                                   np.zeros(27, np.int64))))
    yield "too many positions", many, np.zeros(27, np.float32), \
        "stores 27 values, more than the 12 elements"


@pytest.mark.parametrize("label, sp, values, message", list(_hostile()),
                         ids=[h[0] for h in _hostile()])
def test_hostile_encodings_are_refused_in_one_line(label, sp, values, message):
    shape = (4, 8) if label.startswith("block") else (3, 4)
    with pytest.raises(ModelFormatError) as info:
        densify(values, shape, sp, WHERE)
    text = str(info.value)
    assert text.startswith(WHERE + ": sparse encoding: ") and message in text
    assert "\n" not in text


def _sparse_file(shape, enc, dtype=np.float32, index_type=np.int32, raw=None) -> bytes:
    """w (sparse, ``raw`` bytes instead of its values if given) -> DENSIFY -> y."""
    b = ModelBuilder()
    w = b.tensor("w", shape, dtype, data=enc.values, sparsity=enc.flatbuffer(index_type))
    if raw is not None:
        b.buffers[b.tensors[w].buffer].data = np.frombuffer(raw, np.uint8)
    y = b.tensor("y", shape, dtype)
    b.op("DENSIFY", [w], [y])
    return b.build([], [y])


@pytest.mark.parametrize("index_type", [np.int32, np.uint16, np.uint8])
def test_load_model_expands_sparse_constants(index_type):
    dense = pruned(np.random.default_rng(3), (6, 8))
    enc = encode(dense, (0, 1, 2), (D, S, D), (1,), (4,))
    t = load_model(_sparse_file((6, 8), enc, index_type=index_type)).subgraphs[0].tensors[0]
    assert t.is_sparse and t.is_constant and not t.data.flags.writeable
    np.testing.assert_array_equal(t.data, dense)
    assert t.sparsity.block_map == (1,) and t.sparsity.traversal_order == (0, 1, 2)
    assert [m.is_csr for m in t.sparsity.dim_metadata] == [False, True, False]


def test_load_model_refuses_a_bad_encoding_naming_the_tensor():
    _, enc = _csr_2d()
    enc.levels[1] = (True, 0, [0, 2, 2, 9], enc.levels[1][3])  # segments past the indices
    with pytest.raises(ModelFormatError, match=r"^subgraph 0: tensor 0 'w': sparse "
                                               r"encoding: level 1: array_segments"):
        load_model(_sparse_file((3, 4), enc))
    # 7 bytes of stored values: not whole float32 values
    with pytest.raises(ModelFormatError, match=r"tensor 0 'w': its sparse buffer holds 7 "
                                               r"bytes, not a whole number of float32"):
        load_model(_sparse_file((3, 4), _csr_2d()[1], raw=bytes(7)))


def test_a_tiny_file_cannot_claim_a_huge_dense_value():
    """A sparse constant of 2**30 float32 zeros takes a few bytes to encode: refused
    before anything is allocated (the dense budget grows with the file size)."""
    shape = (2**14, 2**14)
    enc = encode(np.zeros((1, 1), np.float32), (0, 1), (S, S))
    enc.levels = [(True, 0, [0, 0], []), (True, 0, [0], [])]
    with pytest.raises(ModelFormatError, match=r"would expand to 1073741824 bytes, more than"):
        load_model(_sparse_file(shape, enc))
    assert dense_budget(1000) == 2**24 and dense_budget(2**20) == 2**28


def test_counts_are_checked_before_any_array_is_made():
    """Dense levels of 2**20 x 2**20 positions over no stored values: refused from the
    counts alone (the index arrays would take terabytes)."""
    big = Sparsity((0, 1), (), (DimensionMetadata(False, 2**20, None, None),
                                DimensionMetadata(False, 2**20, None, None)))
    with pytest.raises(ModelFormatError, match="stores 1099511627776 values, the buffer "
                                               "holds 0"):
        densify(np.zeros(0, np.int8), (2**20, 2**20), big, WHERE)
    then_csr = replace(big, dim_metadata=big.dim_metadata[:1] + (DimensionMetadata(
        True, 0, np.array([0, 1]), np.array([0])),))
    with pytest.raises(ModelFormatError, match="level 1 has 2 array_segments, its parent "
                                               r"level has 1048576 positions \(needs 1048577\)"):
        densify(np.zeros(1, np.int8), (2**20, 2**20), then_csr, WHERE)
