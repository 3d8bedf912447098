"""fold_pad on small graphs: exact op counts after, the same numbers before and after."""

import numpy as np
import pytest

from edgelite.converter.ir import Graph, Padding
from edgelite.converter.passes import fold_pad

from ..irgraph import NONE, check, rand, then


@pytest.mark.parametrize("size,stride,pads,folds", [
    (6, 2, ((0, 1), (0, 1)), True),    # Keras correct_pad for an even input, stride 2
    (6, 1, ((1, 1), (1, 1)), True),    # symmetric SAME, stride 1
    (6, 2, ((1, 1), (1, 1)), False),   # not what SAME would do: keep the PAD
])
def test_fold_pad(size, stride, pads, folds):
    g = Graph()
    x = g.tensor("x", np.float32, (1, size, size, 3))
    g.inputs = [x]
    p = then(g, "PAD", [x, g.const("p", np.int32([(0, 0), *pads, (0, 0)]))], "pad")
    y = g.tensor("conv", np.float32)
    g.add_op("CONV_2D", [p, g.const("w", rand(4, 3, 3, 3)), g.const("b", rand(4))], [y],
             dict(padding=Padding.VALID, stride_h=stride, stride_w=stride,
                  dilation_h_factor=1, dilation_w_factor=1, **NONE))
    g.outputs = [y]
    counts = {"CONV_2D": 1} if folds else {"CONV_2D": 1, "PAD": 1}
    check(g, fold_pad.run, rand(1, size, size, 3), int(folds), counts)
