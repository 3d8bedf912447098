"""identify_relu_clamps on small graphs: exact op counts after, the same numbers before and
after."""

import numpy as np
import pytest

from edgelite.converter.passes import identify_relu_clamps

from ..irgraph import check, input_graph, rand, then


@pytest.mark.parametrize("lo,hi,expect", [(0.0, 6.0, "RELU6"), (-1.0, 1.0, "RELU_N1_TO_1")])
@pytest.mark.parametrize("max_first", [True, False])
def test_identify_relu_clamps(lo, hi, expect, max_first):
    g, x = input_graph()
    c_lo, c_hi = g.const("lo", np.float32(lo)), g.const("hi", np.float32(hi))
    if max_first:
        y = then(g, "MINIMUM", [then(g, "MAXIMUM", [x, c_lo], "max"), c_hi], "min")
    else:
        y = then(g, "MAXIMUM", [c_lo, then(g, "MINIMUM", [x, c_hi], "min")], "max")
    g.outputs = [y]
    check(g, identify_relu_clamps.run, 8 * rand(2, 5, 7), 1, {expect: 1})


def test_identify_relu_from_max_zero():
    g, x = input_graph()
    g.outputs = [then(g, "MAXIMUM", [x, g.const("z", np.float32(0))], "relu")]
    check(g, identify_relu_clamps.run, rand(2, 5, 7), 1, {"RELU": 1})
