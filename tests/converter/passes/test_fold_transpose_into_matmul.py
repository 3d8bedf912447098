"""fold_transpose_into_matmul on small graphs: exact op counts after, the same numbers before and
after."""

import numpy as np

from edgelite.converter.ir import Graph
from edgelite.converter.passes import fold_transpose_into_matmul

from ..irgraph import rand, run_ir, then


def test_fold_transpose_into_matmul():
    g = Graph()
    a, b = g.tensor("a", np.float32, (2, 5, 3)), g.tensor("b", np.float32, (2, 5, 4))
    g.inputs = [a, b]
    at = then(g, "TRANSPOSE", [a, g.const("perm", np.int32([0, 2, 1]))], "at")
    g.outputs = [then(g, "BATCH_MATMUL", [at, b], "mm", adj_x=False, adj_y=False)]
    av, bv = rand(2, 5, 3), rand(2, 5, 4)
    assert fold_transpose_into_matmul.run(g) == 1
    assert g.op_counts() == {"BATCH_MATMUL": 1} and g.ops[0].options["adj_x"] is True
    np.testing.assert_allclose(run_ir(g, av, bv)[0], np.swapaxes(av, 1, 2) @ bv, rtol=1e-5,
                               atol=1e-6)
