"""fuse_bias on small graphs: exact op counts after, the same numbers before and after."""

import numpy as np

from edgelite.converter.ir import Activation
from edgelite.converter.passes import fuse_bias

from ..irgraph import NONE, check_pass, conv_graph, rand, then


def test_fuse_bias_and_scalar_broadcast():
    g, conv = conv_graph()
    g.outputs = [then(g, "ADD", [g.const("c", np.float32(0.5)), conv.outputs[0]], "add", **NONE)]
    check_pass(g, fuse_bias.run, rand(1, 6, 6, 3), 1, {"CONV_2D": 1})


def test_fuse_bias_rejects_spatial_constant():
    g, conv = conv_graph()
    g.outputs = [then(g, "ADD", [conv.outputs[0], g.const("c", rand(1, 6, 6, 4))], "add",
                      **NONE)]
    assert fuse_bias.run(g) == 0


def test_fuse_bias_moves_the_adds_activation_to_the_conv():
    g, conv = conv_graph()
    g.outputs = [then(g, "ADD", [conv.outputs[0], g.const("c", rand(4))], "add",
                      fused_activation_function=Activation.RELU6)]
    check_pass(g, fuse_bias.run, rand(1, 6, 6, 3), 1, {"CONV_2D": 1})
    assert g.ops[0].options["fused_activation_function"] == Activation.RELU6


def test_fuse_bias_leaves_a_conv_with_its_own_activation():
    g, conv = conv_graph()
    conv.options["fused_activation_function"] = Activation.RELU
    g.outputs = [then(g, "ADD", [conv.outputs[0], g.const("c", rand(4))], "add", **NONE)]
    assert fuse_bias.run(g) == 0
