"""control_flow/functions.py: FunctionDefs -> FuncGraphs; cf_call (a tf.function calling
tf.functions) inlined end to end."""

import numpy as np
import pytest

from edgelite.converter.control_flow.functions import function_from_def, parse_library
from edgelite.errors import GraphError

from ..tfgraph import GraphBuilder
from .library import F32, Function, call
from .models import converts_and_matches_tensorflow


def test_cf_call_is_inlined_and_matches_tensorflow():
    converts_and_matches_tensorflow("cf_call")


def test_output_arguments_become_flat_output_numbers():
    g = GraphBuilder()
    f = Function(g, "f", {"x": F32, "p": np.bool_}, {"a": "sw:output_true:0", "b": "u:output:2"})
    f.node("sw", "Switch", ["x", "p"])
    f.node("u", "Unpack", ["x"])
    fn = function_from_def(g.gd.library.function[0])
    assert fn.rets == ["sw:1", "u:2"] and fn.args == ["x", "p"]
    assert [n.op for n in fn.nodes[:2]] == ["_Arg", "_Arg"]


def test_two_output_arguments_of_an_unknown_op_are_refused():
    g = GraphBuilder()
    f = Function(g, "f", {"x": F32}, {"a": "odd:first:0", "b": "odd:second:0"})
    f.node("odd", "SomeOp", ["x"])
    with pytest.raises(GraphError, match=r"node 'odd' \(SomeOp\) is read through output "
                       r"arguments 'first' and 'second'"):
        function_from_def(g.gd.library.function[0])


def test_a_reference_to_no_node_is_refused():
    g = GraphBuilder()
    Function(g, "f", {"x": F32}, {"a": "ghost:y:0"})
    with pytest.raises(GraphError, match=r"function 'f': its ret map reads 'ghost:y:0'"):
        function_from_def(g.gd.library.function[0])


def test_only_the_functions_the_graph_calls_are_read():
    """A frozen training graph keeps its gradient functions in the library; one of them
    reading an op edgelite does not know cannot fail the conversion."""
    g = GraphBuilder()
    g.placeholder("x", [2])
    outer = Function(g, "outer", {"a": F32}, {"out": "c:output:0"})
    outer.node("c", "PartitionedCall", ["a"], f={"func": "inner"})
    inner = Function(g, "inner", {"a": F32}, {"out": "r:activations:0"})
    inner.node("r", "Relu", ["a"], T=F32)
    grad = Function(g, "outer_grad", {"x": F32}, {"a": "odd:first:0", "b": "odd:second:0"})
    grad.node("odd", "SomeGradOp", ["x"])
    call(g, "y", "PartitionedCall", ["x"], f="outer")
    assert sorted(parse_library(g.gd)) == ["inner", "outer"]
