"""The models of LiteRT's Python interpreter tests (tflite/python/interpreter_test.py and its
testdata/), rebuilt with edgelite's test builder so the ported cases need no TensorFlow.

Each function returns the .tflite bytes of a model shaped like the testdata file it is
named after: the same tensor names, indices, shapes, types and quantization the LiteRT
test asserts on.
"""

from __future__ import annotations

import numpy as np

from edgelite.schema import generated_tflite as tfl

from .sparse_encoding import encode
from .tflite_builder import ModelBuilder

# FULLY_CONNECTED weights that reverse a 4-vector: out[i] = in[3 - i].
REVERSE = np.eye(4)[::-1]


def permute_float() -> bytes:
    """testdata/permute_float.tflite: input [1,4] -> FULLY_CONNECTED(no bias) -> output,
    the weights reverse the vector; tensors 0 input, 1 weights, 2 output."""
    b = ModelBuilder()
    x = b.tensor("input", (1, 4))
    w = b.tensor("weights", (4, 4), data=REVERSE)
    y = b.tensor("output", (1, 4))
    b.op("FULLY_CONNECTED", [x, w, -1], [y])
    b.signature("serving_default", {"input": x}, {"output": y})
    return b.build([x], [y])


def permute_uint8() -> bytes:
    """testdata/permute_uint8.tflite: the same permutation in uint8, scale 1, zero point 0."""
    b = ModelBuilder()
    q = {"scale": 1.0, "zero_point": 0}
    x = b.tensor("input", (1, 4), np.uint8, **q)
    w = b.tensor("weights", (4, 4), np.uint8, data=REVERSE, **q)
    y = b.tensor("output", (1, 4), np.uint8, **q)
    b.op("FULLY_CONNECTED", [x, w, -1], [y])
    return b.build([x], [y])


def gather_string() -> bytes:
    """testdata/gather_string.tflite: GATHER(input string[10], indices int64[3]) -> string[3]."""
    b = ModelBuilder()
    x = b.tensor("input", (10,), np.bytes_)
    i = b.tensor("indices", (3,), np.int64)
    y = b.tensor("output", (3,), np.bytes_)
    b.op("GATHER", [x, i], [y], axis=0)
    return b.build([x, i], [y])


def gather_string_0d() -> bytes:
    """testdata/gather_string_0d.tflite: a 0-d string input (GATHER of it by a 0-d index
    from a 1-element RESHAPE)."""
    b = ModelBuilder()
    x = b.tensor("input", (), np.bytes_)
    shape = b.const("shape", np.array([1], np.int32))
    flat = b.tensor("flat", (1,), np.bytes_)
    index = b.const("index", np.array(0, np.int32))
    y = b.tensor("output", (), np.bytes_)
    b.op("RESHAPE", [x, shape], [flat])
    b.op("GATHER", [flat, index], [y], axis=0)
    return b.build([x], [y])


def string_reshape() -> bytes:
    """Strings through RESHAPE: a [4] string input -> [2,2]. (LiteRT's CONCATENATION
    refuses strings in Prepare, concatenation.cc.)"""
    b = ModelBuilder()
    c = b.tensor("c", (4,), np.bytes_)
    shape = b.const("shape", np.array([2, 2], np.int32))
    y = b.tensor("c2", (2, 2), np.bytes_)
    b.op("RESHAPE", [c, shape], [y])
    b.signature("serving_default", {"words": c}, {"grid": y})
    return b.build([c], [y])


LABELS = ["cat", "dog", "\u00e9l\u00e8ve", ""]


def string_table() -> bytes:
    """A constant STRING table (TFLite's packed buffer) looked up by GATHER: the label
    lookup at the end of a classifier."""
    b = ModelBuilder()
    table = b.tensor("labels", (4,), np.bytes_, data=LABELS)
    i = b.tensor("class_ids", (2,), np.int32)
    y = b.tensor("names", (2,), np.bytes_)
    b.op("GATHER", [table, i], [y], axis=0)
    return b.build([i], [y])


def pc_conv() -> bytes:
    """testdata/pc_conv.bin: an int8 CONV_2D whose weights (tensor 1) have 128 per-channel
    scales."""
    rng = np.random.default_rng(7)
    b = ModelBuilder()
    x = b.tensor("input", (1, 4, 4, 2), np.int8, scale=0.05, zero_point=-3)
    scales = rng.uniform(0.001, 0.01, 128)
    w = b.tensor("weights", (128, 1, 1, 2), np.int8, data=rng.integers(-127, 128, (128, 1, 1, 2)),
                 scale=scales, zero_point=np.zeros(128, np.int64), quantized_dimension=0)
    bias = b.tensor("bias", (128,), np.int32, data=np.zeros(128), scale=scales * 0.05,
                    zero_point=np.zeros(128, np.int64))
    y = b.tensor("output", (1, 4, 4, 128), np.int8, scale=0.02, zero_point=1)
    b.op("CONV_2D", [x, w, bias], [y], padding="VALID", stride_w=1, stride_h=1)
    return b.build([x], [y])


# The sparse constant of testdata/sparse_tensor.bin: 4x4 in 2x2 blocks, block rows dense,
# block columns CSR; three non-empty blocks stored.
SPARSE_DENSE = np.array([[1, 0, 2, 3],
                         [0, 4, 0, 0],
                         [0, 0, 5, 0],
                         [0, 0, 0, 6]], np.float32)
SPARSE_VALUES = [1, 0, 0, 4, 2, 3, 0, 0, 5, 0, 0, 6]


def sparse_tensor() -> bytes:
    """Tensor 0 a sparse float constant (the LiteRT test's values and metadata), read by
    DENSIFY then ADD to the input."""
    enc = encode(SPARSE_DENSE, order=(0, 1, 2, 3), block_map=(0, 1), blocks=(2, 2),
                 csr=(False, True, False, False))
    b = ModelBuilder()
    s = b.tensor("sparse", (4, 4), data=enc.values, sparsity=enc.flatbuffer(np.int32))
    dense = b.tensor("dense", (4, 4))
    x = b.tensor("input", (4, 4))
    y = b.tensor("output", (4, 4))
    b.op("DENSIFY", [s], [dense])
    b.op("ADD", [x, dense], [y])
    return b.build([x], [y])


def two_signatures() -> bytes:
    """testdata/two_signatures.tflite: subgraph 0 "add" (add_x:0 + add_y:0), subgraph 1
    "multiply" (multiply_x:0 * multiply_y:0), one signature each."""
    b = ModelBuilder()
    for key, op, sg in (("add", "ADD", 0), ("multiply", "MUL", 1)):
        x = b.tensor(f"{key}_x:0", (1,))
        y = b.tensor(f"{key}_y:0", (1,))
        z = b.tensor(f"{key}_output:0", (1,))
        b.op(op, [x, y], [z])
        b.signature(key, {"x": x, "y": y}, {"output_0": z}, subgraph_index=sg)
        if sg == 0:
            b.finish_subgraph([x, y], [z], name=key)
    return b.build([x, y], [z])


def sum_dynamic() -> bytes:
    """The testEmptyInputTensor model: x float[None] -> SUM over axis 0 -> scalar,
    signature serving_default {x} -> {output_0}."""
    b = ModelBuilder()
    x = b.tensor("x", (1,), shape_signature=(-1,))
    axis = b.const("axis", np.array([0], np.int32))
    y = b.tensor("output_0", ())
    b.op("SUM", [x, axis], [y], keep_dims=False)
    b.signature("serving_default", {"x": x}, {"output_0": y})
    return b.build([x], [y])


def resource_variable() -> bytes:
    """VAR_HANDLE / ASSIGN_VARIABLE / READ_VARIABLE: tensor 1 a RESOURCE handle."""
    b = ModelBuilder()
    z = b.tensor("z", (2,))
    h = b.tensor("h", (), type_code=13)  # RESOURCE
    v, y = b.tensor("v", (2,)), b.tensor("y", (2,))
    b.op("VAR_HANDLE", [], [h], shared_name="state")
    b.op("ASSIGN_VARIABLE", [h, z], [])
    b.op("READ_VARIABLE", [h], [v])
    b.op("ADD", [v, z], [y])
    return b.build([z], [y])


def with_unused_tensor(type_name: str) -> bytes:
    """x -> RELU -> y, plus an unused tensor "odd" of TensorType ``type_name``."""
    b = ModelBuilder()
    x, y = b.tensor("x", (2,)), b.tensor("y", (2,))
    b.tensor("odd", (2,), type_code=getattr(tfl.TensorType, type_name))
    b.op("RELU", [x], [y])
    return b.build([x], [y])
