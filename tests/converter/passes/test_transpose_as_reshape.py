"""transpose_as_reshape: a TRANSPOSE that moves only axes of size 1 is a RESHAPE (TF's
ConvertTrivialTransposeOpToReshapeOp); one that reorders longer axes, or reads a tensor with
a dimension known only at run time, stays."""

import numpy as np
import pytest

from edgelite.converter.passes import transpose_as_reshape

from ..irgraph import check, input_graph, rand


def _graph(shape, perm, signature=None):
    g, x = input_graph(shape)
    x.shape_signature = signature
    out = g.tensor("y", np.float32, tuple(shape[p] for p in perm))
    g.add_op("TRANSPOSE", [x, g.const("perm", np.asarray(perm, np.int32))], [out])
    g.outputs = [out]
    return g


@pytest.mark.parametrize("shape, perm", [((1, 5, 3), (1, 0, 2)), ((4, 1, 1, 6), (0, 2, 3, 1)),
                                         ((1, 1, 7), (2, 0, 1))])
def test_unit_axes_moved_is_a_reshape(shape, perm):
    g = _graph(shape, perm)
    check(g, transpose_as_reshape.run, rand(*shape), 1, {"RESHAPE": 1})
    (op,) = g.ops
    assert list(op.inputs[1].data) == [shape[p] for p in perm]


@pytest.mark.parametrize("shape, perm, signature", [
    ((2, 5, 3), (1, 0, 2), None),       # longer axes change places
    ((1, 5, 3), (0, 2, 1), None),
    ((1, 5, 3), (1, 0, 2), (-1, 5, 3)),  # a dynamic batch of 1 now, more later
])
def test_real_transposes_stay(shape, perm, signature):
    g = _graph(shape, perm, signature)
    assert transpose_as_reshape.run(g) == 0 and g.op_counts() == {"TRANSPOSE": 1}
