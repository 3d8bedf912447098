"""fold_affine_constants on small graphs: exact op counts after, the same numbers before and
after."""

import numpy as np
import pytest

from edgelite.converter.passes import fold_affine_constants

from ..irgraph import NONE, check, conv_graph, rand, then


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
