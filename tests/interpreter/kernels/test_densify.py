"""DENSIFY and ops reading sparse constants, in ModelBuilder files, against LiteRT.

The files hold sparse constants encoded by tests/interpreter/sparse_encoding.py (every
index vector type); LiteRT densifies them with its own FormatConverter.
"""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.errors import UnsupportedOpError
from tests.support import KERNEL_SETS, run_litert

from ..sparse_encoding import encode, pruned
from ..tflite_builder import ModelBuilder

D, S = False, True
# (shape, traversal order, formats, block_map, block sizes), as TF writes them and more
ENCODINGS = {
    "csr_2d": ((6, 10), (0, 1), (D, S), (), ()),
    "csr_column_major": ((6, 10), (1, 0), (D, S), (), ()),
    "csr_both": ((6, 10), (0, 1), (S, S), (), ()),
    "block_1x4": ((6, 16), (0, 1, 2), (D, S, D), (1,), (4,)),
    "block_4x4": ((8, 12), (0, 1, 2, 3), (D, S, D, D), (0, 1), (4, 4)),
    "block_16x1": ((32, 3), (0, 1, 2), (D, S, D), (0,), (16,)),
    "conv_4d": ((4, 3, 3, 5), (0, 1, 2, 3), (D, D, D, S), (), ()),
}
INDEX_TYPES = [np.int32, np.uint16, np.uint8]


def densify_model(dense: np.ndarray, enc, index_type) -> bytes:
    """DENSIFY(w) as the graph output."""
    b = ModelBuilder()
    dtype = dense.dtype
    qp = {"scale": 0.05, "zero_point": 0} if dtype == np.int8 else {}
    w = b.tensor("w", dense.shape, dtype, data=enc.values,
                 sparsity=enc.flatbuffer(index_type), **qp)
    y = b.tensor("w_dense", dense.shape, dtype, **qp)
    b.op("DENSIFY", [w], [y])
    return b.build([], [y])


def _ours(model: bytes, kernels: str) -> list[np.ndarray]:
    interp = Interpreter(model_content=model, kernels=kernels)
    interp.allocate_tensors()
    interp.invoke()
    return [interp.get_tensor(d["index"]) for d in interp.get_output_details()]


@pytest.mark.parametrize("name", sorted(ENCODINGS))
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float16])
@pytest.mark.parametrize("index_type", INDEX_TYPES)
def test_densify_matches_litert(name, dtype, index_type):
    shape, order, csr, block_map, blocks = ENCODINGS[name]
    dense = pruned(np.random.default_rng(len(name)), shape, dtype)
    enc = encode(dense, order, csr, block_map, blocks)
    model = densify_model(dense, enc, index_type)
    # (LiteRT's default set cannot run this graph: XNNPACK takes the DENSIFY and then
    # fails to set up a runtime whose output is the densified constant.)
    expected = run_litert(model, [], "reference")[0]
    np.testing.assert_array_equal(expected, dense)
    for kernels in KERNEL_SETS:  # a copy of the value in both
        np.testing.assert_array_equal(_ours(model, kernels)[0], expected)


def _fc_model(dense_w: np.ndarray, enc, densify: bool) -> bytes:
    """y = FULLY_CONNECTED(x, w): w sparse, read directly or through DENSIFY."""
    units, depth = dense_w.shape
    b = ModelBuilder()
    x = b.tensor("x", (2, depth))
    w = b.tensor("w", dense_w.shape, data=enc.values, sparsity=enc.flatbuffer(np.uint8))
    if densify:
        w_dense = b.tensor("w_dense", dense_w.shape)
        b.op("DENSIFY", [w], [w_dense])
        w = w_dense
    bias = b.const("bias", np.linspace(-1, 1, units, dtype=np.float32))
    y = b.tensor("y", (2, units))
    b.op("FULLY_CONNECTED", [x, w, bias], [y], version=1 if densify else 8,
         fused_activation_function="RELU")
    return b.build([x], [y])


@pytest.mark.parametrize("densify", [True, False], ids=["densify", "sparse_weights"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fully_connected_with_sparse_weights(densify, seed):
    """TF's two layouts: CSR weights behind DENSIFY, and 1x4 blocks read by the FC itself
    (LiteRT's sparse kernel): within LiteRT's spread between its kernel sets, or 1e-5."""
    rng = np.random.default_rng(seed)
    dense_w = pruned(rng, (12, 16))
    dense_w[:, 4:8] = 0  # a whole 1x4 column block
    enc = encode(dense_w, (0, 1, 2), (D, S, D), (1,), (4,)) if not densify else \
        encode(dense_w, (0, 1), (D, S))
    model = _fc_model(dense_w, enc, densify)
    x = rng.normal(size=(2, 16)).astype(np.float32)
    expected = {k: run_litert(model, [x], k)[0] for k in KERNEL_SETS}
    scale = np.max(np.abs(expected["reference"]))
    tol = max(np.max(np.abs(expected["reference"] - expected["default"])), 1e-5 * scale)
    for k in KERNEL_SETS:
        interp = Interpreter(model_content=model, kernels=k)
        interp.allocate_tensors()
        interp.set_tensor(interp.get_input_details()[0]["index"], x)
        interp.invoke()
        ours = interp.get_tensor(interp.get_output_details()[0]["index"])
        assert np.max(np.abs(ours - expected[k])) <= tol
    np.testing.assert_allclose(ours, np.maximum(x @ dense_w.T + np.linspace(-1, 1, 12), 0),
                               rtol=1e-5, atol=1e-5)


def test_densify_needs_a_constant_input():
    b = ModelBuilder()
    x = b.tensor("x", (2, 3))
    y = b.tensor("y", (2, 3))
    b.op("DENSIFY", [x], [y])
    interp = Interpreter(model_content=b.build([x], [y]))
    with pytest.raises(UnsupportedOpError, match=r"operator 0 \(DENSIFY, output 'y'\): the sparse "
                                        r"value \(input 0, tensor 'x'\) must be a constant"):
        interp.allocate_tensors()
