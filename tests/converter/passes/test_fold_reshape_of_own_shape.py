"""fold_reshape_of_own_shape: RESHAPE(w, CONCATENATION(SHAPE(w), [1])) of a vector w (TF's
broadcast reshape of embedding weights) reads the constant shape [-1, 1]; kept for a
matrix, or another tensor's shape."""

import numpy as np
import pytest

from edgelite.converter.ir import Graph
from edgelite.converter.passes import fold_reshape_of_own_shape

from ..irgraph import NONE, run_ir


def reshape_by_shape(rank: int = 1, own: bool = True):
    g = Graph()
    x = g.tensor("x", np.float32, (5,) * rank)
    other = g.tensor("other", np.float32, (5,) * rank)
    g.inputs = [x, other]
    dims = g.tensor("dims", np.int32)
    g.add_op("SHAPE", [x if own else other], [dims], dict(out_type=2), name="shape")
    shape = g.tensor("new_shape", np.int32)
    g.add_op("CONCATENATION", [dims, g.const("ones", np.int32([1]))], [shape],
             dict(axis=0, **NONE), name="concat")
    y = g.tensor("y", np.float32)
    g.add_op("RESHAPE", [x, shape], [y], name="reshape")
    g.outputs = [y]
    return g


def test_vector_reshape_takes_a_constant_shape():
    g = reshape_by_shape()
    x = np.arange(5, dtype=np.float32)
    assert fold_reshape_of_own_shape.run(g) == 1
    reshape = g.producer(g.outputs[0])
    assert reshape.inputs[1].data.tolist() == [-1, 1]
    g.remove_dead_ops()
    assert g.op_counts() == {"RESHAPE": 1}
    out = run_ir(g, x, x)[0]
    assert out.shape == (5, 1)


@pytest.mark.parametrize("rank, own", [(2, True), (1, False)])
def test_kept(rank, own):
    g = reshape_by_shape(rank, own)
    assert fold_reshape_of_own_shape.run(g) == 0
