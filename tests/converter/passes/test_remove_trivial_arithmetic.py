"""remove_trivial_arithmetic on small graphs: exact op counts after, the same numbers before and
after."""

import numpy as np
import pytest

from edgelite.converter.passes import remove_trivial_arithmetic

from ..irgraph import NONE, check, input_graph, rand, then


@pytest.mark.parametrize("op,c", [("MUL", 1.0), ("DIV", 1.0), ("ADD", 0.0), ("SUB", 0.0)])
def test_remove_trivial_arithmetic(op, c):
    g, x = input_graph()
    r = then(g, "RELU", [x], "relu")
    g.outputs = [then(g, "ABS", [then(g, op, [r, g.const("c", np.full(7, c, np.float32))],
                                      "noop", **NONE)], "abs")]
    check(g, remove_trivial_arithmetic.run, rand(2, 5, 7), 1, {"ABS": 1, "RELU": 1})


def test_trivial_arithmetic_that_broadcasts_is_kept():
    g, x = input_graph((2, 5, 1))
    g.outputs = [then(g, "MUL", [x, g.const("ones", np.ones(7, np.float32))], "grow", **NONE)]
    assert remove_trivial_arithmetic.run(g) == 0
