"""converter/keras/graph.py: the GraphDef writer the Keras lowering emits into -- unique
names, typed attributes, constants, placeholders with an unknown batch, frame constants --
and a graph it writes converts and computes what it says."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.keras.graph import FrameWriter, GraphWriter
from edgelite.converter.tf_tensor import tensor_to_numpy
from tests.support import run_edgelite


def test_names_attributes_and_constants():
    w = GraphWriter()
    assert [w.unique("a"), w.unique("a"), w.unique("a")] == ["a", "a_1", "a_2"]
    c = w.const("a", np.arange(6.0).reshape(2, 3))     # float64 written as float32
    node = w.graph_def.node[-1]
    assert c == "a_3" and node.attr["dtype"].type == 1
    np.testing.assert_array_equal(tensor_to_numpy(node.attr["value"].tensor, "c"),
                                  np.arange(6, dtype=np.float32).reshape(2, 3))
    name = w.op("conv", "Conv2D", ["x", c], strides=[1, 2, 2, 1], padding="SAME",
                use_cudnn_on_gpu=False, alpha=0.5)
    attrs = w.graph_def.node[-1].attr
    assert attrs["strides"].list.i == [1, 2, 2, 1] and attrs["padding"].s == b"SAME"
    assert attrs["use_cudnn_on_gpu"].b is False and attrs["alpha"].f == 0.5
    assert attrs["T"].type == 1 and name == "conv"
    with pytest.raises(TypeError, match=r"^attribute bad of n: dict$"):
        w.op("n", "Foo", bad={})


def test_frame_constants_hang_on_the_pivot():
    w = GraphWriter()
    frame = FrameWriter(w, "loop/pivot")
    name = frame.const("k", np.int32(3))
    node = w.graph_def.node[-1]                          # the parent's GraphDef
    assert node.name == name and list(node.input) == ["^loop/pivot"]
    assert frame.unique("k") == "k_1"                   # names shared with the parent


def test_a_written_graph_converts_and_computes():
    w = GraphWriter()
    x = w.placeholder("x", (None, 3))
    y = w.op("y", "Relu", [w.op("add", "AddV2", [x, w.const("b", [1.0, -2.0, 0.5])])])
    assert w.graph_def.node[0].attr["shape"].shape.dim[0].size == -1
    model = convert_detailed(w.graph_def.SerializeToString(),
                             ConvertOptions(outputs=[y], input_shapes={"x": (2, 3)})).model
    value = np.float32([[0, 1, -1], [3, 3, 3]])
    (out,) = run_edgelite(model, [value])
    np.testing.assert_array_equal(out, np.maximum(value + np.float32([1, -2, 0.5]), 0))
