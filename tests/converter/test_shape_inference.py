"""converter/shape_inference.py: every IR tensor's shape as edgelite's interpreter computes
it -- a whole graph at once, one op at a time, and the refusal of an input without a shape."""

import numpy as np
import pytest

from edgelite.converter.ir import Graph
from edgelite.converter.shape_inference import infer_op_shapes, infer_shapes
from edgelite.errors import EdgeliteError

from .irgraph import NONE, conv_graph


def test_a_whole_graph():
    g, conv = conv_graph(channels=5)          # x[1,6,6,3] -> CONV_2D 3x3 SAME, 5 filters
    flat = g.tensor("flat", np.float32)
    g.add_op("RESHAPE", [conv.outputs[0], g.const("shape", np.int32([1, -1]))], [flat])
    g.outputs = [flat]
    infer_shapes(g)
    assert conv.outputs[0].shape == (1, 6, 6, 5) and flat.shape == (1, 180)


def test_one_op_and_unknown_inputs():
    g = Graph()
    a, b = g.tensor("a", np.float32, (4, 1, 3)), g.tensor("b", np.float32, None)
    g.inputs = [a, b]
    out = g.tensor("out", np.float32)
    op = g.add_op("ADD", [a, b], [out], dict(NONE))
    infer_op_shapes(op)
    assert out.shape is None                  # b's shape unknown: nothing happens
    b.shape = (2, 1)
    infer_op_shapes(op)
    assert out.shape == (4, 2, 3)             # broadcast


def test_an_input_without_a_shape():
    g = Graph()
    x = g.tensor("x", np.float32, None)
    g.inputs, g.name = [x], "main"
    y = g.tensor("y", np.float32)
    g.add_op("RELU", [x], [y])
    g.outputs = [y]
    with pytest.raises(EdgeliteError, match=r"^internal: an input of graph 'main' has no shape"):
        infer_shapes(g)
    infer_shapes(g, strict=False)             # between passes: left unknown
    assert y.shape is None


def test_constants_keep_their_shapes():
    g, conv = conv_graph(channels=2)
    g.outputs = [conv.outputs[0]]
    infer_shapes(g)
    assert conv.inputs[1].shape == (2, 3, 3, 3) and conv.inputs[2].shape == (2,)
    assert conv.outputs[0].shape == (1, 6, 6, 2)
