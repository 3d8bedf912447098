"""Models written with our bindings load and run in LiteRT."""

import numpy as np
import pytest

from edgelite.schema import model_io, ops
from edgelite.schema import generated_tflite as tfl


def _tensor(name, shape, ttype=tfl.TensorType.FLOAT32, buffer=0):
    t = tfl.TensorT()
    t.name, t.shape, t.type, t.buffer = name, list(shape), ttype, buffer
    return t


def _empty_buffer():
    return tfl.BufferT()


def add_model(with_const=False):
    """y = relu(a + b), optionally with b a constant."""
    m = tfl.ModelT()
    m.version = model_io.SCHEMA_VERSION
    m.description = "edgelite test"
    m.operatorCodes = [ops.operator_code("ADD")]
    m.buffers = [_empty_buffer(), _empty_buffer(), _empty_buffer(), _empty_buffer()]
    sg = tfl.SubGraphT()
    sg.name = "main"
    sg.tensors = [_tensor("a", [1, 2, 3], buffer=1), _tensor("b", [1, 2, 3], buffer=2),
                  _tensor("y", [1, 2, 3], buffer=3)]
    if with_const:
        m.buffers[2].data = np.arange(6, dtype=np.float32).tobytes()
        sg.inputs = [0]
    else:
        sg.inputs = [0, 1]
    sg.outputs = [2]
    op = tfl.OperatorT()
    op.opcodeIndex, op.inputs, op.outputs = 0, [0, 1], [2]
    ops.set_operator_options(op, "ADD", {"fused_activation_function": "RELU"})
    sg.operators = [op]
    m.subgraphs = [sg]
    return m


def test_pack_sets_identifier_and_roundtrips():
    data = model_io.pack_model(add_model(with_const=True))
    assert model_io.has_identifier(data) and data[4:8] == b"TFL3"
    back = tfl.ModelT.InitFromPackedBuf(data, 0)
    assert back.description == b"edgelite test"
    assert ops.builtin_code_of(back.operatorCodes[0]) == 0
    assert ops.operator_options(back.subgraphs[0].operators[0]) == {
        "fused_activation_function": ops.ActivationFunctionType.RELU, "pot_scale_int16": True}
    np.testing.assert_array_equal(
        np.frombuffer(back.buffers[2].data.tobytes(), np.float32), np.arange(6))


def test_buffer_data_is_16_byte_aligned():
    m = add_model(with_const=True)
    m.buffers.append(tfl.BufferT())
    m.buffers[-1].data = b"\x01\x02\x03"               # odd sizes around the const
    m.buffers.append(tfl.BufferT())
    m.buffers[-1].data = list(range(7))
    data = model_io.pack_model(m)
    model = tfl.Model.GetRootAs(data, 0)
    for i in range(model.BuffersLength()):
        b = model.Buffers(i)
        if b.DataLength():
            start = b._tab.Vector(b._tab.Offset(4))
            assert start % 16 == 0, (i, start)
    back = tfl.ModelT.InitFromPackedBuf(data, 0)
    assert back.buffers[-2].data.tolist() == [1, 2, 3]
    assert back.buffers[-1].data.tolist() == list(range(7))


@pytest.mark.parametrize("with_const", [False, True])
def test_litert_runs_our_add_model(with_const, litert):
    data = model_io.pack_model(add_model(with_const))
    interp = litert.Interpreter(model_content=data)
    interp.allocate_tensors()
    ins = interp.get_input_details()
    a = np.array([[[-1, 2, -3], [4, -5, 6]]], np.float32)
    b = np.array([[[0.5, 0.5, 0.5], [1, 1, 1]]], np.float32)
    interp.set_tensor(ins[0]["index"], a)
    if not with_const:
        interp.set_tensor(ins[1]["index"], b)
    else:
        b = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    interp.invoke()
    out = interp.get_output_details()[0]
    assert out["name"] == "y"
    np.testing.assert_array_equal(interp.get_tensor(out["index"]), np.maximum(a + b, 0))


def test_litert_runs_greater_op_code(litert):
    """A code above 127 (CUMSUM=128) must go through builtin_code."""
    m = tfl.ModelT()
    m.version = 3
    m.operatorCodes = [ops.operator_code("CUMSUM")]
    m.buffers = [tfl.BufferT(), tfl.BufferT(), tfl.BufferT(), tfl.BufferT()]
    m.buffers[2].data = np.array([1], np.int32).tobytes()
    sg = tfl.SubGraphT()
    sg.tensors = [_tensor("x", [2, 3], buffer=1),
                  _tensor("axis", [], tfl.TensorType.INT32, buffer=2),
                  _tensor("y", [2, 3], buffer=3)]
    sg.inputs, sg.outputs = [0], [2]
    op = tfl.OperatorT()
    op.opcodeIndex, op.inputs, op.outputs = 0, [0, 1], [2]
    ops.set_operator_options(op, "CUMSUM", {"exclusive": False, "reverse": False})
    sg.operators = [op]
    m.subgraphs = [sg]
    interp = litert.Interpreter(model_content=model_io.pack_model(m))
    interp.allocate_tensors()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    y = interp.get_tensor(interp.get_output_details()[0]["index"])
    np.testing.assert_array_equal(y, np.cumsum(x, axis=1))
