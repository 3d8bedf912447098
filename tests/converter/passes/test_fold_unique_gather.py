"""fold_unique_gather: the Unique + two Gathers of tf.nn.embedding_lookup_sparse become one
GATHER of the table by the ids (same rows, bit for bit); kept when the distinct values or
the first gather are read elsewhere, or a gather is not a plain row gather."""

import numpy as np
import pytest

from edgelite.converter.ir import Graph
from edgelite.converter.passes import fold_unique_gather

from ..irgraph import rand, run_ir

ROWS = dict(axis=0, batch_dims=0)


def lookup(inner_axis: int = 0, values_read: bool = False):
    """x[6] int32 -> UNIQUE -> GATHER(table, values) -> GATHER(rows, positions)."""
    g = Graph()
    x = g.tensor("x", np.int32, (6,))
    g.inputs = [x]
    table = g.const("table", rand(8, 3))
    values, positions = g.tensor("values", np.int32), g.tensor("positions", np.int32)
    g.add_op("UNIQUE", [x], [values, positions], dict(idx_out_type=2), name="unique")
    rows, out = g.tensor("rows", np.float32), g.tensor("out", np.float32)
    g.add_op("GATHER", [table, values], [rows], dict(axis=inner_axis, batch_dims=0), name="g1")
    g.add_op("GATHER", [rows, positions], [out], ROWS, name="g2")
    g.outputs = [out, values] if values_read else [out]
    return g


def test_two_gathers_by_unique_become_one():
    g = lookup()
    x = np.array([5, 1, 5, 7, 1, 0], np.int32)
    before = run_ir(g, x)[0]
    assert fold_unique_gather.run(g) == 1
    assert g.op_counts() == {"GATHER": 1}
    np.testing.assert_array_equal(run_ir(g, x)[0], before)


@pytest.mark.parametrize("case", ["values read", "column gather"])
def test_kept(case):
    g = lookup(values_read=case == "values read", inner_axis=1 if case == "column gather" else 0)
    counts = g.op_counts()
    if case == "values read":  # the gathers fold, UNIQUE stays for its other reader
        assert fold_unique_gather.run(g) == 1
        assert g.op_counts() == {"UNIQUE": 1, "GATHER": 1}
    else:
        assert fold_unique_gather.run(g) == 0
        assert g.op_counts() == counts
