"""converter/ir.py: the Graph's construction, queries and rewrites (its producer / reader
index under every write: test_ir_index.py)."""

import copy

import numpy as np
import pytest

from edgelite.converter.ir import Graph, Op, all_graphs, inputs_upstream
from edgelite.errors import GraphError


def _chain():
    """x -> RELU -> h -> ADD(h, c) -> y (an output)."""
    g = Graph()
    x = g.tensor("x", np.float32, (2,))
    g.inputs = [x]
    h, y = g.tensor("h", np.float32), g.tensor("y", np.float32)
    relu = g.add_op("RELU", [x], [h], name="relu")
    c = g.const("c", [1.0, 2.0], np.float32)
    add = g.add_op("ADD", [h, c], [y], name="add")
    g.outputs = [y]
    return g, x, h, c, y, relu, add


def test_unique_names_resume_their_suffix():
    g = Graph()
    names = [g.tensor("t", np.float32).name for _ in range(3)] + [g.unique_name("t_1x")]
    assert names == ["t", "t_1", "t_2", "t_1x"]
    g.unique_name("u_1")
    assert [g.unique_name("u"), g.unique_name("u")] == ["u", "u_2"]


def test_constants_and_queries():
    g, x, h, c, y, relu, add = _chain()
    assert c.is_const and c.shape == (2,) and c.dtype == np.float32 and not h.is_const
    assert g.producer(h) is relu and g.producer(x) is None
    assert g.consumers(h) == [add] and g.use_count(h) == 1 and g.use_count(y) == 1
    assert g.is_output(y) and g.is_input(x) and not g.is_output(h)
    assert [t.name for t in g.tensors()] == ["x", "h", "c", "y"]
    assert g.op_counts() == {"ADD": 1, "RELU": 1}
    assert inputs_upstream(g, [y]) == ["x"] and inputs_upstream(g, [c]) == []
    assert all_graphs(g) == [g]


def test_set_const_input_in_place_or_a_new_constant():
    g, x, h, c, y, relu, add = _chain()
    g.set_const_input(add, 1, [5, 6])
    assert add.inputs[1] is c and c.data.tolist() == [5.0, 6.0] and c.data.dtype == np.float32
    other = g.add_op("MUL", [h, c], [g.tensor("z", np.float32)])  # c now read twice
    g.set_const_input(add, 1, [7, 8])
    assert add.inputs[1] is not c and add.inputs[1].data.tolist() == [7.0, 8.0]
    assert other.inputs[1] is c and c.data.tolist() == [5.0, 6.0]


def test_bypass_hands_the_name_on_and_rewires_readers():
    g, x, h, c, y, relu, add = _chain()
    g.bypass(relu, x)          # x is an input: it keeps its name
    assert x.name == "x" and add.inputs[0] is x and g.op_counts() == {"ADD": 1}
    g2, x2, h2, c2, y2, relu2, add2 = _chain()
    g2.bypass(add2, h2)        # h takes over the output's name and place
    assert h2.name == "y" and g2.outputs == [h2]


def test_replace_and_remove_ops_keep_the_order():
    g, x, h, c, y, relu, add = _chain()
    neg = g.tensor("n", np.float32)
    g.replace_op(relu, Op("NEG", [x], [h], {}, "neg"))
    assert [op.type for op in g.ops] == ["NEG", "ADD"]
    g.insert_op(Op("ABS", [x], [neg], {}, "abs"), before=g.ops[0])
    assert [op.type for op in g.ops] == ["ABS", "NEG", "ADD"]
    g.remove_op(g.producer(neg))
    assert [op.type for op in g.ops] == ["NEG", "ADD"]


def test_check_refuses_a_read_before_the_write():
    g, x, h, c, y, relu, add = _chain()
    g.check()
    g.remove_op(relu)
    with pytest.raises(GraphError, match=r"^op ADD \('add'\) reads 'h' before it is produced$"):
        g.check()


def test_deepcopy_is_independent():
    g, *_ = _chain()
    twin = copy.deepcopy(g)
    twin.ops[1].inputs[1].data[0] = 99.0
    assert g.ops[1].inputs[1].data[0] == 1.0
    assert twin.op_counts() == g.op_counts()
