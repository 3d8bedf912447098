"""fold_constants on a small graph: exact op counts and folded values after."""

import numpy as np

from edgelite.converter.passes import fold_constants

from ..irgraph import NONE, conv_graph, then


def test_fold_constants():
    g, conv = conv_graph()
    a = then(g, "ADD", [g.const("k1", np.float32([1, 2, 3, 4])),
                        g.const("k2", np.float32([10, 20, 30, 40]))], "k", **NONE)
    g.outputs = [then(g, "ADD", [conv.outputs[0], a], "out", **NONE)]
    assert fold_constants.run(g) == 1
    assert g.op_counts() == {"ADD": 1, "CONV_2D": 1}
    np.testing.assert_array_equal(g.ops[-1].inputs[1].data, [11, 22, 33, 44])
