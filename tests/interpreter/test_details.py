"""interpreter/details.py: the tf.lite-shaped detail dicts and get_dequantized_tensor's
arithmetic, on tensors and ops read from hand-built models."""

import numpy as np
import pytest

from edgelite.interpreter.details import (detail_dtype, dequantized, op_details,
                                          tensor_details)
from edgelite.errors import DTypeError, GraphError
from edgelite.interpreter.loader.model import load_model

from .tflite_builder import ModelBuilder


def _tensors():
    """x float32 [1, 3] (signature [-1, 3]); q int8 per tensor (0.5, 3); w int8 per channel
    on axis 1 (3 scales); s a string constant; ADD(x, x) -> y."""
    b = ModelBuilder()
    x = b.tensor("x", (1, 3), shape_signature=(-1, 3))
    b.tensor("q", (2, 2), np.int8, scale=0.5, zero_point=3)
    b.tensor("w", (2, 3), np.int8, data=np.arange(6).reshape(2, 3), scale=[0.5, 0.25, 2.0],
             zero_point=[0, 0, 0], quantized_dimension=1)
    b.tensor("s", (2,), np.object_, data=[b"ab", b"c"])
    y = b.tensor("y", (1, 3))
    b.op("ADD", [x, x], [y])
    sg = load_model(b.build([x], [y])).subgraphs[0]
    return {t.name: t for t in sg.tensors}, sg


def test_detail_dtype_is_the_numpy_scalar_type():
    tensors, _ = _tensors()
    assert detail_dtype(tensors["x"]) is np.float32
    assert detail_dtype(tensors["q"]) is np.int8
    assert detail_dtype(tensors["s"]) is np.bytes_  # a STRING tensor, as LiteRT's


def test_tensor_details_per_tensor_and_per_channel():
    tensors, _ = _tensors()
    x = tensor_details(tensors["x"], (4, 3))
    assert x["name"] == "x" and x["shape"].dtype == np.int32
    assert x["shape"].tolist() == [4, 3] and x["shape_signature"].tolist() == [-1, 3]
    assert x["quantization"] == (0.0, 0) and x["sparsity_parameters"] == {}
    assert x["quantization_parameters"]["scales"].size == 0
    q = tensor_details(tensors["q"], (2, 2))
    assert q["quantization"] == (0.5, 3)
    w = tensor_details(tensors["w"], (2, 3))
    assert w["quantization"] == (0.0, 0)  # several scales: no per-tensor pair
    params = w["quantization_parameters"]
    np.testing.assert_array_equal(params["scales"], np.float32([0.5, 0.25, 2.0]))
    assert params["zero_points"].dtype == np.int32 and params["quantized_dimension"] == 1


def test_op_details_name_operands_and_types():
    tensors, sg = _tensors()
    (add,) = sg.operators
    d = op_details(add, sg.tensors)
    assert d["op_name"] == "ADD" and d["index"] == 0
    assert d["inputs"].dtype == np.int32 and d["inputs"].tolist() == [0, 0]
    assert d["outputs"].tolist() == [tensors["y"].index]
    assert d["operand_types"] == [np.float32, np.float32] and d["result_types"] == [np.float32]


def test_dequantized_per_tensor_and_per_channel():
    tensors, _ = _tensors()
    q = np.int8([[3, 5], [-1, 127]])
    np.testing.assert_array_equal(dequantized(tensors["q"], 1, q),
                                  np.float32([[0, 1], [-2, 62]]))
    w = np.int8([[1, 4, -3], [2, -8, 1]])
    got = dequantized(tensors["w"], 2, w)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.float32([[0.5, 1, -6], [1, -2, 2]]))


def test_dequantized_refusals_name_the_tensor():
    tensors, _ = _tensors()
    with pytest.raises(DTypeError, match=r"^tensor 0 'x' is float32 without quantization"):
        dequantized(tensors["x"], 0, np.zeros((1, 3), np.float32))
    with pytest.raises(GraphError, match=r"^tensor 2 'w' has 3 scales on quantized dimension "
                                         r"1, but its shape is \[3, 2\]"):
        dequantized(tensors["w"], 2, np.zeros((3, 2), np.int8))
