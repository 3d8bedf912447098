"""merge_duplicates on small graphs: exact op counts after, the same numbers before and after."""

from edgelite.converter.passes import merge_duplicates

from ..irgraph import NONE, check, input_graph, rand, then


def test_merge_duplicates():
    g, x = input_graph()
    a = then(g, "ABS", [x], "abs1")
    b = then(g, "ABS", [x], "abs2")
    g.outputs = [then(g, "ADD", [a, b], "sum", **NONE)]
    check(g, merge_duplicates.run, rand(2, 5, 7), 1, {"ABS": 1, "ADD": 1})
