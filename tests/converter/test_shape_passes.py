"""Passes that simplify shape plumbing and redundant ops: counts after, numbers unchanged."""

import numpy as np
import pytest

from edgelite.converter.ir import Activation, Graph
from edgelite.converter.passes import (collapse_reshapes, fold_input_scale, fold_shapes,
                                       fold_transpose_into_matmul, merge_duplicates,
                                       remove_trivial_arithmetic)

from .irgraph import conv_graph, rand, run_ir, then
from .test_patterns import check, input_graph

NONE = dict(fused_activation_function=Activation.NONE)


def test_fold_shapes_collapses_dynamic_reshape():
    g, x = input_graph((1, 4, 6))
    shape = then(g, "SHAPE", [x], "shape", out_type=2)
    shape.dtype = np.dtype(np.int32)
    batch = then(g, "STRIDED_SLICE", [shape, g.const("b", np.int32([0])),
                                      g.const("e", np.int32([1])), g.const("s", np.int32([1]))],
                 "batch", begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                 shrink_axis_mask=1)
    batch.dtype = np.dtype(np.int32)
    new_shape = then(g, "PACK", [batch, g.const("m1", np.int32(-1))], "new_shape",
                     values_count=2, axis=0)
    new_shape.dtype = np.dtype(np.int32)
    g.outputs = [then(g, "RESHAPE", [x, new_shape], "flat")]
    assert fold_shapes.run(g) == 3
    assert g.op_counts() == {"RESHAPE": 1}
    np.testing.assert_array_equal(g.ops[0].inputs[1].data, [1, -1])
    xv = rand(1, 4, 6)
    np.testing.assert_array_equal(run_ir(g, xv)[0], xv.reshape(1, -1))


@pytest.mark.parametrize("op,c", [("MUL", 1.0), ("DIV", 1.0), ("ADD", 0.0), ("SUB", 0.0)])
def test_remove_trivial_arithmetic(op, c):
    g, x = input_graph()
    r = then(g, "RELU", [x], "relu")
    g.outputs = [then(g, "ABS", [then(g, op, [r, g.const("c", np.full(7, c, np.float32))],
                                      "noop", **NONE)], "abs")]
    check(g, remove_trivial_arithmetic.run, rand(2, 5, 7), 1, {"ABS": 1, "RELU": 1})


def test_trivial_arithmetic_that_broadcasts_is_kept():
    g, x = input_graph((2, 5, 1))
    g.outputs = [then(g, "MUL", [x, g.const("ones", np.ones(7, np.float32))], "grow", **NONE)]
    assert remove_trivial_arithmetic.run(g) == 0


def test_collapse_reshapes():
    g, x = input_graph((2, 3, 4))
    a = then(g, "RESHAPE", [x, g.const("s1", np.int32([6, 4]))], "a", new_shape=[6, 4])
    b = then(g, "RESHAPE", [a, g.const("s2", np.int32([24]))], "b", new_shape=[24])
    same = then(g, "RESHAPE", [b, g.const("s3", np.int32([24]))], "same", new_shape=[24])
    g.outputs = [then(g, "RELU", [same], "out")]
    check(g, collapse_reshapes.run, rand(2, 3, 4), 2, {"RELU": 1, "RESHAPE": 1})


def test_collapse_reshape_into_keep_dims_mean():
    g, x = input_graph((1, 4, 4, 8))
    m = then(g, "MEAN", [x, g.const("axes", np.int32([1, 2]))], "mean", keep_dims=False)
    g.outputs = [then(g, "RESHAPE", [m, g.const("s", np.int32([1, 1, 1, 8]))], "se",
                      new_shape=[1, 1, 1, 8])]
    check(g, collapse_reshapes.run, rand(1, 4, 4, 8), 1, {"MEAN": 1})
    assert g.ops[0].options["keep_dims"] is True and g.outputs[0].name == "se"


def test_fold_input_scale():
    g = Graph()
    x = g.tensor("x", np.float32, (1, 6, 6, 3))
    g.inputs = [x]
    _, conv = conv_graph()
    scaled = then(g, "MUL", [x, g.const("rescale", np.float32([1 / 255, 2.0, 0.5]))],
                  "rescale", **NONE)
    y = g.tensor("conv", np.float32)
    g.add_op("CONV_2D", [scaled, conv.inputs[1], conv.inputs[2]], [y], dict(conv.options))
    g.outputs = [y]
    check(g, fold_input_scale.run, rand(1, 6, 6, 3), 1, {"CONV_2D": 1})


def test_merge_duplicates():
    g, x = input_graph()
    a = then(g, "ABS", [x], "abs1")
    b = then(g, "ABS", [x], "abs2")
    g.outputs = [then(g, "ADD", [a, b], "sum", **NONE)]
    check(g, merge_duplicates.run, rand(2, 5, 7), 1, {"ABS": 1, "ADD": 1})


def test_fold_transpose_into_matmul():
    g = Graph()
    a, b = g.tensor("a", np.float32, (2, 5, 3)), g.tensor("b", np.float32, (2, 5, 4))
    g.inputs = [a, b]
    at = then(g, "TRANSPOSE", [a, g.const("perm", np.int32([0, 2, 1]))], "at")
    g.outputs = [then(g, "BATCH_MATMUL", [at, b], "mm", adj_x=False, adj_y=False)]
    av, bv = rand(2, 5, 3), rand(2, 5, 4)
    assert fold_transpose_into_matmul.run(g) == 1
    assert g.op_counts() == {"BATCH_MATMUL": 1} and g.ops[0].options["adj_x"] is True
    np.testing.assert_allclose(run_ir(g, av, bv)[0], np.swapaxes(av, 1, 2) @ bv, rtol=1e-5,
                               atol=1e-6)
