"""identify_leaky_relu on small graphs: exact op counts after, the same numbers before and after."""

import numpy as np
import pytest

from edgelite.converter.passes import identify_leaky_relu

from ..irgraph import NONE, check, input_graph, rand, then


def test_identify_leaky_relu():
    g, x = input_graph()
    ax = then(g, "MUL", [g.const("a", np.float32(0.2)), x], "ax", **NONE)
    g.outputs = [then(g, "MAXIMUM", [x, ax], "leaky")]
    check(g, identify_leaky_relu.run, rand(2, 5, 7), 1, {"LEAKY_RELU": 1})
    assert g.ops[0].options["alpha"] == pytest.approx(0.2)


def test_leaky_relu_needs_alpha_below_one():
    g, x = input_graph()
    ax = then(g, "MUL", [x, g.const("a", np.float32(3.0))], "ax", **NONE)
    g.outputs = [then(g, "MAXIMUM", [x, ax], "notleaky")]
    assert identify_leaky_relu.run(g) == 0
