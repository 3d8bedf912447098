"""converter/lower/functional.py: While / If -> WHILE / IF with subgraphs; calls inlined.

The .tflite files with WHILE / IF run in LiteRT (the oracle; edgelite's interpreter gains
them in another branch); inlined calls leave plain ops that run in edgelite too.
"""

import numpy as np
import pytest

import edgelite
from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.ir import all_graphs
from edgelite.errors import GraphError, UnsupportedOpError
from tests.support import run_litert

from ..control_flow.library import BOOL, F32, Function, call, counter_loop
from ..tfgraph import GraphBuilder
from .lowering import check, floats, rng

COVERED = {"While", "StatelessWhile", "If", "StatelessIf", "PartitionedCall",
           "StatefulPartitionedCall"}


@pytest.mark.parametrize("op", ["While", "StatelessWhile"])
def test_while_becomes_a_while_op_with_cond_and_body(op):
    result = convert_detailed(counter_loop(op).bytes(), ConvertOptions(outputs=["y"]))
    graphs = all_graphs(result.graph)
    assert [g.name for g in graphs] == ["main", "cond", "body"]
    assert result.graph.op_counts() == {"WHILE": 1}
    cond, body = result.graph.ops[0].subgraphs.values()
    assert (cond.op_counts(), body.op_counts()) == ({"LESS": 1}, {"ADD": 1, "MUL": 1})
    assert len(body.inputs) == len(body.outputs) == len(cond.inputs) == 2
    x = floats(rng(), 1, 4)
    np.testing.assert_allclose(run_litert(result.model, {"x": x}, "default")[0], x * 8, rtol=1e-6)


def _branches(g: GraphBuilder) -> None:
    then = Function(g, "then", {"a": F32}, {"out": "r:activations:0"})
    then.node("r", "Relu", ["a"], T=F32)
    other = Function(g, "else", {"a": F32}, {"out": "n:y:0"})
    other.node("n", "Neg", ["a"], T=F32)


@pytest.mark.parametrize("op", ["If", "StatelessIf"])
def test_if_on_a_run_time_condition_becomes_an_if_op(op):
    g = GraphBuilder()
    g.placeholder("x", [2, 3])
    g.placeholder("p", [], BOOL)
    _branches(g)
    call(g, "cond", op, ["p", "x"], then_branch="then", else_branch="else")
    g.node("y", "Identity", ["cond"], T=F32)
    result = convert_detailed(g.bytes(), ConvertOptions(inputs=["x", "p"], outputs=["y"]))
    assert result.graph.op_counts() == {"IF": 1}
    assert [g.op_counts() for g in all_graphs(result.graph)[1:]] == [{"RELU": 1}, {"NEG": 1}]
    x = floats(rng(), 2, 3)
    for p, want in ((True, np.maximum(x, 0)), (False, -x)):
        (got,) = run_litert(result.model, {"x": x, "p": p}, "default")
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("pred", [True, False])
def test_if_on_a_constant_inlines_the_taken_branch(pred):
    g = GraphBuilder()
    g.placeholder("x", [2, 3])
    g.const("p", np.array(pred))
    _branches(g)
    call(g, "cond", "StatelessIf", ["p", "x"], then_branch="then", else_branch="else")
    x = floats(rng(), 2, 3)
    check(g, {"x": x}, np.maximum(x, 0) if pred else -x, ["RELU" if pred else "NEG"],
          outputs=["cond"])


def _with_gradient_outputs(g: GraphBuilder) -> None:
    """Branches as a training graph's If has them: the value, then intermediates wrapped
    in Optionals for the gradient (OptionalFromValue / OptionalNone: no TFLite op)."""
    then = Function(g, "then", {"a": F32}, {"out": "r:activations:0",
                                            "keep": "o:optional:0"})
    then.node("r", "Relu", ["a"], T=F32)
    then.node("o", "OptionalFromValue", ["a"])
    other = Function(g, "else", {"a": F32}, {"out": "n:y:0", "keep": "o:optional:0"})
    other.node("n", "Neg", ["a"], T=F32)
    other.node("o", "OptionalNone", [])


@pytest.mark.parametrize("pred", [None, True, False])
def test_only_the_if_results_something_reads_are_lowered(pred):
    g = GraphBuilder()
    g.placeholder("x", [2, 3])
    if pred is None:
        g.placeholder("p", [], BOOL)
    else:
        g.const("p", np.array(pred))
    _with_gradient_outputs(g)
    call(g, "cond", "If", ["p", "x"], then_branch="then", else_branch="else")
    g.node("y", "Identity", ["cond"], T=F32)
    inputs = ["x", "p"] if pred is None else ["x"]
    result = convert_detailed(g.bytes(), ConvertOptions(inputs=inputs, outputs=["y"]))
    x = floats(rng(), 2, 3)
    if pred is None:
        assert [len(sub.outputs) for sub in all_graphs(result.graph)[1:]] == [1, 1]
        for p, want in ((True, np.maximum(x, 0)), (False, -x)):
            (got,) = run_litert(result.model, {"x": x, "p": p}, "default")
            np.testing.assert_array_equal(got, want)
    else:
        assert result.graph.op_counts() == {"RELU": 1} if pred else {"NEG": 1}
    with pytest.raises(UnsupportedOpError, match="Optional(FromValue|None) "):  # read: refused
        convert_detailed(g.bytes(), ConvertOptions(inputs=inputs, outputs=["y", "cond:1"]))


def _relu_twice(g: GraphBuilder, name: str = "f") -> Function:
    f = Function(g, name, {"a": F32}, {"out": "m:z:0"})
    f.const("two", np.float32(2))
    f.node("r", "Relu", ["a"], T=F32)
    f.node("m", "Mul", ["r:activations:0", "two:output:0"], T=F32)
    return f


@pytest.mark.parametrize("op", ["PartitionedCall", "StatefulPartitionedCall"])
def test_calls_are_inlined(op):
    g = GraphBuilder()
    g.placeholder("x", [2, 3])
    _relu_twice(g)
    call(g, "c", op, ["x"], f="f")
    x = floats(rng(), 2, 3)
    run = check(g, {"x": x}, np.maximum(x, 0) * 2, ["RELU", "MUL"], outputs=["c"])
    assert all_graphs(run.graph) == [run.graph]


def test_nested_calls_are_inlined_with_qualified_names():
    g = GraphBuilder()
    g.placeholder("x", [2, 3])
    inner = Function(g, "inner", {"a": F32}, {"out": "m:z:0"})
    inner.const("two", np.float32(2))
    inner.node("r", "Tanh", ["a"], T=F32)
    inner.node("m", "Mul", ["r:y:0", "two:output:0"], T=F32)
    outer = Function(g, "outer", {"b": F32}, {"out": "c2:output:0"})
    outer.node("c1", "PartitionedCall", ["b"], f={"func": "inner"})
    outer.node("c2", "PartitionedCall", ["c1:output:0"], f={"func": "inner"})
    call(g, "c", "PartitionedCall", ["x"], f="outer")
    x = floats(rng(), 2, 3)
    run = check(g, {"x": x}, np.tanh(np.tanh(x) * 2) * 2, ["TANH", "MUL"] * 2,
                outputs=["c"])
    names = {t.name for t in run.graph.tensors()}
    assert {"c/c1/r", "c/c2/r"} <= names


def test_a_function_calling_itself_is_refused():
    g = GraphBuilder()
    g.placeholder("x", [2, 3])
    f = Function(g, "f", {"a": F32}, {"out": "c:output:0"})
    f.node("c", "PartitionedCall", ["a"], f={"func": "f"})
    call(g, "c", "PartitionedCall", ["x"], f="f")
    with pytest.raises(GraphError, match=r"function 'f' calls itself .*recursive functions "
                       "cannot be converted"):
        edgelite.convert(g.bytes(), outputs=["c"])


def test_a_missing_function_is_named():
    g = GraphBuilder()
    g.placeholder("x", [2, 3])
    call(g, "c", "PartitionedCall", ["x"], f="nowhere")
    with pytest.raises(GraphError, match=r"^node 'c' \(PartitionedCall\) calls function "
                       r"'nowhere', which is not in the graph's function library"):
        edgelite.convert(g.bytes(), outputs=["c"])


def test_unsupported_ops_in_a_loop_body_are_listed_with_their_names():
    g = counter_loop()
    body = next(f for f in g.gd.library.function if f.signature.name == "body")
    erf = body.node_def.add(name="erf", op="Digamma", input=["x"])
    erf.attr["T"].type = 1
    body.ret["x2"] = "erf:y:0"
    report = edgelite.converter.check(g.bytes(), outputs=["y"])
    assert [(s.op_type, s.nodes) for s in report.unsupported] == [("Digamma", ["body/erf"])]
    with pytest.raises(UnsupportedOpError, match=r"Digamma +1  UNSUPPORTED: body/erf"):
        edgelite.convert(g.bytes(), outputs=["y"])


def test_loops_after_an_unsupported_op_are_still_listed():
    """An unsupported op upstream blocks the While: its body is only counted (check lists
    what the whole model needs, as for a Keras RNN's TensorListReserve)."""
    g = counter_loop()
    g.node("odd", "Digamma", ["x"], T=F32)
    loop = next(n for n in g.gd.node if n.name == "loop")
    loop.input[1] = "odd"
    body = next(f for f in g.gd.library.function if f.signature.name == "body")
    body.node_def.add(name="e2", op="Lgamma", input=["x"]).attr["T"].type = 1
    body.ret["x2"] = "e2:y:0"
    report = edgelite.converter.check(g.bytes(), outputs=["y"])
    assert {s.op_type: s.nodes for s in report.unsupported} == {"Digamma": ["odd"],
                                                              "Lgamma": ["body/e2"]}
    assert {s.op_type for s in report.ops.values()} >= {"Less", "AddV2", "StatelessWhile"}


def test_quantizing_a_loop_with_a_tool_that_cannot_is_refused_in_one_line():
    with pytest.raises(edgelite.EdgeliteError, match=r"^the model has control flow \(WHILE / "
                       r"IF\): --calib-method auto, .* do not handle loops yet"):
        edgelite.convert(counter_loop().bytes(), outputs=["y"],
                         quantize=edgelite.converter.QuantizeOptions(
                             default_range=(-1.0, 1.0), bias_correction=True))
