"""batch_matmul_to_fully_connected on small graphs: x @ constant matrix becomes
FULLY_CONNECTED(keep_num_dims) with the same numbers; other products stay."""

import numpy as np
import pytest

from edgelite.converter.passes import batch_matmul_to_fully_connected
from edgelite.converter.shape_inference import infer_shapes

from ..irgraph import check, input_graph, rand, then


@pytest.mark.parametrize("shape", [(2, 3, 6), (3, 6), (1, 2, 3, 6)])
@pytest.mark.parametrize("adj_y", [False, True])
def test_constant_matrix_becomes_fully_connected(shape, adj_y):
    g, x = input_graph(shape)
    w = rand(5, 6) if adj_y else rand(6, 5)
    g.outputs = [then(g, "BATCH_MATMUL", [x, g.const("w", w)], "y", adj_x=False, adj_y=adj_y)]
    infer_shapes(g)
    check(g, batch_matmul_to_fully_connected.run, rand(*shape), 1, {"FULLY_CONNECTED": 1})
    (fc,) = g.ops
    assert fc.options["keep_num_dims"] is True and fc.inputs[1].data.shape == (5, 6)
    assert g.outputs[0].shape == shape[:-1] + (5,)


@pytest.mark.parametrize("case", ["batched-weights", "adj_x", "two-tensors"])
def test_other_products_stay(case):
    g, x = input_graph((2, 3, 6))
    if case == "batched-weights":
        rhs, adj_x = g.const("w", rand(2, 6, 5)), False
    elif case == "adj_x":
        rhs, adj_x = g.const("w", rand(3, 5)), True
    else:
        rhs, adj_x = then(g, "RELU", [x], "r"), False
        rhs = then(g, "TRANSPOSE", [rhs, g.const("p", np.int32([0, 2, 1]))], "rt")
    g.outputs = [then(g, "BATCH_MATMUL", [x, rhs], "y", adj_x=adj_x, adj_y=False)]
    infer_shapes(g)
    counts = g.op_counts()
    check(g, batch_matmul_to_fully_connected.run, rand(2, 3, 6), 0, counts)
