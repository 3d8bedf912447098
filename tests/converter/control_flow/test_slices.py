"""converter/control_flow/slices.py: a GraphDef's readers by name, fresh node names, and
cutting the nodes between a region's arguments and its results out as a function."""

import pytest

from edgelite.converter.control_flow.slices import (consumers, control_and_data,
                                                    cut_function, new_node, unique)
from edgelite.errors import GraphError


def _nodes():
    """c = Const; x = Placeholder; a = Add(x, c) after ^x; b = Mul(a:0, a); out = Neg(b)."""
    nodes = [new_node("c", "Const", []), new_node("x", "Placeholder", []),
             new_node("a", "Add", ["x", "c", "^x"]), new_node("b", "Mul", ["a:0", "a"]),
             new_node("out", "Neg", ["b"])]
    return {n.name: n for n in nodes}


def test_readers_and_names():
    nodes = _nodes()
    assert control_and_data(nodes["a"]) == ["x", "c", "x"]
    readers = consumers(nodes)
    assert [n.name for n in readers["x"]] == ["a"]           # each reader once
    assert [n.name for n in readers["a"]] == ["b"]
    assert unique(nodes, "a") == "a_1" and unique(nodes, "new") == "new"
    node = new_node("w", "While", ["x"], cond="c_fn", parallel=True)
    assert node.attr["cond"].func.name == "c_fn" and node.attr["parallel"].b is True


def test_cut_function_copies_the_region_and_rewires_arguments():
    nodes = _nodes()
    fn = cut_function(nodes, "body", ["arg0"], ["out"],
                      argument=lambda ref: "arg0" if ref.node == "x" else None,
                      inside=lambda node: node.name in {"a", "b", "out"}, what="the loop 'w'")
    assert fn.name == "body" and fn.args == ["arg0"] and fn.rets == ["out"]
    by_name = {n.name: n for n in fn.nodes}
    assert sorted(by_name) == ["a", "arg0", "b", "c", "out"]  # the constant copied too
    assert list(by_name["a"].input) == ["arg0", "c"]          # control input dropped
    assert by_name["arg0"].op == "_Arg"


def test_reading_from_outside_is_refused_naming_the_nodes():
    nodes = _nodes()
    with pytest.raises(GraphError, match=r"^the loop 'w': node 'a' reads 'x' \(Placeholder\) "
                                         r"from outside without passing it in"):
        cut_function(nodes, "body", [], ["out"], argument=lambda ref: None,
                     inside=lambda node: node.name in {"a", "b", "out"}, what="the loop 'w'")
    with pytest.raises(GraphError, match=r"node 'out' reads 'gone', which is not in the graph"):
        nodes["out"].input[:] = ["gone"]
        cut_function(nodes, "body", [], ["out"], argument=lambda ref: None,
                     inside=lambda node: True, what="the loop 'w'")
