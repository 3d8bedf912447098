"""Pattern-identification and folding passes: exact op counts after, same numbers before/after."""

import numpy as np
import pytest

from edgelite.converter.ir import Activation, Graph, Padding
from edgelite.converter.passes import (fold_affine_constants, fold_pad, identify_hard_swish,
                                       identify_l2_norm, identify_leaky_relu, identify_prelu,
                                       identify_relu_clamps)

from .irgraph import conv_graph, rand, run_ir, then

NONE = dict(fused_activation_function=Activation.NONE)


def input_graph(shape=(2, 5, 7)):
    g = Graph()
    x = g.tensor("x", np.float32, shape)
    g.inputs = [x]
    return g, x


def check(g, run, x, rewrites, counts):
    before = run_ir(g, x)[0]
    assert run(g) == rewrites
    assert g.op_counts() == counts
    after = run_ir(g, x)[0]
    np.testing.assert_allclose(after, before, rtol=1e-5, atol=1e-6 * max(1, np.abs(before).max()))


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


def test_identify_prelu():
    g, x = input_graph((1, 4, 4, 3))
    pos = then(g, "RELU", [x], "pos")
    negx = then(g, "RELU", [then(g, "NEG", [x], "negx")], "relu_neg")
    neg = then(g, "MUL", [g.const("minus_alpha", -np.float32([0.1, 0.2, 0.3])), negx], "neg",
               **NONE)
    g.outputs = [then(g, "ADD", [pos, neg], "prelu", **NONE)]
    check(g, identify_prelu.run, rand(1, 4, 4, 3), 1, {"PRELU": 1})


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


@pytest.mark.parametrize("op", ["MUL", "DIV", "ADD", "SUB"])
def test_fold_affine_constants(op):
    g, conv = conv_graph()
    c = np.abs(rand(4)) + 0.5
    g.outputs = [then(g, op, [conv.outputs[0], g.const("c", c)], "y", **NONE)]
    check(g, fold_affine_constants.run, rand(1, 6, 6, 3), 1, {"CONV_2D": 1})


def test_fold_affine_constants_skips_reversed_div_and_batchnorm():
    g, conv = conv_graph()
    g.outputs = [then(g, "DIV", [g.const("c", rand(4)), conv.outputs[0]], "y", **NONE)]
    assert fold_affine_constants.run(g) == 0
    g, conv = conv_graph()
    g.outputs = [then(g, "MUL", [conv.outputs[0], g.const("c", rand(4))], "y", **NONE)]
    g.ops[-1].origin = "FusedBatchNormV3"
    assert fold_affine_constants.run(g) == 0
