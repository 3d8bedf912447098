"""converter/value_shapes.py with shape_inference.py and control_flow/shapes.py: shapes after
ops whose output shape only values tell. WHERE's rows are -1 in the signature (1 in the
shape); SHAPE of such a tensor is not folded; a shape computed from it (SHAPE ->
STRIDED_SLICE -> PACK -> FILL, tf.zeros of a computed size) is prepared with its
representative values, so the FILL gets rank, static dims and a -1 where the rows move; a
RESHAPE of the rows back to a static shape takes a size that fits."""

import numpy as np

from edgelite.converter.ir import Graph
from edgelite.converter.passes import fold_shapes
from edgelite.converter.shape_inference import infer_shapes
from edgelite.converter import value_shapes

from .irgraph import run_ir


def where_graph():
    g = Graph()
    x = g.tensor("x", np.bool_, (2, 3))
    g.inputs = [x]
    coords = g.tensor("coords", np.int64)
    g.add_op("WHERE", [x], [coords], name="where")
    return g, x, coords


def test_where_rows_are_dynamic_and_a_computed_fill_follows_them():
    g, x, coords = where_graph()
    dims = g.tensor("dims", np.int32)
    g.add_op("SHAPE", [coords], [dims], dict(out_type=2), name="shape")
    rows = g.tensor("rows", np.int32)
    g.add_op("STRIDED_SLICE", [dims, g.const("b", np.int32([0])), g.const("e", np.int32([1])),
                               g.const("s", np.int32([1]))], [rows],
             dict(shrink_axis_mask=1), name="slice")
    size = g.tensor("size", np.int32)
    g.add_op("PACK", [rows, g.const("four", np.int32(4))], [size], dict(axis=0, values_count=2),
             name="pack")
    zeros = g.tensor("zeros", np.float32)
    g.add_op("FILL", [size, g.const("zero", np.float32(0))], [zeros], name="fill")
    g.outputs = [zeros]
    infer_shapes(g)
    assert (coords.shape, coords.shape_signature) == ((1, 2), (-1, 2))
    assert value_shapes.value(size, False).tolist() == [1, 4]
    assert value_shapes.value(size, True).tolist() == [2, 4]
    assert (zeros.shape, zeros.shape_signature) == ((1, 4), (-1, 4))
    assert fold_shapes.run(g) == 0  # SHAPE of WHERE's rows is computed at run time
    mask = np.array([[True, False, True], [True, True, False]])
    assert run_ir(g, mask)[0].shape == (4, 4)


def test_reshape_of_the_rows_back_to_a_static_shape():
    g, x, coords = where_graph()
    flat = g.tensor("flat", np.int64)
    g.add_op("RESHAPE", [coords, g.const("shape", np.int32([3, 2]))], [flat], name="reshape")
    g.outputs = [flat]
    infer_shapes(g)  # 1 row does not fit [3, 2]: the rows take a size that fits (3)
    assert (flat.shape, flat.shape_signature) == ((3, 2), None)
    mask = np.array([[True, False, True], [False, True, False]])
    np.testing.assert_array_equal(run_ir(g, mask)[0], np.argwhere(mask))
