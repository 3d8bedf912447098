"""Names from a GraphDef, a data file or the command line reach converter messages and
reports escaped and cut (tests/converter/hostile.py): unsupported-op reports, lowering and
graph errors, quantization and calibration errors."""

import numpy as np
import pytest

import edgelite.converter
from edgelite.converter import QuantizeOptions
from edgelite.converter.quantize import CalibConfig, QuantMode
from edgelite.errors import EdgeliteError, GraphError, UnsupportedOpError

from .hostile import BINARY, HEAD, HOSTILE, assert_inert
from .tfgraph import GraphBuilder

F32 = np.dtype(np.float32)


def graph(input_name: str = "x") -> GraphBuilder:
    g = GraphBuilder()
    g.placeholder(input_name, [1, 4])
    return g


def test_unsupported_op_report_escapes_node_names_and_op_types():
    g = graph()
    g.node(HOSTILE, "\x1b[31mEvil\nerror: op" + BINARY, ["x"])
    g.node("y", "Relu", [HOSTILE], T=F32)
    table = edgelite.converter.check(g.bytes()).table()
    rows = assert_inert(table)
    assert rows[1].startswith("  \\x1b[31mEvil\\ner...")  # cut to the op type column
    assert "UNSUPPORTED: " + HEAD in rows[1]
    assert [row.split()[:3] for row in rows[2:]] == [["Placeholder", "1", "supported"],
                                                     ["Relu", "1", "supported"]]
    with pytest.raises(UnsupportedOpError) as info:
        edgelite.converter.convert(g.bytes())
    lines = assert_inert(str(info.value))
    assert lines[0] == "1 node(s) use 1 op type(s) edgelite cannot convert:"


def test_lowering_error_escapes_the_node_name():
    g = graph()
    g.node(HOSTILE, "Relu", ["x:1"], T=F32)  # x has no output 1
    with pytest.raises(GraphError) as info:
        edgelite.converter.convert(g.bytes())
    (line,) = assert_inert(str(info.value))
    assert line.startswith(f"node '{HEAD}") and "(Relu): input 0 reads 'x:1'" in line


@pytest.mark.parametrize("where", ["input", "missing node"])
def test_graph_errors_escape_names(where):
    g = graph(HOSTILE if where == "input" else "x")
    g.node("y", "Relu", [HOSTILE if where == "input" else HOSTILE + "gone"], T=F32)
    if where == "input":  # --outputs names a node that does not exist
        with pytest.raises(GraphError) as info:
            edgelite.converter.convert(g.bytes(), outputs=[HOSTILE + "?"])
        expected = "output '"
    else:
        with pytest.raises(GraphError) as info:
            edgelite.converter.convert(g.bytes())
        expected = "node 'y' (Relu) reads '"
    (line,) = assert_inert(str(info.value))
    assert line.startswith(expected + HEAD)


def test_missing_ranges_escape_tensor_names():
    g = graph(HOSTILE)
    g.node("y", "Relu", [HOSTILE], T=F32)
    with pytest.raises(EdgeliteError) as info:
        edgelite.converter.convert(g.bytes(), quantize=QuantizeOptions(QuantMode.INT8))
    (line,) = assert_inert(str(info.value))
    assert line.startswith(f"2 tensor(s) have no range: '{HEAD}") and ", 'y'. " in line


def test_calibration_data_names_are_escaped(tmp_path, monkeypatch):
    g = graph(HOSTILE + "a")
    g.placeholder(HOSTILE + "b", [1, 4])
    g.node("y", "Add", [HOSTILE + "a", HOSTILE + "b"], T=F32)
    monkeypatch.chdir(tmp_path)
    data = "calib.npz"
    member = HOSTILE[:200].replace("\x00", "")  # zip cuts a member name at NUL
    np.savez(data, **{member: np.zeros((2, 4), np.float32)})
    options = QuantizeOptions(QuantMode.INT8, calib=data)
    with pytest.raises(EdgeliteError) as info:
        edgelite.converter.convert(g.bytes(), quantize=options)
    (line,) = assert_inert(str(info.value))
    assert line.startswith(f"calibration data 'calib.npz' holds arrays ['{HEAD}")
    assert f"name them after the model inputs ['{HEAD}" in line


@pytest.mark.parametrize("option", ["input_ranges", "keep_float", "calib_method"])
def test_quantization_options_escape_names(option):
    g = graph(HOSTILE)
    g.node("y", "Relu", [HOSTILE], T=F32)
    kwargs = {"input_ranges": {"in\x1b[2J\n" + BINARY: (0.0, 1.0)},
              "keep_float": ("in\x1b[2J\n" + BINARY,)}
    with pytest.raises(EdgeliteError) as info:
        if option == "calib_method":
            CalibConfig.parse("in\x1b[2J\n" + BINARY)
        else:
            edgelite.converter.convert(g.bytes(), quantize=QuantizeOptions(
                QuantMode.INT8, default_range=(-1.0, 1.0), **{option: kwargs[option]}))
    (line,) = assert_inert(str(info.value), head="'in\\x1b[2J\\n")
    if option == "input_ranges":
        assert f"is not a model input; inputs are ['{HEAD}" in line
