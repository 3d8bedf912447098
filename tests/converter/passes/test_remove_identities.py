"""remove_identities, and remove_dead after it, on a small graph: exact op counts after."""

from edgelite.converter.passes import remove_dead, remove_identities

from ..irgraph import conv_graph, then


def test_remove_identities_and_dead_ops():
    g, conv = conv_graph()
    i = then(g, "IDENTITY", [conv.outputs[0]], "id")
    then(g, "RELU", [conv.outputs[0]], "dangling")
    g.outputs = [then(g, "IDENTITY", [i], "out")]
    assert remove_identities.run(g) == 2
    assert g.outputs[0] is conv.outputs[0] and conv.outputs[0].name == "out"
    assert remove_dead.run(g) == 1
    assert g.op_counts() == {"CONV_2D": 1}
