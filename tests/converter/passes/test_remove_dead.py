"""converter/passes/remove_dead.py: ops whose outputs nothing reads go, with the ops only
they read; what an output or a live op reads stays."""

import numpy as np

from edgelite.converter.ir import Graph
from edgelite.converter.passes import remove_dead

from ..irgraph import NONE, rand, run_ir


def test_dead_chains_go_and_the_live_path_stays():
    g = Graph()
    x = g.tensor("x", np.float32, (2, 3))
    g.inputs = [x]
    y = g.tensor("y", np.float32)
    g.add_op("RELU", [x], [y])
    # a dead chain: ADD -> MUL -> TANH, nothing reads the TANH
    a, m, t = (g.tensor(n, np.float32) for n in ("a", "m", "t"))
    g.add_op("ADD", [x, g.const("c", rand(2, 3))], [a], dict(NONE))
    g.add_op("MUL", [a, a], [m], dict(NONE))
    g.add_op("TANH", [m], [t])
    g.outputs = [y]
    assert g.op_counts() == {"RELU": 1, "ADD": 1, "MUL": 1, "TANH": 1}
    assert remove_dead.run(g) == 3
    assert g.op_counts() == {"RELU": 1}
    x_value = rand(2, 3)
    np.testing.assert_array_equal(run_ir(g, x_value)[0], np.maximum(x_value, 0))
    assert remove_dead.run(g) == 0


def test_an_op_feeding_an_output_and_a_dead_op_stays():
    g = Graph()
    x = g.tensor("x", np.float32, (4,))
    g.inputs = [x]
    y, dead = g.tensor("y", np.float32), g.tensor("dead", np.float32)
    g.add_op("NEG", [x], [y])
    g.add_op("ABS", [y], [dead])
    g.outputs = [y]
    assert remove_dead.run(g) == 1
    assert g.op_counts() == {"NEG": 1}
