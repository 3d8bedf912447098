"""hoist_channel_ops on small graphs: exact op counts and order after, the same numbers before
and after, and what it leaves alone; then the whole pipeline folds what it moved."""

import numpy as np
import pytest

from edgelite.converter.ir import Activation, Graph, Padding
from edgelite.converter.passes import hoist_channel_ops, run_passes
from edgelite.converter.shape_inference import infer_shapes

from ..irgraph import NONE, check_pass, rand, run_ir, then

C = 5


def conv1d_graph(channels: int = C):
    """x[1,1,8,3] -> CONV_2D 1x3 SAME -> SQUEEZE(axis 1) -> [1,8,C]: Keras' Conv1D."""
    g = Graph()
    x = g.tensor("x", np.float32, (1, 1, 8, 3))
    g.inputs = [x]
    conv = then(g, "CONV_2D", [x, g.const("w", rand(channels, 1, 3, 3)),
                               g.const("b", rand(channels))], "conv",
                padding=Padding.SAME, stride_h=1, stride_w=1, dilation_h_factor=1,
                dilation_w_factor=1, **NONE)
    return g, then(g, "SQUEEZE", [conv], "squeeze", squeeze_dims=[1])


def order(g):
    return [op.type for op in g.ops]


X = rand(1, 1, 8, 3)


def test_bias_and_activation_move_above_the_squeeze():
    g, y = conv1d_graph()
    add = then(g, "ADD", [y, g.const("bias", rand(C))], "bias_add", **NONE)
    g.outputs = [then(g, "RELU6", [add], "relu6")]
    check_pass(g, hoist_channel_ops.run, X, 2,
               {"CONV_2D": 1, "ADD": 1, "RELU6": 1, "SQUEEZE": 1})
    assert order(g) == ["CONV_2D", "ADD", "RELU6", "SQUEEZE"]
    out = g.outputs[0]
    assert out.name == "relu6" and out.shape == (1, 8, C)  # the chain's result is kept
    assert g.ops[1].outputs[0].shape == (1, 1, 8, C)
    run_passes(g)
    assert order(g) == ["CONV_2D", "SQUEEZE"]
    assert g.ops[0].options["fused_activation_function"] == Activation.RELU6


def test_batch_norm_chain_folds_into_the_conv():
    g, y = conv1d_graph()
    t = then(g, "ADD", [y, g.const("bias", rand(C))], "bias_add", **NONE)
    t = then(g, "MUL", [g.const("gamma", rand(1, 1, C)), t], "bn_mul", **NONE)
    t = then(g, "SUB", [t, g.const("beta", np.float32(0.25))], "bn_sub", **NONE)
    g.outputs = [then(g, "RELU", [t], "relu")]
    infer_shapes(g)
    before = run_ir(g, X)[0]
    assert hoist_channel_ops.run(g) == 4
    assert order(g) == ["CONV_2D", "ADD", "MUL", "SUB", "RELU", "SQUEEZE"]
    mul = g.ops[2]
    assert [t.shape for t in mul.inputs if t.is_const] == [(C,)]  # [1,1,C] -> [C]
    run_passes(g)
    assert order(g) == ["CONV_2D", "SQUEEZE"]
    np.testing.assert_allclose(run_ir(g, X)[0], before, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layout", ["EXPAND_DIMS", "RESHAPE"])
def test_other_reshapes_that_keep_the_last_axis(layout):
    g = Graph()
    x = g.tensor("x", np.float32, (3, 6))
    g.inputs = [x]
    fc = then(g, "FULLY_CONNECTED", [x, g.const("w", rand(C, 6)), g.const("b", rand(C))], "fc",
              keep_num_dims=False, **NONE)
    if layout == "EXPAND_DIMS":
        y = then(g, "EXPAND_DIMS", [fc, g.const("axis", np.int32(1))], "expand")
    else:
        y = then(g, "RESHAPE", [fc, g.const("shape", np.int32([1, 3, C]))], "reshape",
                 new_shape=[1, 3, C])
    g.outputs = [then(g, "MUL", [y, g.const("s", rand(1, 1, C))], "scale", **NONE)]
    check_pass(g, hoist_channel_ops.run, rand(3, 6), 1, {"FULLY_CONNECTED": 1, "MUL": 1, layout: 1})
    run_passes(g)
    assert order(g) == ["FULLY_CONNECTED", layout]


def test_activation_between_two_reshapes_moves_up_to_meet_the_second():
    """Conv1DTranspose: TRANSPOSE_CONV (no affine record to fold into) -> SQUEEZE -> RELU ->
    the next layer's EXPAND_DIMS: the RELU moves up, collapse_reshapes removes the pair, and
    the RELU fuses into the TRANSPOSE_CONV."""
    g = Graph()
    x = g.tensor("x", np.float32, (1, 1, 4, 3))
    g.inputs = [x]
    up = then(g, "TRANSPOSE_CONV", [g.const("out_shape", np.int32([1, 1, 8, C])),
                                    g.const("w", rand(C, 1, 3, 3)), x], "tconv",
              padding=Padding.SAME, stride_h=1, stride_w=2, **NONE)
    y = then(g, "SQUEEZE", [up], "squeeze", squeeze_dims=[1])
    r = then(g, "RELU", [y], "relu")
    g.outputs = [then(g, "EXPAND_DIMS", [r, g.const("axis", np.int32(1))], "expand")]
    check_pass(g, hoist_channel_ops.run, rand(1, 1, 4, 3), 1,
               {"TRANSPOSE_CONV": 1, "RELU": 1, "SQUEEZE": 1, "EXPAND_DIMS": 1})
    assert order(g) == ["TRANSPOSE_CONV", "RELU", "SQUEEZE", "EXPAND_DIMS"]
    run_passes(g)
    assert order(g) == ["TRANSPOSE_CONV"]


def _left_alone(g):
    infer_shapes(g)
    counts = g.op_counts()
    assert hoist_channel_ops.run(g) == 0
    assert g.op_counts() == counts


def test_left_alone_spatial_constant_or_broadcast_up():
    g, y = conv1d_graph()
    g.outputs = [then(g, "ADD", [y, g.const("c", rand(8, C))], "add", **NONE)]
    _left_alone(g)
    g, y = conv1d_graph()  # a rank-4 constant would raise the SQUEEZE's rank-3 output
    g.outputs = [then(g, "ADD", [y, g.const("c", rand(1, 1, 1, C))], "add", **NONE)]
    _left_alone(g)


def test_left_alone_constant_minus_data_and_last_axis_changed():
    g, y = conv1d_graph()
    g.outputs = [then(g, "SUB", [g.const("c", rand(C)), y], "sub", **NONE)]
    _left_alone(g)
    g, y = conv1d_graph()
    flat = then(g, "RESHAPE", [y, g.const("shape", np.int32([1, 8 * C]))], "flat",
                new_shape=[1, 8 * C])
    g.outputs = [then(g, "ADD", [flat, g.const("c", np.float32(1.0))], "add", **NONE)]
    _left_alone(g)


def test_left_alone_without_an_affine_op_to_fold_into():
    g = Graph()
    x = g.tensor("x", np.float32, (1, 1, 8, C))
    g.inputs = [x]
    y = then(g, "SQUEEZE", [then(g, "MAX_POOL_2D", [x], "pool", padding=Padding.SAME,
                                  stride_h=1, stride_w=1, filter_height=1, filter_width=1,
                                  **NONE)], "squeeze", squeeze_dims=[1])
    g.outputs = [then(g, "ADD", [y, g.const("c", rand(C))], "add", **NONE)]
    _left_alone(g)


def test_left_alone_when_the_reshape_or_conv_output_has_other_readers():
    g, y = conv1d_graph()
    a = then(g, "ADD", [y, g.const("c", rand(C))], "add", **NONE)
    g.outputs = [a, y]
    _left_alone(g)
    g, y = conv1d_graph()
    conv = g.ops[0]
    conv.options["fused_activation_function"] = Activation.RELU  # the bias cannot go under it
    g.outputs = [then(g, "ADD", [y, g.const("c", rand(C))], "add", **NONE)]
    _left_alone(g)


def test_switch():
    g, y = conv1d_graph()
    g.outputs = [then(g, "ADD", [y, g.const("bias", rand(C))], "bias_add", **NONE)]
    infer_shapes(g)
    run_passes(g, disabled={"hoist_channel_ops"})
    assert order(g) == ["CONV_2D", "SQUEEZE", "ADD"]
