"""Each pass on a small graph: exact op counts after, same numbers as before."""

import numpy as np
import pytest

from edgelite.converter import passes
from edgelite.converter.ir import Activation
from edgelite.converter.passes import (fold_batchnorm, fold_constants, fuse_activation,
                                       fuse_bias, matmul_to_fully_connected, remove_dead,
                                       remove_identities, run_passes)
from edgelite.interpreter.errors import EdgeliteError

from .irgraph import conv_graph, rand, run_ir, then

NONE = dict(fused_activation_function=Activation.NONE)


def check_pass(g, run, x, expect_rewrites, expect_counts):
    before = run_ir(g, x)[0]
    assert run(g) == expect_rewrites
    assert g.op_counts() == expect_counts
    after = run_ir(g, x)[0]
    np.testing.assert_allclose(after, before, rtol=1e-5, atol=1e-5 * np.abs(before).max())


def test_fold_batchnorm():
    g, conv = conv_graph()
    m = then(g, "MUL", [conv.outputs[0], g.const("s", rand(4))], "bn/mul", **NONE)
    g.outputs = [then(g, "ADD", [m, g.const("o", rand(4))], "bn", **NONE)]
    check_pass(g, fold_batchnorm.run, rand(1, 6, 6, 3), 1, {"CONV_2D": 1})
    assert g.outputs[0].name == "bn"  # the graph output keeps its name


def test_fold_batchnorm_leaves_shared_intermediate():
    g, conv = conv_graph()
    m = then(g, "MUL", [conv.outputs[0], g.const("s", rand(4))], "bn/mul", **NONE)
    g.outputs = [then(g, "ADD", [m, g.const("o", rand(4))], "bn", **NONE), m]
    assert fold_batchnorm.run(g) == 0


def test_fuse_bias_and_scalar_broadcast():
    g, conv = conv_graph()
    g.outputs = [then(g, "ADD", [g.const("c", np.float32(0.5)), conv.outputs[0]], "add", **NONE)]
    check_pass(g, fuse_bias.run, rand(1, 6, 6, 3), 1, {"CONV_2D": 1})


def test_fuse_bias_rejects_spatial_constant():
    g, conv = conv_graph()
    g.outputs = [then(g, "ADD", [conv.outputs[0], g.const("c", rand(1, 6, 6, 4))], "add",
                      **NONE)]
    assert fuse_bias.run(g) == 0


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


def test_remove_identities_and_dead_ops():
    g, conv = conv_graph()
    i = then(g, "IDENTITY", [conv.outputs[0]], "id")
    then(g, "RELU", [conv.outputs[0]], "dangling")
    g.outputs = [then(g, "IDENTITY", [i], "out")]
    assert remove_identities.run(g) == 2
    assert g.outputs[0] is conv.outputs[0] and conv.outputs[0].name == "out"
    assert remove_dead.run(g) == 1
    assert g.op_counts() == {"CONV_2D": 1}


def test_matmul_to_fully_connected():
    from edgelite.converter.ir import Graph
    g = Graph()
    x = g.tensor("x", np.float32, (2, 5))
    g.inputs = [x]
    w = rand(5, 3)
    g.outputs = [then(g, "MATMUL", [x, g.const("w", w)], "mm", transpose_a=False,
                      transpose_b=False)]
    xv = rand(2, 5)
    assert matmul_to_fully_connected.run(g) == 1
    assert g.op_counts() == {"FULLY_CONNECTED": 1}
    np.testing.assert_allclose(run_ir(g, xv)[0], xv @ w, rtol=1e-5, atol=1e-6)


def test_fold_constants():
    g, conv = conv_graph()
    a = then(g, "ADD", [g.const("k1", np.float32([1, 2, 3, 4])),
                        g.const("k2", np.float32([10, 20, 30, 40]))], "k", **NONE)
    g.outputs = [then(g, "ADD", [conv.outputs[0], a], "out", **NONE)]
    assert fold_constants.run(g) == 1
    assert g.op_counts() == {"ADD": 1, "CONV_2D": 1}
    np.testing.assert_array_equal(g.ops[-1].inputs[1].data, [11, 22, 33, 44])


def test_run_passes_records_and_switches():
    g, conv = conv_graph()
    m = then(g, "MUL", [conv.outputs[0], g.const("s", rand(4))], "bn/mul", **NONE)
    g.outputs = [then(g, "RELU", [then(g, "ADD", [m, g.const("o", rand(4))], "bn", **NONE)],
                      "relu")]
    for op in g.ops:
        if op.type in ("MUL", "ADD"):
            op.origin = "FusedBatchNormV3"  # as lowering marks them
    records = run_passes(g, disabled={"fold_batchnorm"})
    assert g.op_counts() == {"ADD": 1, "CONV_2D": 1, "MUL": 1}  # relu fused into ADD only
    assert [r.name for r in records] == ["fuse_activation"]
    assert records[0].before == {"ADD": 1, "CONV_2D": 1, "MUL": 1, "RELU": 1}
    with pytest.raises(EdgeliteError, match="unknown pass"):
        run_passes(g, disabled={"fold_batchnrom"})
    with pytest.raises(EdgeliteError, match="cannot be disabled"):
        run_passes(g, disabled={"remove_identities"})


def test_pipeline_names_are_the_modules():
    import importlib
    for name in passes.PASS_NAMES:
        module = importlib.import_module(f"edgelite.converter.passes.{name}")
        assert passes.PIPELINE[passes.PASS_NAMES.index(name)].fn is module.run
