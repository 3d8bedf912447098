"""TILE and BROADCAST_TO against LiteRT's reference kernels."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError
from tests.support import rand

from ..op_models import check_op, const, run_op

I32, I64, F32 = np.int32, np.int64, np.float32


@pytest.mark.parametrize("multiples", [[1, 1], [2, 3], [1, 4], [3, 1]])
@pytest.mark.parametrize("dtype", [F32, I32, I64, np.bool_])
def test_tile(rng, multiples, dtype):
    x = (rand(rng, (2, 3)) > 0).astype(dtype) * 3 if dtype != np.bool_ else rand(rng, (2, 3)) > 0
    expected = np.tile(x, multiples)
    (out,) = check_op("TILE", [x, const(multiples, I32)], [(expected.shape, x.dtype)])
    np.testing.assert_array_equal(out, expected)


def test_tile_rank4_int64_multiples(rng):
    x = rand(rng, (1, 2, 1, 3))
    check_op("TILE", [x, const([2, 1, 3, 2], I64)], [((2, 2, 3, 6), F32)])


@pytest.mark.parametrize("x_shape,shape", [((3,), (2, 3)), ((1, 3), (4, 3)), ((2, 1, 1), (2, 3, 4)),
                                           ((), (2, 2)), ((1,), (1, 1, 5))])
def test_broadcast_to(rng, x_shape, shape):
    x = rand(rng, x_shape)
    # LiteRT registers BROADCAST_TO from version 2 (version 1 was a placeholder).
    (out,) = check_op("BROADCAST_TO", [x, const(shape, I32)], [(shape, F32)], version=2)
    np.testing.assert_array_equal(out, np.broadcast_to(x, shape))


def test_broadcast_to_incompatible(rng):
    with pytest.raises(ShapeError, match="cannot broadcast"):
        run_op("BROADCAST_TO", [rand(rng, (2, 3)), const([2, 4], I32)], [((2, 4), F32)])
