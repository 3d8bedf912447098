"""fold_batchnorm on small graphs: exact op counts after, the same numbers before and after."""

from edgelite.converter.passes import fold_batchnorm

from ..irgraph import NONE, check_pass, conv_graph, rand, then


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
