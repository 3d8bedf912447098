"""fold_input_scale on small graphs: exact op counts after, the same numbers before and after."""

import numpy as np

from edgelite.converter.ir import Graph
from edgelite.converter.passes import fold_input_scale

from ..irgraph import NONE, check, conv_graph, rand, then


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
