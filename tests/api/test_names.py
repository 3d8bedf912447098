"""Names from files are escaped and cut before they are printed (api/names.py)."""

from edgelite.names import MAX_NAME_CHARS, quoted, shown


def test_plain_names_are_unchanged():
    assert shown("conv1/Relu:1") == "conv1/Relu:1"
    assert quoted("model/dense/BiasAdd") == "'model/dense/BiasAdd'"
    assert shown("caf\u00e9 \u6a21\u578b") == "caf\u00e9 \u6a21\u578b"  # printable unicode stays


def test_control_characters_are_escaped():
    assert shown("a\x1b[2Jb") == "a\\x1b[2Jb"  # clear screen
    assert shown("x\nerror: forged") == "x\\nerror: forged"
    assert shown("x\r\t\x00") == "x\\r\\t\\x00"
    assert shown("evil\u202etxt.exe") == "evil\\u202etxt.exe"  # bidi override
    assert shown("line\u2028sep") == "line\\u2028sep"
    for text in (shown("\x1b\x07\x08\x7f\n"), quoted("\x9b31m")):
        assert text.isprintable()


def test_bytes_and_non_strings():
    assert shown(b"ok\xff\x1b") == "ok\\xff\\x1b"
    assert shown(7) == "7"


def test_long_names_are_cut_keeping_head_and_tail():
    name = "block_" * 100 + "/Relu:1"
    text = shown(name)
    assert len(text) == MAX_NAME_CHARS
    assert text.startswith("block_block_") and text.endswith("/Relu:1") and "..." in text
    flood = "\x00" * 1_000_000
    text = shown(flood)
    assert len(text) <= MAX_NAME_CHARS and text.isprintable()
    assert len(quoted("q" * 500)) == MAX_NAME_CHARS + 2


def test_short_limits_are_respected():
    for limit in (1, 5, 8, 12, 20, 33, 40):
        assert len(shown("n" * 100 + "\x1b", limit)) == limit


# --------------------------------------------------------------------------- in messages

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from edgelite.interpreter import EdgeliteError, Interpreter  # noqa: E402

from ..interpreter.tflite_builder import ModelBuilder  # noqa: E402

HOSTILE = "\x1b[2Jx\nerror: forged\u202e" + "".join(map(chr, range(256))) * 40


def _assert_inert(text: str) -> None:
    assert text.isprintable(), text[:200]  # no ESC, no newline, no bidi control
    assert len(text) < 600 and "\\x1b[2Jx\\nerror: forged" in text


def _model(x_name: str, y_dtype=np.float32) -> bytes:
    b = ModelBuilder()
    x = b.tensor(x_name, (1, 4))
    c = b.const(HOSTILE + "c", np.ones((1, 4), y_dtype))
    y = b.tensor(HOSTILE + "y", (1, 4), y_dtype)
    b.op("ADD", [x, c], [y])
    return b.build([x], [y])


def test_interpreter_messages_escape_names():
    interp = Interpreter(model_content=_model(HOSTILE))
    interp.allocate_tensors()
    with pytest.raises(EdgeliteError) as info:  # set_tensor: wrong shape
        interp.set_tensor(0, np.zeros((2, 4), np.float32))
    _assert_inert(str(info.value))
    with pytest.raises(EdgeliteError) as info:  # a kernel's prepare: mixed dtypes
        Interpreter(model_content=_model(HOSTILE, np.int32)).allocate_tensors()
    _assert_inert(str(info.value))


def test_profile_table_escapes_names():
    interp = Interpreter(model_content=_model(HOSTILE))
    interp.allocate_tensors()
    for line in interp.profile(runs=1, warmup=0).table().split("\n"):
        assert line.isprintable() and len(line) < 200
