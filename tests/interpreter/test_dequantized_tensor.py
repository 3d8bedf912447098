"""Interpreter.get_dequantized_tensor: real = scale * (q - zero_point), per channel too."""

import numpy as np
import pytest

from edgelite import DTypeError, Interpreter
from edgelite.interpreter.errors import InterpreterStateError

from tests.conftest import MODELS

from .tflite_builder import ModelBuilder



def _model() -> bytes:
    """int8 input -> DEQUANTIZE -> float, plus a per-channel int8 constant (axis 1) and an
    int32 constant without quantization, both read by a second op so they stay live."""
    b = ModelBuilder()
    x = b.tensor("x", [2, 3], np.int8, scale=0.5, zero_point=-3)
    y = b.tensor("y", [2, 3], np.float32)
    b.op("DEQUANTIZE", [x], [y])
    w = b.tensor("w", [2, 3], np.int8, data=[[1, -2, 3], [-4, 5, -6]],
                 scale=[0.1, 0.2, 0.4], zero_point=[0, 0, 0], quantized_dimension=1)
    wf = b.tensor("w_float", [2, 3], np.float32)
    b.op("DEQUANTIZE", [w], [wf])
    axes = b.const("axes", np.array([1], np.int32))
    s = b.tensor("sum", [2], np.float32)
    b.op("SUM", [y, axes], [s])
    return b.build(inputs=[x], outputs=[s, wf])


@pytest.fixture
def interp():
    it = Interpreter(model_content=_model(), preserve_all_tensors=True)
    it.allocate_tensors()
    it.set_tensor(0, np.array([[-128, -3, 0], [1, 5, 127]], np.int8))
    it.invoke()
    return it


def test_per_tensor_hand_values(interp):
    got = interp.get_dequantized_tensor(0)
    want = np.array([[-62.5, 0.0, 1.5], [2.0, 4.0, 65.0]], np.float32)  # 0.5 * (q + 3)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    # The DEQUANTIZE kernel computes the same thing.
    np.testing.assert_array_equal(interp.get_tensor(1), want)


def test_per_channel_uses_quantized_dimension(interp):
    got = interp.get_dequantized_tensor(2)
    want = np.array([[0.1, -0.4, 1.2], [-0.4, 1.0, -2.4]], np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_array_equal(got, interp.get_tensor(3))


def test_float_tensor_is_a_float32_copy(interp):
    got = interp.get_dequantized_tensor(1)
    got[...] = 0
    assert interp.get_tensor(1)[1, 2] == 65.0


def test_unquantized_integer_tensor_is_an_error(interp):
    with pytest.raises(DTypeError, match="'axes'.*int32 without quantization"):
        interp.get_dequantized_tensor(4)


def test_needs_allocated_tensors():
    it = Interpreter(model_content=_model())
    with pytest.raises(InterpreterStateError, match="allocate_tensors"):
        it.get_dequantized_tensor(0)


def test_intermediates_of_a_quantized_model():
    """Every intermediate of TF's int8 keras_cnn stays readable, and the int8 softmax output
    dequantizes to exactly what the model's own DEQUANTIZE op writes."""
    it = Interpreter(model_path=str(MODELS / "keras_cnn.tf_int8.tflite"),
                     preserve_all_tensors=True)
    it.allocate_tensors()
    inp = it.get_input_details()[0]
    x = np.load(MODELS / "sample_digit.npy").reshape(inp["shape"])
    if inp["dtype"] != np.float32:
        s, z = inp["quantization"]
        x = np.clip(np.round(x / s) + z, -128, 127)
    it.set_tensor(inp["index"], x.astype(inp["dtype"]))
    it.invoke()
    ops = it._get_ops_details()
    by_index = {d["index"]: d for d in it.get_tensor_details()}
    checked = dequantize_ops = 0
    for op in ops:
        out = int(op["outputs"][0])
        if op["op_name"] == "DEQUANTIZE":
            np.testing.assert_array_equal(it.get_dequantized_tensor(int(op["inputs"][0])),
                                          it.get_tensor(out))
            dequantize_ops += 1
        d = by_index[out]
        if d["dtype"] != np.int8:
            continue
        s, z = d["quantization"]
        want = (np.float64(s) * (it.get_tensor(out).astype(np.float64) - z)).astype(np.float32)
        np.testing.assert_array_equal(it.get_dequantized_tensor(out), want)
        checked += 1
    assert checked >= 5 and dequantize_ops == 1
