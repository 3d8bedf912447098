"""Hostile constants and shapes in a GraphDef: refused in one line, before allocating."""

import tracemalloc

import numpy as np
import pytest

from edgelite.converter import convert
from edgelite.converter.export import export_tflite
from edgelite.converter.ir import Graph
from edgelite.converter.tf_tensor import const_budget, num_elements, tensor_to_numpy
from edgelite.errors import ModelFormatError, ShapeError
from edgelite.schema import graph_pb2

from .tfgraph import GraphBuilder

FLOAT = 1


def fill_proto(shape, values=(1.0,)) -> graph_pb2.TensorProto:
    """A float TensorProto declaring `shape` but holding only `values` (TF repeats the last)."""
    t = graph_pb2.TensorProto(dtype=FLOAT)
    for d in shape:
        t.tensor_shape.dim.add(size=d)
    t.float_val.extend(values)
    return t


def const_graph(shape, values=(1.0,)) -> bytes:
    g = GraphBuilder()
    node = g.gd.node.add(name="big", op="Const")
    node.attr["dtype"].type = FLOAT
    node.attr["value"].tensor.CopyFrom(fill_proto(shape, values))
    g.node("y", "Identity", ["big"], T=np.dtype(np.float32))
    return g.bytes()


def refused(fn, error=ModelFormatError) -> tuple[str, int]:
    """fn()'s error message (one line) and the peak bytes traced while it ran."""
    tracemalloc.start()
    try:
        with pytest.raises(error) as info:
            fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert "\n" not in message
    return message, peak


def test_short_fields_are_filled_with_their_last_value():
    np.testing.assert_array_equal(tensor_to_numpy(fill_proto([2, 2], [1.0, 2.0]), "c"),
                                  [[1, 2], [2, 2]])
    np.testing.assert_array_equal(tensor_to_numpy(fill_proto([3], []), "c"), [0, 0, 0])


def test_complex64_constants_come_in_pairs():
    """scomplex_val holds (re, im) float pairs (tensor.proto); tensor_content raw complex64."""
    t = graph_pb2.TensorProto(dtype=8)
    t.tensor_shape.dim.add(size=2)
    t.scomplex_val.extend([1.0, -2.0, 0.5, 3.0])
    got = tensor_to_numpy(t, "c")
    assert got.dtype == np.complex64
    np.testing.assert_array_equal(got, [1 - 2j, 0.5 + 3j])
    t.ClearField("scomplex_val")
    t.tensor_content = np.array([2j, 1], np.complex64).tobytes()
    np.testing.assert_array_equal(tensor_to_numpy(t, "c"), [2j, 1])
    t.ClearField("tensor_content")
    t.scomplex_val.extend([1.0, 2.0, 3.0])
    with pytest.raises(ModelFormatError, match="^c: scomplex_val holds 3 floats; complex "
                       r"values come in \(re, im\) pairs"):
        tensor_to_numpy(t, "c")


def test_a_tiny_file_declaring_a_huge_fill_is_refused_before_allocating():
    data = const_graph([650_000_000])            # 2.6 GB of float32 from one value
    assert len(data) < 100
    message, peak = refused(lambda: convert(data))
    assert message.startswith("node 'big'") and "2.6 GB (2600000000 bytes)" in message
    assert "limit on a conversion's constants" in message
    assert peak < 1 << 20                        # nothing near the declared size was allocated


def test_the_budget_bounds_constants_together():
    content = graph_pb2.TensorProto(dtype=FLOAT, tensor_content=bytes(400))
    content.tensor_shape.dim.add(size=100)
    with const_budget(limit=999) as budget:
        tensor_to_numpy(fill_proto([150]), "node 'a'")       # 600 bytes from one value
        with pytest.raises(ModelFormatError, match=r"^node 'b': constant of shape \[100\] "
                           r"\(float32\) needs 400 bytes after 600 bytes of other constants"):
            tensor_to_numpy(content, "node 'b'")              # 400 bytes of tensor_content
    assert budget.used == 600


@pytest.mark.parametrize("shape, elements", [
    ([2**62 + 1, 4], 2**64 + 4),                 # np.prod(int64) wraps this to 4
    ([2**31 - 1, 2**31 - 1, 4], (2**31 - 1) ** 2 * 4),   # ... and this to a negative count
])
def test_element_counts_do_not_wrap(shape, elements):
    assert num_elements(shape) == elements
    message, peak = refused(lambda: convert(const_graph(shape)))
    assert f"({elements * 4} bytes)" in message and message.startswith("node 'big'")
    assert peak < 1 << 20


def placeholder_graph(shape) -> bytes:
    g = GraphBuilder()
    g.placeholder("x", shape)
    g.node("y", "Relu", ["x"], T=np.dtype(np.float32))
    return g.bytes()


def test_placeholder_dims_must_fit_int32():
    message, _ = refused(lambda: convert(placeholder_graph([2**31, 4])), ShapeError)
    assert "'x'" in message and "2147483648" in message


@pytest.mark.parametrize("shape, expected", [
    ([1] * 65, "shape has 65 dimensions; at most"),
    ([-2, 4], "has a dimension below -1"),
])
def test_malformed_shapes_name_the_node(shape, expected):
    message, _ = refused(lambda: convert(placeholder_graph(shape)))
    assert message.startswith("node 'x' (Placeholder): ") and expected in message


def test_const_with_too_many_dims_names_the_node():
    message, _ = refused(lambda: convert(const_graph([1] * 65)))
    assert message.startswith("node 'big'") and "65 dimensions" in message


def test_export_refuses_a_model_over_2_gib_before_building_it():
    g = Graph()
    x = g.tensor("x", np.float32, (1,))
    g.inputs = [x]
    huge = g.tensor("huge", np.float32, data=np.broadcast_to(np.float32(0), (600_000_000,)))
    small = g.const("small", np.zeros(4, np.float32))
    y = g.tensor("y", np.float32, (600_000_000,))
    g.add_op("ADD", [huge, small], [y])      # shapes are not checked here, sizes are
    g.outputs = [y]
    message, peak = refused(lambda: export_tflite(g))
    assert "exceeds the 2 GiB a .tflite file can hold" in message
    assert "largest constants: 'huge' (2400000000 bytes), 'small' (16 bytes)" in message
    assert peak < 1 << 20                    # the 2.4 GB constant was never materialised
