"""What Interpreter / load_model are given: paths that are not readable files, content
that is not bytes, values a file may not hold (SOFTMAX beta), and the flatbuffer reader's
bounds and field slots."""

import inspect
import os
import re
import struct

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, ModelFormatError, load_model
from edgelite.interpreter import flatbuf, model
from edgelite.schema import generated_tflite as tfl

from .test_model import small_model
from .tflite_builder import ModelBuilder


def _one_line(exc_info) -> str:
    text = str(exc_info.value)
    assert "\n" not in text
    return text


# --------------------------------------------------------------------------- paths


def test_directory_missing_and_special_paths(tmp_path):
    with pytest.raises(ModelFormatError) as info:
        Interpreter(model_path=tmp_path)
    assert _one_line(info) == f"cannot read model '{tmp_path}': it is a directory"
    missing = tmp_path / "nope.tflite"
    with pytest.raises(ModelFormatError) as info:
        Interpreter(model_path=str(missing))
    assert _one_line(info) == f"cannot read model '{missing}': no such file"
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # opening it would wait for a writer forever
    with pytest.raises(ModelFormatError) as info:
        Interpreter(model_path=fifo)
    assert _one_line(info) == f"cannot read model '{fifo}': it is not a regular file"
    with pytest.raises(ModelFormatError, match="model_path must be a path .* got int"):
        Interpreter(model_path=3)  # open(3) would read file descriptor 3


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file(tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(small_model())
    path.chmod(0)
    with pytest.raises(ModelFormatError) as info:
        Interpreter(model_path=path)
    assert _one_line(info) == f"cannot read model '{path}': permission denied"


def test_names_in_paths_are_escaped(tmp_path):
    path = tmp_path / "a\x1b[2Jb"
    with pytest.raises(ModelFormatError) as info:
        Interpreter(model_path=path)
    assert "\x1b" not in str(info.value) and "a\\x1b[2Jb" in str(info.value)


def test_model_content_types():
    data = small_model()
    for content in (bytearray(data), memoryview(data), np.frombuffer(data, np.uint8)):
        assert Interpreter(model_content=content).model.subgraphs[0].tensors[0].name == "x"
    with pytest.raises(ModelFormatError) as info:
        Interpreter(model_content="model.tflite")
    assert _one_line(info) == ("model content is a str, not bytes: pass the .tflite file's "
                               "bytes, or its path as model_path")
    for content, kind in ((12345, "int"), ([1, 2, 3], "list"), (None, "NoneType")):
        with pytest.raises(ModelFormatError, match=f"model content must be bytes-like .*got "
                                                   f"{kind}"):
            load_model(content)


# --------------------------------------------------------------------------- SOFTMAX beta


@pytest.mark.parametrize("beta", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("dtype", [np.float32, np.int8])
def test_softmax_beta_must_be_finite(beta, dtype):
    b = ModelBuilder()
    q = {} if dtype == np.float32 else {"scale": 0.1, "zero_point": 0}
    x = b.tensor("x", (1, 5), dtype, **q)
    q = {} if dtype == np.float32 else {"scale": 1 / 256, "zero_point": -128}
    y = b.tensor("probs", (1, 5), dtype, **q)
    b.op("SOFTMAX", [x], [y], beta=beta)
    interp = Interpreter(model_content=b.build([x], [y]))
    with pytest.raises(ModelFormatError) as info:
        interp.allocate_tensors()
    assert _one_line(info) == (f"operator 0 (SOFTMAX, output 'probs'): beta is {beta}; "
                               "SOFTMAX needs a finite beta")


# --------------------------------------------------------------------------- the reader


_TABLES = {"MODEL": tfl.Model, "SUBGRAPH": tfl.SubGraph, "TENSOR": tfl.Tensor,
           "OPERATOR": tfl.Operator, "BUFFER": tfl.Buffer, "OPCODE": tfl.OperatorCode,
           "QUANT": tfl.QuantizationParameters, "SIGNATURE": tfl.SignatureDef,
           "TENSOR_MAP": tfl.TensorMap, "METADATA": tfl.Metadata}
_ACCESSOR = {"OPCODES": "OperatorCodes", "OPTIONS_TYPE": "BuiltinOptionsType",
             "OPTIONS": "BuiltinOptions", "OPTIONS2_TYPE": "BuiltinOptions2Type",
             "OPTIONS2": "BuiltinOptions2", "OPCODE": "OpcodeIndex",
             "DEPRECATED_CODE": "DeprecatedBuiltinCode", "CODE": "BuiltinCode",
             "DIMENSION": "QuantizedDimension", "KEY": "SignatureKey",
             "SUBGRAPH": "SubgraphIndex", "INDEX": "TensorIndex", "SIGNATURES": "SignatureDefs",
             "DETAILS_TYPE": "DetailsType"}


def test_field_slots_match_the_generated_accessors():
    # model.py names each field's vtable slot; the generated code reads slot i at vtable
    # offset 4 + 2 * i.
    checked = 0
    for constant, slot in vars(model).items():
        prefix = next((p for p in sorted(_TABLES, key=len, reverse=True)
                       if constant.startswith(p + "_")), None)
        if prefix is None or not isinstance(slot, int) or constant == "MAX_TENSOR_BYTES":
            continue
        field = constant[len(prefix) + 1:]
        name = _ACCESSOR.get(field) or "".join(w.capitalize() for w in field.split("_"))
        source = inspect.getsource(getattr(_TABLES[prefix], name))
        offset = int(re.search(r"Offset\((\d+)\)", source).group(1))
        assert offset == 4 + 2 * slot, constant
        checked += 1
    assert checked == 51


def test_reader_refuses_positions_outside_the_buffer():
    # A table at 4 whose vtable offset points 100 bytes before the start of the buffer:
    # struct would read it from the end (negative offsets count from the end).
    data = struct.pack("<Ii", 4, 100) + bytes(8)
    with pytest.raises(flatbuf.FlatbufferError, match="a vtable at bytes -96..-92 lies "
                                                      "outside the 16-byte buffer"):
        flatbuf.Reader(data).root()
    # A vector whose length runs past the end.
    vtable = struct.pack("<HHH", 6, 8, 4)  # one field, at offset 4 of the table
    table = struct.pack("<iI", 6, 4)  # vtable at 12 - 6; the field -> a vector 4 further
    data = struct.pack("<I", 12) + bytes(2) + vtable + table + struct.pack("<I", 1000)
    r = flatbuf.Reader(data)
    t = r.root()
    with pytest.raises(flatbuf.FlatbufferError, match="a vector of 1000 elements"):
        r.vector(t, 0, 4)
    assert r.vector(t, 1, 4) == (0, 0)  # an absent field


def test_a_truncated_file_names_the_part_being_read():
    data = small_model()
    with pytest.raises(ModelFormatError) as info:
        load_model(data[:len(data) // 2])
    assert _one_line(info).startswith("malformed or truncated .tflite file: ")


def _chain(n_ops: int) -> bytes:
    b = ModelBuilder()
    ts = [b.tensor(f"t{i}", (1, 4)) for i in range(n_ops + 1)]
    for i in range(n_ops):
        b.op("RELU" if i % 2 else "TANH", [ts[i]], [ts[i + 1]])
    return b.build([ts[0]], [ts[-1]])


def test_loading_reads_a_constant_number_of_tables_per_op(monkeypatch):
    reads = []
    real = flatbuf.Reader.table

    def counting(self, pos):
        reads.append(pos)
        return real(self, pos)

    monkeypatch.setattr(flatbuf.Reader, "table", counting)
    counts = {}
    for n in (500, 2000):
        reads.clear()
        assert len(load_model(_chain(n)).subgraphs[0].operators) == n
        counts[n] = len(reads)
    # model, subgraph, buffer 0, 2 opcodes; per op: one tensor table and one operator
    # table (options tables: TANH and RELU have none)
    assert counts == {500: 5 + 2 * 500 + 1, 2000: 5 + 2 * 2000 + 1}
