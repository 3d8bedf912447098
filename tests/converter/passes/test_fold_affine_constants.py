"""fold_affine_constants on small graphs: exact op counts after, the same numbers before and
after."""

import numpy as np
import pytest

from edgelite.converter.passes import fold_affine_constants
from edgelite.converter.shape_inference import infer_shapes

from ..irgraph import NONE, check, conv_graph, input_graph, rand, then


@pytest.mark.parametrize("op", ["MUL", "DIV", "ADD", "SUB"])
def test_fold_affine_constants(op):
    g, conv = conv_graph()
    c = np.abs(rand(4)) + 0.5
    g.outputs = [then(g, op, [conv.outputs[0], g.const("c", c)], "y", **NONE)]
    check(g, fold_affine_constants.run, rand(1, 6, 6, 3), 1, {"CONV_2D": 1})


def test_fold_affine_constants_skips_reversed_div_and_batchnorm():
    g, conv = conv_graph()
    g.outputs = [then(g, "DIV", [g.const("c", rand(4)), conv.outputs[0]], "y", **NONE)]
    assert fold_affine_constants.run(g) == 0
    g, conv = conv_graph()
    g.outputs = [then(g, "MUL", [conv.outputs[0], g.const("c", rand(4))], "y", **NONE)]
    g.ops[-1].origin = "FusedBatchNormV3"
    assert fold_affine_constants.run(g) == 0


# -- a scalar behind a RESHAPE / TRANSPOSE of the affine op's output
def _fc_then_layout(layout):
    g, x = input_graph((6, 4))
    y = then(g, "FULLY_CONNECTED", [x, g.const("w", rand(8, 4)), g.const("b", rand(8))], "fc",
             keep_num_dims=False, **NONE)
    if layout == "RESHAPE":
        return g, then(g, "RESHAPE", [y, g.const("s", np.int32([6, 2, 4]))], "heads",
                       new_shape=[6, 2, 4])
    return g, then(g, "TRANSPOSE", [y, g.const("p", np.int32([1, 0]))], "heads")


@pytest.mark.parametrize("layout", ["RESHAPE", "TRANSPOSE"])
@pytest.mark.parametrize("op, c", [("MUL", 0.35), ("DIV", 2.5), ("ADD", -0.7), ("SUB", 1.5)])
def test_scalar_folds_through_a_layout_op(layout, op, c):
    g, t = _fc_then_layout(layout)
    g.outputs = [then(g, op, [t, g.const("c", np.float32(c))], "scaled", **NONE)]
    infer_shapes(g)
    check(g, fold_affine_constants.run, rand(6, 4), 1,
          {"FULLY_CONNECTED": 1, layout: 1})
    assert g.outputs[0].name == "scaled"


@pytest.mark.parametrize("case", ["c-minus", "vector", "relu-between"])
def test_through_a_layout_op_other_shapes_are_left_alone(case):
    g, t = _fc_then_layout("RESHAPE")
    if case == "c-minus":       # c - y is not affine in y's channels the same way
        out = then(g, "SUB", [g.const("c", np.float32(1.0)), t], "scaled", **NONE)
    elif case == "vector":      # per-position constants do not follow the channels
        out = then(g, "MUL", [t, g.const("c", rand(2, 4))], "scaled", **NONE)
    else:
        r = then(g, "RELU", [t], "r")
        out = then(g, "MUL", [r, g.const("c", np.float32(2.0))], "scaled", **NONE)
    g.outputs = [out]
    infer_shapes(g)
    counts = g.op_counts()
    check(g, fold_affine_constants.run, rand(6, 4), 0, counts)
