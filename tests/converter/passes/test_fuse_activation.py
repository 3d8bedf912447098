"""fuse_activation on small graphs: exact op counts after, the same numbers before and after."""

import pytest

from edgelite.converter.ir import Activation
from edgelite.converter.passes import fuse_activation

from ..irgraph import check_pass, conv_graph, rand, then


@pytest.mark.parametrize("act,code", [("RELU", Activation.RELU), ("RELU6", Activation.RELU6),
                                      ("RELU_N1_TO_1", Activation.RELU_N1_TO_1)])
def test_fuse_activation(act, code):
    g, conv = conv_graph()
    g.outputs = [then(g, act, [conv.outputs[0]], "act")]
    check_pass(g, fuse_activation.run, 3 * rand(1, 6, 6, 3), 1, {"CONV_2D": 1})
    assert conv.options["fused_activation_function"] == code


def test_fuse_activation_skips_tanh_and_fused_ops():
    g, conv = conv_graph()
    conv.options["fused_activation_function"] = Activation.RELU6
    r = then(g, "RELU", [conv.outputs[0]], "relu")
    g.outputs = [then(g, "TANH", [r], "tanh")]
    assert fuse_activation.run(g) == 0
