"""converter/passes/patterns.py: the matching helpers rewrites are written with, on small IR
graphs; the channel rewrites keep the numbers (run in edgelite's interpreter)."""

import numpy as np

from edgelite.converter.passes import patterns as p

from ..irgraph import NONE, conv_graph, input_graph, rand, run_ir, then

X = rand(1, 6, 6, 3)


def test_sole_producer_only_for_a_single_reader_that_is_no_output():
    g, conv = conv_graph()
    y = conv.outputs[0]
    out = then(g, "RELU", [y], "relu")
    g.outputs = [out]
    assert p.sole_producer(g, y, {"CONV_2D"}) is conv
    assert p.sole_producer(g, y, {"ADD"}) is None              # not one of the types
    assert p.sole_producer(g, conv.inputs[1], {"CONV_2D"}) is None  # a constant
    then(g, "NEG", [y], "second_reader")
    assert p.sole_producer(g, y, {"CONV_2D"}) is None
    assert p.sole_producer(g, out, {"RELU"}) is None          # a graph output


def test_binary_operands_and_scalars():
    g, x = input_graph((2, 3))
    c, half = g.const("c", rand(3)), g.const("half", np.float32([0.5]))
    y = g.tensor("y", np.float32)
    op = g.add_op("MUL", [c, x], [y], dict(NONE))
    assert p.const_operand(op) == (x, c)
    assert p.other_input(op, x) is c and p.other_input(op, c) is x
    assert p.other_input(op, y) is None
    assert p.scalar(half) == 0.5 and p.scalar(half, expect=0.5) == 0.5
    assert p.scalar(half, expect=0.6) is None and p.scalar(c) is None and p.scalar(x) is None
    both = g.add_op("ADD", [c, half], [g.tensor("z", np.float32)], dict(NONE))
    assert p.const_operand(both) is None


def test_channel_vector_broadcasts_along_the_last_axis_only():
    g, conv = conv_graph(channels=4)
    assert p.out_channels(conv) == 4
    vec = np.float32([1, 2, 3, 4])
    np.testing.assert_array_equal(p.channel_vector(g.const("a", vec), conv), vec)
    np.testing.assert_array_equal(p.channel_vector(g.const("b", vec.reshape(1, 1, 1, 4)),
                                                   conv), vec)
    np.testing.assert_array_equal(p.channel_vector(g.const("s", np.float32(2)), conv),
                                  np.full(4, 2.0))
    assert p.channel_vector(g.const("rows", np.ones((6, 4), np.float32)), conv) is None
    assert p.channel_vector(g.const("ints", np.ones(4, np.int32)), conv) is None


def test_scaling_output_channels_and_adding_to_the_bias_keep_the_numbers():
    g, conv = conv_graph(channels=4)
    g.outputs = [conv.outputs[0]]
    before = run_ir(g, X)[0]
    s, b = np.array([0.5, 2.0, -1.0, 3.0]), np.array([0.25, 0.0, -1.0, 2.0])
    p.scale_output_channels(conv, g, s)
    p.add_to_bias(conv, g, b)
    np.testing.assert_allclose(run_ir(g, X)[0], before * s + b, rtol=1e-5, atol=1e-5)


def test_add_to_bias_creates_an_omitted_bias():
    g, conv = conv_graph(channels=4)
    conv.inputs[2:] = []
    g.outputs = [conv.outputs[0]]
    before = run_ir(g, X)[0]
    p.add_to_bias(conv, g, np.arange(4.0))
    assert conv.inputs[2].name == "conv/bias"
    np.testing.assert_allclose(run_ir(g, X)[0], before + np.arange(4.0), rtol=1e-5, atol=1e-5)


def test_replace_with_drops_the_matched_intermediates():
    g, x = input_graph((2, 3))
    a = then(g, "NEG", [x], "a")
    last = g.producer(then(g, "NEG", [a], "y"))
    g.outputs = [last.outputs[0]]
    new = p.replace_with(g, last, "RELU", [x])
    assert g.op_counts() == {"RELU": 1} and new.outputs == [g.outputs[0]]
    v = rand(2, 3)
    np.testing.assert_array_equal(run_ir(g, v)[0], np.maximum(v, 0))
