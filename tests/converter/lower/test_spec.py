"""Malformed GraphDef nodes get one line naming the node and saying what is wrong.

Each hostile graph is built here, small, with edgelite's graph.proto. The first group is the
list from the issue (each used to escape as a raw IndexError / KeyError / TypeError or be
silently accepted); then the error boundary itself; then the command line.
"""

import tempfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import edgelite
from edgelite.cli.main import main
from edgelite.converter import lower
from edgelite.converter.lower.activations import UNARY
from edgelite.converter.lower.spec import Lowering, NodeSpec
from edgelite.errors import DTypeError, EdgeliteError, GraphError, ShapeError

from ..tfgraph import GraphBuilder

F32 = np.dtype(np.float32)
STRING = 7  # TensorFlow DataType DT_STRING


def graph(*shape) -> GraphBuilder:
    g = GraphBuilder()
    g.placeholder("x", list(shape) or [1, 4])
    return g


def string_const(g: GraphBuilder, name: str, value: bytes = b"4") -> str:
    n = g.gd.node.add(name=name, op="Const")
    n.attr["dtype"].type = STRING
    n.attr["value"].tensor.dtype = STRING
    n.attr["value"].tensor.string_val.append(value)
    return name


def refused(g: GraphBuilder, error: type, *fragments: str, **kwargs) -> str:
    """Convert g; it must raise `error` with one line containing every fragment. Then the
    same through `edgelite convert`: exit status 1, that line on stderr, nothing written."""
    with pytest.raises(error) as info:
        edgelite.convert(g.bytes(), **kwargs)
    message = str(info.value)
    assert "\n" not in message, message
    for fragment in fragments:
        assert fragment in message, message
    assert cli_error(g, **kwargs) == message
    return message


def cli_error(g: GraphBuilder, outputs=(), batch_size=None) -> str:
    """`edgelite convert` on g must fail cleanly; returns its one error line (sans prefix)."""
    with tempfile.TemporaryDirectory() as tmp:
        pb, out = Path(tmp, "g.pb"), Path(tmp, "out.tflite")
        pb.write_bytes(g.bytes())
        args = ["convert", str(pb), "-o", str(out)]
        args += ["--outputs", ",".join(outputs)] if outputs else []
        args += ["--batch-size", str(batch_size)] if batch_size is not None else []
        result = CliRunner().invoke(main, args)
        written = out.exists()
    assert isinstance(result.exception, SystemExit) and result.exit_code == 1, result
    assert "Traceback" not in result.output and not written
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0][len("error: "):]


# -- the cases listed in the issue -------------------------------------------------------------
def test_placeholder_read_as_second_output():
    g = graph()
    g.node("y", "Relu", ["x:1"], T=F32)
    refused(g, GraphError, "node 'y' (Relu): input 0 reads 'x:1', but node 'x' has 1 output(s)")


def test_concat_without_inputs():
    g = graph()
    g.node("y", "ConcatV2", [], T=F32, N=0)
    refused(g, GraphError, "node 'y' (ConcatV2): takes at least 2 value inputs and the axis, "
            "found 0 data inputs", outputs=["y"])


@pytest.mark.parametrize("op", ["BiasAdd", "MatMul"])
def test_binary_op_with_one_input(op):
    g = graph()
    g.node("y", op, ["x"], T=F32)
    refused(g, GraphError, f"node 'y' ({op}): takes 2 data inputs, found 1")


@pytest.mark.parametrize("op, what, allowed", [
    ("AddV2", "operand y", "a float or integer type"),   # a string Const fed to AddV2
    ("Reshape", "the shape", "int32/int64"),              # a Reshape with a string shape
])
def test_string_const_as_operand(op, what, allowed):
    g = graph()
    string_const(g, "s")
    g.node("y", op, ["x", "s"], T=F32)
    refused(g, DTypeError, f"node 'y' ({op}): input 1 ('s', {what}) is string; {op} takes "
            f"{allowed} there")


def test_conv_stride_beyond_bound():
    g = graph(1, 4, 4, 1)
    g.const("w", np.ones((1, 1, 1, 1)))
    g.node("y", "Conv2D", ["x", "w"], T=F32, strides=[1, 2**62, 2**62, 1], padding="SAME")
    refused(g, GraphError, "node 'y' (Conv2D): attribute strides=[1, 4611686018427387904, "
            "4611686018427387904, 1]: 4611686018427387904 is outside [1, 65536]")


def test_concat_axis_of_shape_2():
    g = graph()
    g.const("axis", np.array([0, 1], np.int32))
    g.node("y", "ConcatV2", ["x", "x", "axis"], T=F32, N=2)
    refused(g, ShapeError, "node 'y' (ConcatV2): input 2 ('axis', the axis) has shape [2]; it "
            "must be a scalar")


def test_gather_axis_of_shape_2():
    g = graph()
    g.const("i", np.array([0], np.int32))
    g.const("axis", np.array([0, 1], np.int32))
    g.node("y", "GatherV2", ["x", "i", "axis"])
    refused(g, ShapeError, "node 'y' (GatherV2): input 2 ('axis', the axis) has shape [2]; it "
            "must be a scalar")


def test_batch_norm_scale_with_wrong_channel_count():
    g = graph(1, 2, 2, 3)
    for name in ("scale", "offset", "mean", "variance"):
        g.const(name, np.ones(5))
    g.node("y", "FusedBatchNormV3", ["x", "scale", "offset", "mean", "variance"], T=F32,
           epsilon=0.001, is_training=False)
    refused(g, ShapeError, "node 'y' (FusedBatchNormV3): the scale has shape [5] but the input "
            "(shape [1, 2, 2, 3]) has 3 channels")


def test_const_dtype_attr_disagrees_with_its_tensor():
    g = graph()
    g.const("c", np.ones(4, np.float32))
    g.gd.node[-1].attr["dtype"].type = 3  # DT_INT32
    g.node("y", "AddV2", ["x", "c"], T=F32)
    refused(g, DTypeError, "node 'c' (Const): attribute dtype is int32 but its value holds "
            "float32")


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_op_with_an_extra_input(op):
    g = graph()
    g.node("y", op, ["x", "x"])
    refused(g, GraphError, f"node 'y' ({op}): takes 1 data input, found 2")


# -- more of what the specs check --------------------------------------------------------------
def test_type_attr_must_match_the_inputs():
    g = graph()
    g.const("c", np.ones(4, np.float32))
    g.node("y", "AddV2", ["x", "c"], T=np.dtype(np.int32))
    refused(g, DTypeError, "node 'y' (AddV2): input 0 ('x') is float32 but attribute T=int32")


def test_inputs_typed_alike_must_agree():
    g = graph()
    g.const("c", np.ones(4, np.int32))
    g.node("y", "Mul", ["x", "c"])
    refused(g, DTypeError, "node 'y' (Mul): input 1 ('c') is int32 but input 0 ('x') is float32")


def test_attribute_of_the_wrong_kind():
    g = graph(1, 4, 4, 1)
    g.node("y", "MaxPool", ["x"], T=F32, ksize=2, strides=[1, 1, 1, 1], padding="VALID")
    refused(g, GraphError, "node 'y' (MaxPool): attribute ksize should be of kind 'list', "
            "found 'i'")


def test_variadic_count_must_match_n():
    g = graph()
    g.node("y", "Pack", ["x", "x"], T=F32, N=3)
    refused(g, GraphError, "node 'y' (Pack): attribute N=3 but the node has 2 value inputs")


def test_axis_checked_against_a_known_rank():
    g = graph()
    g.const("axis", np.int32(2))
    g.node("y", "ConcatV2", ["x", "x", "axis"], T=F32, N=2)
    refused(g, ShapeError, "node 'y' (ConcatV2): axis 2 is out of range for rank 2 "
            "(valid: -2 to 1)")


def test_index_constant_beyond_int32():
    g = graph()
    g.const("shape", np.array([1, 2**40], np.int64))
    g.node("y", "Reshape", ["x", "shape"], T=F32)
    refused(g, ShapeError, "node 'y' (Reshape): input 1 ('shape', the shape) holds "
            "1099511627776, outside the int32 range")


def test_node_names_in_messages_are_escaped():
    g = graph()
    g.node("evil\n\x1b[2Jname", "Relu", ["x", "x"], T=F32)
    message = refused(g, GraphError, "node 'evil\\n\\x1b[2Jname' (Relu): takes 1 data input")
    assert "\x1b" not in message


# -- the error boundary ------------------------------------------------------------------------
def with_rule(monkeypatch, op: str, rule) -> None:
    monkeypatch.setitem(lower.REGISTRY, op, Lowering(rule, lower.REGISTRY[op].spec))


def test_unexpected_exception_becomes_one_graph_error(monkeypatch):
    def broken(ctx, node):
        raise IndexError("list index out of range\nsecond line")
    with_rule(monkeypatch, "Relu", broken)
    g = graph()
    g.node("y", "Relu", ["x"], T=F32)
    message = refused(g, GraphError, "node 'y' (Relu): cannot be converted (IndexError: list "
                      "index out of range)")
    assert "second line" not in message


def test_memory_error_is_not_hidden(monkeypatch):
    def greedy(ctx, node):
        raise MemoryError
    with_rule(monkeypatch, "Relu", greedy)
    g = graph()
    g.node("y", "Relu", ["x"], T=F32)
    with pytest.raises(MemoryError):
        edgelite.convert(g.bytes())


@pytest.mark.parametrize("raised, expected", [
    ("the axis is wrong", "node 'y' (Relu): the axis is wrong"),
    ("node 'y' (Relu): already named", "node 'y' (Relu): already named"),
])
def test_edgelite_errors_get_the_node_prefixed_once(monkeypatch, raised, expected):
    def rule(ctx, node):
        raise ShapeError(raised)
    with_rule(monkeypatch, "Relu", rule)
    g = graph()
    g.node("y", "Relu", ["x"], T=F32)
    assert refused(g, ShapeError) == expected


def test_error_subclass_with_another_constructor_is_named_too(monkeypatch):
    class Limit(EdgeliteError):
        def __init__(self, what: str, value: int):
            super().__init__(f"{what} {value} is too large")

    def rule(ctx, node):
        raise Limit("size", 9)
    with_rule(monkeypatch, "Relu", rule)
    g = graph()
    g.node("y", "Relu", ["x"], T=F32)
    assert refused(g, GraphError) == "node 'y' (Relu): size 9 is too large"


def test_folding_errors_name_the_node():
    """Constant folding runs inside the boundary: the interpreter's error gets the node."""
    g = GraphBuilder()
    g.const("a", np.ones(2))
    g.const("b", np.ones(3))
    g.node("y", "AddV2", ["a", "b"], T=F32)
    g.node("z", "Relu", ["y"], T=F32)
    message = refused(g, ShapeError, outputs=["z"])
    assert message.startswith("node 'y' (AddV2): ") and "[2] and [3]" in message


def test_every_op_has_a_spec():
    assert all(isinstance(e, Lowering) and isinstance(e.spec, NodeSpec)
               for e in lower.REGISTRY.values())
    variadic = {op for op, e in lower.REGISTRY.items() if e.spec.variadic is not None}
    assert variadic == {"ConcatV2", "Pack", "IdentityN", "Merge", "While", "StatelessWhile",
                        "If", "StatelessIf", "PartitionedCall", "StatefulPartitionedCall",
                        "DynamicStitch", "ParallelDynamicStitch", "Einsum"}


def test_check_still_lists_unsupported_ops_next_to_a_malformed_node():
    g = graph()
    g.node("e", "Digamma", ["x"])
    g.node("y", "Relu", ["x", "x"], T=F32)  # malformed, but the table comes first
    report = edgelite.converter.check(g.bytes(), outputs=["e", "y"])
    assert [(s.op_type, s.nodes) for s in report.unsupported] == [("Digamma", ["e"])]


# -- the command line --------------------------------------------------------------------------
def malformed_graph(tmp_path):
    g = graph(1, 4, 4, 1)
    g.const("w", np.ones((1, 1, 1, 1)))
    g.node("y", "Conv2D", ["x", "w"], T=F32, strides=[1, 0, 1, 1], padding="SAME")
    path = tmp_path / "bad.pb"
    path.write_bytes(g.bytes())
    return path


@pytest.mark.parametrize("command", ["convert", "check"])
def test_cli_prints_one_error_line(tmp_path, command):
    path = malformed_graph(tmp_path)
    out = ["-o", str(tmp_path / "out.tflite")] if command == "convert" else []
    result = CliRunner().invoke(main, [command, str(path), *out])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "error: node 'y' (Conv2D): attribute strides=[1, 0, 1, 1]: 0 is outside [1, 65536]"]
    assert "Traceback" not in result.output
    assert not (tmp_path / "out.tflite").exists()


def test_cli_check_with_every_op_supported_but_one_malformed(tmp_path):
    g = graph()
    g.node("y", "Relu", ["x:1"], T=F32)
    path = tmp_path / "bad.pb"
    path.write_bytes(g.bytes())
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("error: node 'y' (Relu): input 0 reads 'x:1'")



def test_support_table_escapes_names_from_the_file():
    g = graph()
    g.node("e\x1b[2J", "Erf\nerror: forged", ["x"])
    table = edgelite.converter.check(g.bytes()).table()
    assert table.splitlines()[1].split() == ["Erf\\nerror:", "forged", "1",
                                             "UNSUPPORTED:", "e\\x1b[2J"]


@pytest.mark.parametrize("shape, kwargs", [
    ([0, 4], {}), ([1, 2**31], {}), ([-1, 4], {"batch_size": 0})])
def test_input_dimensions_must_be_positive_int32(shape, kwargs):
    g = graph(*shape)
    g.node("y", "Relu", ["x"], T=F32)
    refused(g, ShapeError, "input 'x' has shape", "every dimension must be between 1 and "
            "2147483647", **kwargs)
