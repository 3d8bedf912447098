"""identify_prelu on small graphs: exact op counts after, the same numbers before and after."""

import numpy as np

from edgelite.converter.passes import identify_prelu

from ..irgraph import NONE, check, input_graph, rand, then


def test_identify_prelu():
    g, x = input_graph((1, 4, 4, 3))
    pos = then(g, "RELU", [x], "pos")
    negx = then(g, "RELU", [then(g, "NEG", [x], "negx")], "relu_neg")
    neg = then(g, "MUL", [g.const("minus_alpha", -np.float32([0.1, 0.2, 0.3])), negx], "neg",
               **NONE)
    g.outputs = [then(g, "ADD", [pos, neg], "prelu", **NONE)]
    check(g, identify_prelu.run, rand(1, 4, 4, 3), 1, {"PRELU": 1})
