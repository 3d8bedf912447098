"""trim_constants: equal small constants share one tensor; an all-zero integer
FULLY_CONNECTED bias is omitted; everything else is left (outputs unchanged)."""

import numpy as np

from edgelite.converter.ir import Graph, QuantParams
from edgelite.converter.passes import trim_constants
from tests.converter.irgraph import NONE, rand, run_ir


def two_means(axes_b=(1, 2)) -> Graph:
    g = Graph()
    x = g.tensor("x", np.float32, (1, 4, 4, 3))
    g.inputs = [x]
    outs = []
    for name, axes in (("a", (1, 2)), ("b", axes_b)):
        y = g.tensor(name, np.float32, (1, 3))
        g.add_op("MEAN", [x, g.const(f"{name}_axes", np.array(axes, np.int32))], [y],
                 dict(keep_dims=False), name=name)
        outs.append(y)
    g.outputs = outs
    return g


def test_equal_constants_share_a_tensor():
    g = two_means()
    x = rand(1, 4, 4, 3)
    before = run_ir(g, x)
    assert trim_constants.run(g) == 1
    a, b = g.ops
    assert b.inputs[1] is a.inputs[1] and a.inputs[1].name == "a_axes"
    assert len([t for t in g.tensors() if t.is_const]) == 1
    for got, want in zip(run_ir(g, x), before):
        np.testing.assert_array_equal(got, want)
    assert trim_constants.run(g) == 0


def test_different_constants_and_quantization_stay_apart():
    g = two_means(axes_b=(1,))
    g.outputs[1].shape = (1, 4, 3)
    assert trim_constants.run(g) == 0
    g = two_means()
    g.ops[0].inputs[1].quant = QuantParams(np.array([1.0]), np.array([0]))
    assert trim_constants.run(g) == 0


def fc_graph(bias) -> Graph:
    g = Graph()
    x = g.tensor("x", np.float32, (1, 4))
    g.inputs = [x]
    y = g.tensor("y", np.float32, (1, 3))
    g.add_op("FULLY_CONNECTED", [x, g.const("w", rand(3, 4)), g.const("b", bias)], [y],
             dict(**NONE), name="fc")
    g.outputs = [y]
    return g


def test_a_zero_integer_fc_bias_is_omitted():
    g = fc_graph(np.zeros(3, np.int32))
    assert trim_constants.run(g) == 1 and g.ops[0].inputs[2] is None
    for bias in (np.zeros(3, np.float32), np.array([0, 1, 0], np.int32)):
        g = fc_graph(bias)
        assert trim_constants.run(g) == 0 and g.ops[0].inputs[2] is not None
