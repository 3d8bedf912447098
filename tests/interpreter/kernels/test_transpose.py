"""TRANSPOSE against LiteRT's reference kernels."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError
from tests.support import rand

from ..op_models import check_op, const, run_op

I32, F32 = np.int32, np.float32


@pytest.mark.parametrize("perm", [[1, 0], [0, 2, 1], [2, 0, 1], [3, 1, 0, 2], [0, 1, 2, 3, 4],
                                  [4, 2, 0, 3, 1]])
@pytest.mark.parametrize("dtype", [F32, I32])
def test_transpose(rng, perm, dtype):
    x = rand(rng, (2, 3, 4, 5, 6)[:len(perm)], low=-50, high=50).astype(dtype)
    expected = x.transpose(perm)
    (out,) = check_op("TRANSPOSE", [x, const(perm, I32)], [(expected.shape, dtype)])
    np.testing.assert_array_equal(out, expected)


def test_transpose_bad_perm(rng):
    with pytest.raises(ShapeError, match="not a permutation"):
        run_op("TRANSPOSE", [rand(rng, (2, 3)), const([0, 0], I32)], [((2, 3), F32)])
    x = rand(rng, (2, 3))  # a computed perm: prepared at invoke (interpreter/dynamic.py)
    (out,) = check_op("TRANSPOSE", [x, np.array([1, 0], I32)], [((3, 2), F32)])
    np.testing.assert_array_equal(out, x.T)
