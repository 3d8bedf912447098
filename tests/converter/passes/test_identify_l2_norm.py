"""identify_l2_norm on small graphs: exact op counts after, the same numbers before and after."""

import numpy as np

from edgelite.converter.passes import identify_l2_norm

from ..irgraph import NONE, check, input_graph, rand, then


def test_identify_l2_norm():
    g, x = input_graph((2, 3, 8))
    sq = then(g, "SQUARE", [x], "sq")
    s = then(g, "SUM", [sq, g.const("axes", np.int32([-1]))], "sum", keep_dims=True)
    m = then(g, "MAXIMUM", [s, g.const("eps", np.float32(1e-12))], "max")
    inv = then(g, "RSQRT", [m], "rsqrt")
    g.outputs = [then(g, "MUL", [x, inv], "l2", **NONE)]
    check(g, identify_l2_norm.run, rand(2, 3, 8), 1, {"L2_NORMALIZATION": 1})


def test_l2_norm_needs_last_axis():
    g, x = input_graph((2, 3, 8))
    sq = then(g, "SQUARE", [x], "sq")
    s = then(g, "SUM", [sq, g.const("axes", np.int32([1]))], "sum", keep_dims=True)
    inv = then(g, "RSQRT", [then(g, "MAXIMUM", [s, g.const("eps", np.float32(1e-12))], "m")],
               "r")
    g.outputs = [then(g, "MUL", [x, inv], "l2", **NONE)]
    assert identify_l2_norm.run(g) == 0
