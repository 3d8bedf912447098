"""load_model: plain objects out, and every malformed file rejected with a clear message;
what Interpreter / load_model are given (paths that are not readable files, content that
is not bytes); the flatbuffer reader's bounds and field slots."""

import inspect
import os
import re
import struct
import time

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, ModelFormatError, UnsupportedOpError, load_model
from edgelite.interpreter.loader import flatbuf, model
from edgelite.schema import generated_tflite as tfl

from ..tflite_builder import ModelBuilder


def small_model(**mutate):
    """x[1,4] -> FULLY_CONNECTED(w[3,4], no bias) -> y[1,3] -> RELU -> z[1,3]."""
    b = ModelBuilder()
    x = b.tensor("x", (1, 4), shape_signature=(-1, 4))
    w = b.tensor("w", (3, 4), data=np.arange(12, dtype=np.float32).reshape(3, 4))
    y = b.tensor("y", (1, 3))
    z = b.tensor("z", (1, 3), scale=0.5, zero_point=3)
    b.op("FULLY_CONNECTED", [x, w, -1], [y], fused_activation_function="RELU6")
    b.op("RELU", [y], [z])
    b.signature("serving_default", {"inp": x}, {"out": z})
    for fn in mutate.values():
        fn(b)
    return b.build([x], [z])


def test_load_model_plain_objects():
    m = load_model(small_model())
    assert m.version == 3 and m.description == "edgelite test model" and m.has_identifier
    sg = m.subgraphs[0]
    assert [t.name for t in sg.tensors] == ["x", "w", "y", "z"]
    x, w, y, z = sg.tensors
    assert x.shape == (1, 4) and x.shape_signature == (-1, 4) and x.dtype == np.float32
    assert x.data is None and not x.is_constant
    np.testing.assert_array_equal(w.data, np.arange(12, dtype=np.float32).reshape(3, 4))
    assert not w.data.flags.writeable
    assert z.quantization.scale.tolist() == [0.5]
    assert z.quantization.zero_point.tolist() == [3]
    fc, relu = sg.operators
    assert fc.name == "FULLY_CONNECTED" and fc.inputs == (0, 1, -1) and fc.outputs == (2,)
    assert fc.options["fused_activation_function"] == 3  # RELU6
    assert relu.name == "RELU" and dict(relu.options) == {}
    assert sg.inputs == (0,) and sg.outputs == (3,)
    (sig,) = m.signature_defs
    assert sig.key == "serving_default" and dict(sig.inputs) == {"inp": 0}
    assert dict(sig.outputs) == {"out": 3}


def _set_codes(deprecated, builtin):
    def fn(b):
        b.opcodes[0].deprecatedBuiltinCode = deprecated
        b.opcodes[0].builtinCode = builtin
    return fn


def test_opcode_takes_max_of_both_fields():
    # Old files only fill deprecated_builtin_code.
    m = load_model(small_model(codes=_set_codes(9, 0)))
    assert m.subgraphs[0].operators[0].name == "FULLY_CONNECTED"
    m = load_model(small_model(codes=_set_codes(127, 150)))
    assert m.subgraphs[0].operators[0].name == "GELU"


@pytest.mark.parametrize("data", [b"", b"TFL3", b"\x00" * 7])
def test_too_small(data):
    with pytest.raises(ModelFormatError, match="at least 8"):
        load_model(data)


def test_every_truncation_is_rejected():
    data = small_model()
    start = time.perf_counter()
    for n in range(8, len(data) - 1):
        with pytest.raises(ModelFormatError):
            load_model(data[:n])
    assert time.perf_counter() - start < 30


@pytest.mark.parametrize("seed", range(20))
def test_garbage_is_rejected(seed):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, size=int(rng.integers(8, 4000)), dtype=np.uint8).tobytes()
    with pytest.raises(ModelFormatError, match="TFL3|malformed|not a TFLite"):
        load_model(data)
    with pytest.raises(ModelFormatError):
        load_model(data[:4] + b"TFL3" + data[8:])


def test_random_byte_flips_never_crash():
    data = bytearray(small_model())
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for _ in range(400):
        mutated = bytearray(data)
        for pos in rng.integers(0, len(data), size=int(rng.integers(1, 6))):
            mutated[pos] = int(rng.integers(0, 256))
        try:
            load_model(bytes(mutated))
        except ModelFormatError:
            pass
    assert time.perf_counter() - start < 30


def test_wrong_identifier_accepted_only_if_it_parses():
    data = small_model()
    renamed = data[:4] + b"XXXX" + data[8:]
    m = load_model(renamed)  # TFLite, too, reads files without the identifier
    assert not m.has_identifier
    with pytest.raises(ModelFormatError, match="no 'TFL3' file identifier"):
        load_model(b"\x10\x00\x00\x00XXXX" + b"\xff" * 40)


def _shape(index, shape):
    def fn(b):
        b.tensors[index].shape = list(shape)
    return fn


def test_gigantic_shape_is_refused_without_allocating():
    data = small_model(big=_shape(2, (2**20, 2**20, 1024)))
    with pytest.raises(ModelFormatError, match=r"tensor 2 'y'.*over the 2147483648-byte"):
        load_model(data)


def test_negative_dimension():
    with pytest.raises(ModelFormatError, match="negative dimension"):
        load_model(small_model(neg=_shape(2, (1, -3))))


def test_constant_size_mismatch():
    with pytest.raises(ModelFormatError, match="'w' of shape \\[3, 5\\].*needs 60 bytes.*48"):
        load_model(small_model(bad=_shape(1, (3, 5))))


def _field(getter, name, value):
    def fn(b):
        setattr(getter(b), name, value)
    return fn


@pytest.mark.parametrize("mutation,message", [
    (_field(lambda b: b.tensors[1], "buffer", 99), "refers to buffer 99"),
    (_field(lambda b: b.operators[0], "opcodeIndex", 7), "opcode index 7 is out of range"),
    (_field(lambda b: b.operators[1], "inputs", [42]), "input tensor index 42 is out of range"),
    (_field(lambda b: b.operators[1], "inputs", [-2]), "input tensor index -2 is out of range"),
    (_field(lambda b: b.signatures[0].inputs[0], "tensorIndex", 9), "names tensor index 9"),
])
def test_indices_out_of_range(mutation, message):
    with pytest.raises(ModelFormatError, match=message):
        load_model(small_model(m=mutation))


def test_operators_out_of_order_or_cycle():
    def swap(b):
        b.operators.reverse()  # RELU now reads y before FULLY_CONNECTED writes it
    with pytest.raises(ModelFormatError, match="operator 0 \\(RELU\\) reads tensor 2 'y' before"):
        load_model(small_model(m=swap))

    def cycle(b):
        b.operators[0].inputs = [3, 1, -1]  # FC reads z, which RELU computes from FC's output
    with pytest.raises(ModelFormatError, match="reads tensor 3 'z' before"):
        load_model(small_model(m=cycle))


def test_tensor_written_twice():
    def twice(b):
        b.operators[1].outputs = [2]
    with pytest.raises(ModelFormatError, match="tensor 2 'y' is written by operator 1"):
        load_model(small_model(m=twice))


def _external_buffer_model(extra: int = 0) -> tuple[bytes, np.ndarray]:
    weights = np.arange(12, dtype=np.float32).reshape(3, 4) + 0.5

    def build(offset):
        def external(b):
            buf = b.buffers[b.tensors[1].buffer]
            buf.data = None
            buf.offset = offset
            buf.size = weights.nbytes + extra
        return small_model(ext=external)

    head = build(2**40)  # the uint64 fields have a fixed size: same layout, any offset
    data = build(len(head))
    assert len(data) == len(head)
    return data + weights.tobytes(), weights


def test_external_buffer_offset():
    data, weights = _external_buffer_model()
    m = load_model(data)
    np.testing.assert_array_equal(m.subgraphs[0].tensors[1].data, weights)


def test_external_buffer_past_end_of_file():
    data, _ = _external_buffer_model(extra=4)
    with pytest.raises(ModelFormatError, match="buffer 1 claims bytes"):
        load_model(data)


def test_unsupported_ops_are_listed_at_allocate():
    b = ModelBuilder()
    x = b.tensor("x", (2,))
    t1, t2, t3, y = (b.tensor(n, (2,)) for n in ("a", "b", "c", "y"))
    b.op("CUSTOM", [x], [t1], custom_code="MyOp")
    b.op("RELU", [t1], [t2])
    b.op("ADD", [t2, t2], [t3], builtin_code=250)
    b.op("CALL", [t3], [y])
    interp = Interpreter(model_content=b.build([x], [y]))  # loading works
    with pytest.raises(UnsupportedOpError) as info:
        interp.allocate_tensors()
    text = str(info.value)
    assert "(3 unsupported item(s); custom, no kernel, unknown builtin)" in text
    assert "operator 0 CUSTOM 'MyOp' (output 'a'): custom op, no kernel [custom: " in text
    assert "custom_kernels={'MyOp': Kernel(prepare, eval)}" in text
    assert "operator 2 UNKNOWN_BUILTIN_250 (output 'c'): unknown builtin code 250" in text
    assert "operator 3 CALL (output 'y'): no kernel [no kernel: " in text
    assert "RELU" not in text


def test_model_path(tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(small_model())
    interp = Interpreter(model_path=str(path))
    interp.allocate_tensors()
    assert [d["name"] for d in interp.get_output_details()] == ["z"]


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


def test_empty_tensors_are_constants_only_with_their_own_buffer():
    # TFLite's writer gives every constant its own buffer, empty ones too; a zero-element
    # tensor on buffer 0 (the empty sentinel) is an activation an op may write.
    from ..tflite_builder import ModelBuilder

    b = ModelBuilder()
    x = b.tensor("x", (0, 3))
    empty_const = b.tensor("c", (0, 3), data=np.zeros((0, 3), np.float32))
    y = b.tensor("y", (0, 3))
    b.op("ADD", [x, empty_const], [y])
    model = load_model(b.build([x], [y]))
    tensors = model.subgraphs[0].tensors
    assert tensors[empty_const].data is not None and tensors[empty_const].data.shape == (0, 3)
    assert tensors[x].data is None and tensors[y].data is None


def _split_with_an_empty_piece() -> bytes:
    """x [2, 5] -> SPLIT_V on axis 1 into pieces of 3, 0 and 2 columns -> the pieces
    concatenated in reverse order. Every tensor has an empty buffer of its own, as TF's
    converter writes them (its STFT framing splits a shape this way)."""
    b = ModelBuilder()
    x = b.tensor("x", (2, 5), own_buffer=True)
    pieces = [b.tensor(f"piece{i}", (2, n), own_buffer=True) for i, n in enumerate((3, 0, 2))]
    y = b.tensor("y", (2, 5), own_buffer=True)
    b.op("SPLIT_V", [x, b.const("sizes", np.int32([3, 0, 2])), b.const("axis", np.int32(1))],
         pieces, num_splits=3)
    b.op("CONCATENATION", pieces[::-1], [y], axis=1)
    return b.build([x], [y])


@pytest.mark.parametrize("kernels", ("reference", "default"))
def test_a_written_empty_tensor_on_its_own_buffer_is_an_activation(kernels):
    from tests.support import run_edgelite, run_litert

    data = _split_with_an_empty_piece()
    tensors = load_model(data).subgraphs[0].tensors
    assert tensors[2].name == "piece1" and tensors[2].data is None  # not a constant
    assert tensors[2].buffer != 0 and tensors[2].shape == (2, 0)
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    (ours,) = run_edgelite(data, [x], kernels=kernels)
    (want,) = run_litert(data, [x], kernels)
    np.testing.assert_array_equal(ours, want)
    np.testing.assert_array_equal(ours, np.concatenate([x[:, 3:], x[:, :3]], axis=1))


def test_an_empty_input_on_its_own_buffer_is_an_input():
    b = ModelBuilder()
    x = b.tensor("x", (0, 3), own_buffer=True)
    y = b.tensor("y", (0, 3), own_buffer=True)
    b.op("RELU", [x], [y])
    tensors = load_model(b.build([x], [y])).subgraphs[0].tensors
    assert tensors[x].data is None and tensors[y].data is None
