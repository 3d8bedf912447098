"""matmul_to_fully_connected on small graphs: exact op counts after, the same numbers before and
after."""

import numpy as np

from edgelite.converter.passes import matmul_to_fully_connected

from ..irgraph import rand, run_ir, then


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
