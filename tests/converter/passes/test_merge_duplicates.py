"""merge_duplicates on small graphs: exact op counts after, the same numbers before and after."""

from edgelite.converter.passes import merge_duplicates

from ..irgraph import NONE, check, input_graph, rand, then


def test_merge_duplicates():
    g, x = input_graph()
    a = then(g, "ABS", [x], "abs1")
    b = then(g, "ABS", [x], "abs2")
    g.outputs = [then(g, "ADD", [a, b], "sum", **NONE)]
    check(g, merge_duplicates.run, rand(2, 5, 7), 1, {"ABS": 1, "ADD": 1})


def test_variable_reads_around_an_assign_stay_apart():
    """READ_VARIABLE -> ASSIGN_VARIABLE -> READ_VARIABLE of one handle: the reads take the
    same input and options, yet the second sees the assigned value."""
    import numpy as np

    g, x = input_graph()
    handle = g.tensor("h", np.int32, (1,))
    g.add_op("VAR_HANDLE", [], [handle], {"container": "", "shared_name": "v"}, "h")
    before, after = g.tensor("r1", np.float32, (2, 5, 7)), g.tensor("r2", np.float32, (2, 5, 7))
    g.add_op("READ_VARIABLE", [handle], [before], {}, "r1")
    g.add_op("ASSIGN_VARIABLE", [handle, x], [], {}, "assign")
    g.add_op("READ_VARIABLE", [handle], [after], {}, "r2")
    g.outputs = [then(g, "ADD", [before, after], "sum", **NONE)]
    assert merge_duplicates.run(g) == 0
    assert [op.type for op in g.ops].count("READ_VARIABLE") == 2


def test_large_array_options_compare_by_value():
    """Two ops whose array options differ only in the middle of 5,000 values: repr abbreviates
    both to the same '[0 1 2 ... 4997 4998 4999]', the values are not the same."""
    import numpy as np

    g, x = input_graph()
    table = np.arange(5000, dtype=np.int32)
    changed = table.copy()
    changed[2500] = -1
    a = then(g, "ABS", [x], "abs1", table=table)
    b = then(g, "ABS", [x], "abs2", table=changed)
    c = then(g, "ABS", [x], "abs3", table=table.copy())
    g.outputs = [then(g, "ADD", [then(g, "ADD", [a, b], "s1", **NONE), c], "s2", **NONE)]
    assert merge_duplicates.run(g) == 1  # abs3 into abs1; abs2 stays
    assert [op.name for op in g.ops if op.type == "ABS"] == ["abs1", "abs2"]


def test_plain_options_compare_by_type_and_value():
    """Options that are their own key (ints, bools, strings, enum members): equal values of
    one type merge; True and 1, or two activations, stay apart."""
    from edgelite.converter.ir import Activation

    g, x = input_graph()
    ops = [then(g, "ABS", [x], "abs1", flag=True, act=Activation.RELU),
           then(g, "ABS", [x], "abs2", flag=1, act=Activation.RELU),
           then(g, "ABS", [x], "abs3", flag=True, act=Activation.RELU6),
           then(g, "ABS", [x], "abs4", flag=True, act=Activation.RELU)]
    total = ops[0]
    for k, t in enumerate(ops[1:]):
        total = then(g, "ADD", [total, t], f"s{k}", **NONE)
    g.outputs = [total]
    assert merge_duplicates.run(g) == 1  # abs4 into abs1
    assert [op.name for op in g.ops if op.type == "ABS"] == ["abs1", "abs2", "abs3"]
