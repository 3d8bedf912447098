"""identify_hard_swish on small graphs: exact op counts after, the same numbers before and after."""

import numpy as np
import pytest

from edgelite.converter.ir import Activation
from edgelite.converter.passes import identify_hard_swish

from ..irgraph import NONE, check, input_graph, rand, then


@pytest.mark.parametrize("form", ["keras", "div6", "mul_sixth"])
def test_identify_hard_swish(form):
    g, x = input_graph((1, 3, 3, 4))
    r = then(g, "RELU6", [then(g, "ADD", [x, g.const("three", np.float32(3))], "add", **NONE)],
             "relu6")
    if form == "keras":
        hs = then(g, "MUL", [r, g.const("sixth", np.float32(1 / 6))], "hsig", **NONE)
        y = then(g, "MUL", [x, hs], "hswish", **NONE)
    else:
        p = then(g, "MUL", [x, r], "xr", **NONE)
        if form == "div6":
            y = then(g, "DIV", [p, g.const("six", np.float32(6))], "hswish", **NONE)
        else:
            y = then(g, "MUL", [p, g.const("sixth", np.float32(1 / 6))], "hswish", **NONE)
    g.outputs = [y]
    check(g, identify_hard_swish.run, 5 * rand(1, 3, 3, 4), 1, {"HARD_SWISH": 1})
    assert g.outputs[0].name == "hswish"


def test_hard_swish_with_fused_relu6_add():
    g, x = input_graph((1, 3, 3, 4))
    r = then(g, "ADD", [x, g.const("three", np.float32(3))], "add",
             fused_activation_function=Activation.RELU6)
    hs = then(g, "MUL", [r, g.const("sixth", np.float32(1 / 6))], "hsig", **NONE)
    g.outputs = [then(g, "MUL", [hs, x], "hswish", **NONE)]
    check(g, identify_hard_swish.run, 5 * rand(1, 3, 3, 4), 1, {"HARD_SWISH": 1})
