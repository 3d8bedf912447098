"""BATCH_MATMUL against LiteRT's reference kernels."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError

from ..op_models import check_op, const, run_op
from ..oracle import rand

F32 = np.float32


@pytest.mark.parametrize("a_shape,b_shape", [((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)),
                                             ((2, 3, 4), (4, 5)), ((1, 3, 4), (6, 4, 2)),
                                             ((2, 1, 3, 4), (1, 5, 4, 2)),
                                             ((4, 2, 3, 4), (4, 5))])
@pytest.mark.parametrize("adj_x", [False, True])
@pytest.mark.parametrize("adj_y", [False, True])
@pytest.mark.parametrize("rhs_const", [False, True])
def test_batch_matmul(rng, a_shape, b_shape, adj_x, adj_y, rhs_const):
    a, b = rand(rng, a_shape), rand(rng, b_shape)
    if adj_x:
        a = np.ascontiguousarray(a.swapaxes(-1, -2))
    if adj_y:
        b = np.ascontiguousarray(b.swapaxes(-1, -2))
    expected = np.matmul(a.swapaxes(-1, -2) if adj_x else a, b.swapaxes(-1, -2) if adj_y else b)
    (out,) = check_op("BATCH_MATMUL", [a, const(b) if rhs_const else b],
                      [(expected.shape, F32)], adj_x=adj_x, adj_y=adj_y)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_batch_matmul_mismatch(rng):
    with pytest.raises(ShapeError, match="different inner dimensions"):
        run_op("BATCH_MATMUL", [rand(rng, (2, 3)), rand(rng, (2, 3))], [((2, 3), F32)])
