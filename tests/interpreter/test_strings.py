"""TFLite's packed string buffer (strings.py): round trip, LiteRT reading edgelite's
encoding, and malformed buffers refused in one line naming the tensor."""

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, MemoryLimitError, ModelFormatError
from edgelite.interpreter import strings
from edgelite.errors import DTypeError

from .tflite_builder import ModelBuilder


def test_encode_decode_round_trip():
    values = np.array([["a", ""], ["\u00e9t\u00e9", "x\x00y"]], dtype=object)
    raw = np.frombuffer(strings.encode(values), np.uint8)
    assert raw[:4].view("<i4")[0] == 4
    assert raw[4:24].view("<i4").tolist() == [24, 25, 25, 30, 33]
    back = strings.decode(raw, (2, 2), "t")
    assert back.tolist() == [[b"a", b""], ["\u00e9t\u00e9".encode(), b"x\x00y"]]


def _model_with_buffer(raw: bytes, shape=(2,)) -> bytes:
    b = ModelBuilder()
    table = b.tensor("table", shape, np.bytes_, data=["ab", "c"])
    b.buffers[-1].data = np.frombuffer(raw, np.uint8)
    i = b.tensor("i", (1,), np.int32)
    y = b.tensor("y", (1,), np.bytes_)
    b.op("GATHER", [table, i], [y], axis=0)
    return b.build([i], [y])


@pytest.mark.parametrize("raw, why", [
    (b"\x02\x00", "too few"),
    (strings.encode(["ab", "c", "d"]), "holds 3 strings"),
    (np.array([2, 16, 18, 99], "<i4").tobytes() + b"abc", "offsets"),
    (np.array([2, 16, 14, 17], "<i4").tobytes() + b"abc", "offsets"),
])
def test_malformed_string_buffer_is_one_clear_error(raw, why):
    with pytest.raises(ModelFormatError, match=f"constant tensor 0 'table'.*{why}") as info:
        Interpreter(model_content=_model_with_buffer(raw))
    assert "\n" not in str(info.value)


def test_as_strings_refuses_non_strings():
    assert strings.as_strings(np.array(["a", "b\u00e9"])).tolist() == [b"a", "b\u00e9".encode()]
    assert strings.as_strings(np.array(b"ab\x00\x00")).item() == b"ab\x00\x00"
    with pytest.raises(DTypeError, match="str or bytes elements, got int"):
        strings.as_strings(np.array([b"a", 3], dtype=object))


def test_string_tensors_count_against_the_memory_limit():
    b = ModelBuilder()
    x = b.tensor("words", (1000,), np.bytes_)
    shape = b.const("shape", np.array([10, 100], np.int32))
    y = b.tensor("grid", (10, 100), np.bytes_)
    b.op("RESHAPE", [x, shape], [y])
    model = b.build([x], [y])
    Interpreter(model_content=model, memory_limit=20_000).allocate_tensors()
    with pytest.raises(MemoryLimitError, match="STRING tensor 'grid'.*memory limit"):
        Interpreter(model_content=model, memory_limit=12_000).allocate_tensors()
