"""load_model: plain objects out, and every malformed file rejected with a clear message."""

import time

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, ModelFormatError, UnsupportedOpError, load_model

from .tflite_builder import ModelBuilder


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
    b.op("WHILE", [t3], [y])
    interp = Interpreter(model_content=b.build([x], [y]))  # loading works
    with pytest.raises(UnsupportedOpError) as info:
        interp.allocate_tensors()
    text = str(info.value)
    assert "(3 unsupported item(s))" in text
    assert "operator 0 CUSTOM 'MyOp' (output 'a')" in text
    assert "operator 2 UNKNOWN_BUILTIN_250 (output 'c'): unknown builtin code 250" in text
    assert "operator 3 WHILE (output 'y')" in text and "only subgraph 0" in text
    assert "RELU" not in text


def test_model_path(tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(small_model())
    interp = Interpreter(model_path=str(path))
    interp.allocate_tensors()
    assert [d["name"] for d in interp.get_output_details()] == ["z"]


def test_empty_tensors_are_constants_only_with_their_own_buffer():
    # TFLite's writer gives every constant its own buffer, empty ones too; a zero-element
    # tensor on buffer 0 (the empty sentinel) is an activation an op may write.
    from .tflite_builder import ModelBuilder

    b = ModelBuilder()
    x = b.tensor("x", (0, 3))
    empty_const = b.tensor("c", (0, 3), data=np.zeros((0, 3), np.float32))
    y = b.tensor("y", (0, 3))
    b.op("ADD", [x, empty_const], [y])
    model = load_model(b.build([x], [y]))
    tensors = model.subgraphs[0].tensors
    assert tensors[empty_const].data is not None and tensors[empty_const].data.shape == (0, 3)
    assert tensors[x].data is None and tensors[y].data is None
