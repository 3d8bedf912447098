"""schema/writer.py writes the bytes flatbuffers.Builder and the generated object API write."""

import copy

import flatbuffers
import numpy as np
import pytest

from edgelite.schema import generated_tflite as tfl
from edgelite.schema import model_io, writer
from tests.conftest import sample_files


class Reference(flatbuffers.Builder):
    """The plain Builder, aligning uint8 vectors to 16 as pack_model did before writer.py."""

    def CreateNumpyVector(self, x):  # noqa: N802
        if isinstance(x, np.ndarray) and x.dtype == np.uint8 and x.ndim == 1:
            self.StartVector(1, x.size, 16)
            payload = x.tobytes()
            self.head = self.head - len(payload)
            self.Bytes[self.head:self.head + len(payload)] = payload
            self.vectorNumElems = x.size
            return self.EndVector()
        return super().CreateNumpyVector(x)


def reference_pack(model) -> bytes:
    for b in model.buffers or []:
        if b.data is not None:
            b.data = model_io._as_uint8(b.data)
    builder = Reference(64)  # (small: the buffer grows while packing, as it may in writer's)
    builder.Finish(model.Pack(builder), file_identifier=model_io.FILE_IDENTIFIER)
    return bytes(builder.Output())


def bulk(model):
    """The same model with writer's bulk-packing table classes."""
    def cast(obj, cls):
        new = cls()
        new.__dict__.update(obj.__dict__)
        return new
    model.buffers = [cast(b, writer.BufferT) for b in model.buffers]
    for sg in model.subgraphs:  # (tensors and operators: the generated Pack, bulk parts)
        for t in sg.tensors:
            if t.quantization is not None:
                t.quantization = cast(t.quantization, writer.QuantizationParametersT)
        for o in sg.operators:
            if o.builtinOptions is not None:
                o.builtinOptions = writer.scalar_table(o.builtinOptions)
    model.subgraphs = [cast(sg, writer.SubGraphT) for sg in model.subgraphs]
    return cast(model, writer.ModelT)


FILES = [p for p in sample_files("*.tflite")
         if p.stat().st_size < 300_000][:40]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_same_bytes_as_flatbuffers(path):
    """TF's sample files, read into the object API and packed three ways."""
    model = tfl.ModelT.InitFromPackedBuf(path.read_bytes(), 0)
    want = reference_pack(copy.deepcopy(model))
    assert model_io.pack_model(copy.deepcopy(model)) == want  # writer.Builder, generated Pack
    assert model_io.pack_model(bulk(copy.deepcopy(model))) == want  # + bulk tables
    if model.subgraphs and model.subgraphs[0].operators:
        assert any(type(o.builtinOptions) is writer.ScalarTable
                   for o in bulk(model).subgraphs[0].operators)  # options packed in bulk too


def test_lists_and_python_values():
    """Tables built from Python lists, str names and scalars (as the converter builds
    them), vtables shared and not, and a buffer that makes the builder grow."""
    def model(tensor_cls, op_cls, buffer_cls, quant_cls):
        m = tfl.ModelT()
        m.version, m.description = 3, "t"
        m.buffers = [buffer_cls(), buffer_cls()]
        m.buffers[1].data = np.arange(3000, dtype=np.float32)
        sg = tfl.SubGraphT()
        sg.tensors = []
        for k in range(6):
            t = tensor_cls()
            t.name, t.shape, t.type = f"t{k}é", np.array([1, k + 1], np.int32), k % 3
            t.buffer, t.isVariable = (1 if k == 2 else 0), k == 4
            if k % 2:
                q = quant_cls()
                q.scale, q.zeroPoint = [0.5] * k, [k] * k
                q.quantizedDimension = k % 2
                t.quantization = q
            if k == 3:
                t.shapeSignature = np.array([-1, 4], np.int32)
            sg.tensors.append(t)
        sg.operators = []
        for k in range(4):
            o = op_cls()
            o.opcodeIndex, o.inputs, o.outputs = k % 2, [k, -1, 2][:k + 1], [k + 1]
            if k == 1:
                o.builtinOptionsType = tfl.BuiltinOptions.AddOptions
                o.builtinOptions = tfl.AddOptionsT()
                o.builtinOptions.fusedActivationFunction = 1
            if k == 3:
                o.intermediates = [5]
            sg.operators.append(o)
        sg.inputs, sg.outputs, sg.name = [0], [4], "main"
        m.subgraphs = [sg]
        m.operatorCodes = [tfl.OperatorCodeT(), tfl.OperatorCodeT()]
        return m
    want = reference_pack(model(tfl.TensorT, tfl.OperatorT, tfl.BufferT,
                                tfl.QuantizationParametersT))
    got = model_io.pack_model(model(tfl.TensorT, tfl.OperatorT, writer.BufferT,
                                    writer.QuantizationParametersT))
    assert got == want
    assert model_io.pack_model(bulk(model(tfl.TensorT, tfl.OperatorT, tfl.BufferT,
                                          tfl.QuantizationParametersT))) == want
    assert got.index(np.arange(3000, dtype=np.float32).tobytes()) % 16 == 0  # aligned data


def test_table_spec_comes_from_the_bindings():
    assert writer.TENSOR.num_fields == 11
    slots = [f[0] for f in writer.TENSOR.fields]
    assert slots == list(range(11))
    assert writer.OPERATOR.fields[0][1].format == "<I"  # opcode_index: uint32
    assert writer.OPERATOR.fields[-1][3] == -1          # debug_metadata_index defaults to -1
    with pytest.raises(TypeError):
        writer.TableSpec(tfl.TensorAddType)


def test_scalar_tables():
    """An options table of scalars becomes one ScalarTable that packs the generated bytes,
    once or shared by several operators; a table with a vector stays the generated object."""
    conv = tfl.Conv2DOptionsT()
    conv.padding, conv.strideW, conv.strideH, conv.fusedActivationFunction = 1, 2, 3, 1
    table = writer.scalar_table(conv)
    assert type(table) is writer.ScalarTable and table.values[:3] == (1, 2, 3)
    assert writer.scalar_table(tfl.AddOptionsT()).values == (0, True)  # (pot_scale_int16)
    reshape = tfl.ReshapeOptionsT()
    reshape.newShape = [1, -1]
    assert writer.scalar_table(reshape) is reshape        # a vector: the generated Pack
    assert type(writer.scalar_table(tfl.ReshapeOptionsT())) is writer.ScalarTable

    def packed(tables, b):
        b.Finish(b.offsets([t.Pack(b) for t in tables]))
        return bytes(b.Output())

    want = packed([copy.deepcopy(conv) for _ in range(3)], writer.Builder(16))
    assert packed([table] * 3, writer.Builder(16)) == want  # one table, three operators
    plain = flatbuffers.Builder(16)
    plain.Finish(table.Pack(plain))  # any other builder: the generated way
    reference = flatbuffers.Builder(16)
    reference.Finish(conv.Pack(reference))
    assert bytes(plain.Output()) == bytes(reference.Output())


def test_rows_pack_as_the_object_api():
    """writer.TensorRow / OperatorRow (export's tables, shapes and operands as int32 bytes)
    write the bytes TensorT / OperatorT write, at every start alignment."""
    def model(rows: bool):
        m = tfl.ModelT()
        m.version, m.buffers, m.operatorCodes = 3, [tfl.BufferT()], [tfl.OperatorCodeT()]
        sg = tfl.SubGraphT()
        sg.tensors, sg.operators = [], []
        for k in range(9):
            shape, name = list(range(1, k % 4 + 1)), "é" * (k % 5) + f"t{k}"
            q = None
            if k % 3 == 1:
                q = writer.QuantizationParametersT()
                q.scale, q.zeroPoint = np.full(k, 0.5, np.float32), np.zeros(k, np.int64)
            signature = [-1, 2] if k == 5 else None
            if rows:
                sg.tensors.append(writer.TensorRow(
                    name, np.int32(shape).tobytes(), k % 3, 0, k == 4, q,
                    None if signature is None else np.int32(signature).tobytes()))
            else:
                t = tfl.TensorT()
                t.name, t.shape, t.type, t.isVariable = name, shape, k % 3, k == 4
                t.quantization, t.shapeSignature = q, signature
                sg.tensors.append(t)
            inputs, outputs = [k, -1][:k % 2 + 1], [k] * (k % 3)
            options = tfl.AddOptionsT() if k % 2 else None
            if rows:
                sg.operators.append(writer.OperatorRow(
                    0, np.int32(inputs).tobytes(), np.int32(outputs).tobytes(),
                    tfl.BuiltinOptions.AddOptions if options else 0, options,
                    np.int32([k]).tobytes() if k == 7 else None))
            else:
                o = tfl.OperatorT()
                o.inputs, o.outputs, o.builtinOptions = inputs, outputs, options
                o.builtinOptionsType = tfl.BuiltinOptions.AddOptions if options else 0
                o.intermediates = [k] if k == 7 else None
                sg.operators.append(o)
        m.subgraphs = [sg]
        return m
    assert model_io.pack_model(model(True)) == reference_pack(model(False))
