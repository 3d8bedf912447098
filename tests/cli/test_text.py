"""Names from a model file stay inert in every command's output: control characters are
escaped (no clearing, recolouring or forged `error:` lines), long names are cut so tables
stay aligned, and data written to files keeps the exact names."""

import numpy as np
import pytest

from edgelite.schema import generated_tflite as tfl
from edgelite.schema.model_io import pack_model
from tests.interpreter.tflite_builder import ModelBuilder

from tests.support.cli import error_line, invoke

CLEAR = "\x1b[2J"
FORGED = "x\nerror: forged line"
TITLE = "\x1b]0;pwned\x07"
LONG = "conv/" + "\x00\xff" * 2000 + "/Relu"  # 4 KB of binary (\xff prints as ÿ)


def hostile_model(custom: bool = False) -> bytes:
    b = ModelBuilder()
    x = b.tensor(CLEAR + FORGED, [1, 4])
    h = b.tensor(LONG, [1, 4])
    y = b.tensor(TITLE + "probs", [1, 4])
    b.op("RELU", [x], [h])
    if custom:
        b.op("CUSTOM", [h], [y], custom_code="\x1b[31mMyOp" + "Z" * 300)
    else:
        b.op("RELU", [h], [y])
    b.signature(CLEAR + "serving", {FORGED: x}, {TITLE: y})
    model = tfl.ModelT.InitFromPackedBuf(b.build([x], [y], description=TITLE + "desc"), 0)
    meta = tfl.MetadataT()
    meta.name = "\x1b[5mblink" + "m" * 500
    meta.buffer = len(model.buffers)
    buf = tfl.BufferT()
    buf.data = np.frombuffer(b"1.0", np.uint8)
    model.buffers.append(buf)
    model.metadata = [meta]
    return pack_model(model)


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "hostile.tflite"
    path.write_bytes(hostile_model())
    return path


def assert_inert(text: str, max_line: int = 400):
    assert not any(c != "\n" and not c.isprintable() for c in text), repr(text[:200])
    lines = text.splitlines()
    assert not any(line.startswith("error:") for line in lines)
    assert max(len(line) for line in lines) <= max_line
    return lines


@pytest.mark.parametrize("custom", [False, True])
def test_inspect_escapes_and_cuts_every_name(tmp_path, custom):
    path = tmp_path / "m.tflite"
    path.write_bytes(hostile_model(custom))
    result = invoke("inspect", path)
    assert result.exit_code == 0, result.output
    lines = assert_inert(result.output)
    assert "description '\\x1b]0;pwned\\x07desc'" in lines[0]
    sig = next(line for line in lines if "serving (subgraph 0)" in line)
    assert sig.startswith("  \\x1b[2Jserving") and "inputs \\x1b[2J" not in sig
    assert "x\\nerror: forged line -> 0" in sig
    meta = next(line for line in lines if line.startswith("metadata: "))
    assert meta.startswith("metadata: \\x1b[5mblinkmmm") and "...mmm" in meta
    assert meta.endswith("(3 bytes)") and len(meta) < 200
    rows = lines[lines.index(next(line for line in lines if line.startswith("tensors ("))) + 1:]
    rows = rows[:4]  # header + 3 tensors
    assert [row.index(" float32 ") for row in rows[1:]] == [rows[0].index(" dtype ")] * 3
    assert "(input)" in rows[1] and "(output)" in rows[3] and "..." in rows[2]
    if custom:
        op = next(line for line in lines if line.startswith("    1 CUSTOM"))
        assert "CUSTOM \\x1b[" in op and "...ZZZ" in op
        assert op.index(" in [") == next(
            line for line in lines if line.startswith("    0 RELU")).index(" in [")
        assert "arena" not in lines[-3] and lines[-2].startswith("support: edgelite cannot")
        assert lines[-1].startswith("  operator 1 CUSTOM '\\x1b[") and "[custom: " in lines[-1]


def test_run_prints_escaped_names_and_saves_exact_ones(model, tmp_path):
    x = tmp_path / "x.npy"
    np.save(x, np.array([[-1.0, 2.0, -3.0, 4.0]], np.float32))
    result = invoke("run", model, "--input", x)
    assert result.exit_code == 0, result.output
    lines = assert_inert(result.output)
    assert lines[0] == "\\x1b]0;pwned\\x07probs: float32 [1, 4]"
    out = tmp_path / "out.npz"
    result = invoke("run", model, "--input", x, "-o", out)
    assert result.exit_code == 0, result.output
    assert_inert(result.output)
    with np.load(out) as saved:
        assert saved.files == [TITLE + "probs"]
        np.testing.assert_array_equal(saved[TITLE + "probs"], [[0.0, 2.0, 0.0, 4.0]])


def test_run_unknown_input_name_lists_escaped_names(model, tmp_path):
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((1, 4), np.float32))
    line = error_line(invoke("run", model, "--input", f"nope={x}"))
    assert line == ("error: the model has no input named 'nope'; inputs are "
                    "['\\x1b[2Jx\\nerror: forged line']")


def test_bench_tables_escape_names(model):
    result = invoke("bench", model, "--runs", 1, "--warmup", 0, "--top", 5)
    assert result.exit_code == 0, result.output
    lines = assert_inert(result.output)
    ops = lines[lines.index("per op:") + 2:]
    assert len(ops) == 2 and all("RELU" in line for line in ops)
    assert any("conv/\\x00\xff\\x00" in line and "..." in line and line.endswith("/Relu")
               for line in ops)
    assert any(line.endswith("\\x1b]0;pwned\\x07probs") for line in ops)


def test_compare_tables_escape_names(model, tmp_path):
    x = tmp_path / "x.npy"
    np.save(x, np.random.default_rng(0).normal(size=(3, 1, 4)).astype(np.float32))
    result = invoke("compare", model, model, "--data", x)
    assert result.exit_code == 0, result.output
    rows = assert_inert(result.output, max_line=200)[-3:]
    assert rows[0].startswith("  1  \\x1b[2Jx\\nerror: forged line  ")
    assert rows[1].startswith("  2  ...") and "\\x00\xff/Relu  RELU (0)" in rows[1]
    assert rows[2].startswith("  3  \\x1b]0;...  ")  # a fused "a;b" name: the first part
    assert len({row.index("float32") for row in rows}) == 1
    result = invoke("compare", model, model, "--data", x, "--csv")
    assert result.exit_code == 0, result.output
    assert_inert(result.output, max_line=25_000)  # CSV keeps whole names, escaped
    assert ",\\x1b]0;pwned\\x07probs,\\x1b]0;pwned\\x07probs," in result.output


def test_check_table_escapes_node_names(tmp_path):
    from tests.converter.tfgraph import GraphBuilder
    g = GraphBuilder()
    g.placeholder("x", [1, 4])
    g.node("\x1b[2Jerf", "Digamma", ["x"])
    path = tmp_path / "erf.pb"
    path.write_bytes(g.bytes())
    result = invoke("check", path)
    assert result.exit_code == 1
    lines = assert_inert(result.output)
    assert any(line.endswith("UNSUPPORTED: \\x1b[2Jerf") for line in lines)
