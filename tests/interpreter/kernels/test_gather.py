"""GATHER against LiteRT's reference kernels."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError
from tests.support import rand

from ..op_models import check_op, const, run_op

I32, I64, F32 = np.int32, np.int64, np.float32


@pytest.mark.parametrize("axis,idx_shape", [(0, (5,)), (1, (2, 3)), (2, ()), (-1, (4,)),
                                            (0, (2, 2, 2))])
@pytest.mark.parametrize("idx_dtype", [I32, I64])
@pytest.mark.parametrize("constant", [False, True])
def test_gather(rng, axis, idx_shape, idx_dtype, constant):
    x = rand(rng, (4, 5, 6))
    idx = rng.integers(0, x.shape[axis], size=idx_shape).astype(idx_dtype)
    expected = np.take(x, idx, axis=axis)
    (out,) = check_op("GATHER", [x, const(idx) if constant else idx],
                      [(expected.shape, F32)], axis=axis)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("axis,batch_dims,negative", [(1, 1, False), (2, 1, False),
                                                      (2, 2, False), (2, 1, True),
                                                      (3, 2, False), (3, 2, True)])
def test_gather_batch_dims(rng, axis, batch_dims, negative):
    x = rand(rng, (2, 3, 4, 5))
    idx = rng.integers(0, x.shape[axis], size=x.shape[:batch_dims] + (2, 3)).astype(I32)
    expected = np.empty(x.shape[:axis] + idx.shape[batch_dims:] + x.shape[axis + 1:], F32)
    for b in np.ndindex(*x.shape[:batch_dims]):
        expected[b] = np.take(x[b], idx[b], axis=axis - batch_dims)
    option = batch_dims - idx.ndim if negative else batch_dims
    (out,) = check_op("GATHER", [x, idx], [(expected.shape, F32)], axis=axis,
                      batch_dims=option)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype", [I32, I64, np.bool_])
def test_gather_integer_params(rng, dtype):
    x = np.array([5, 6, 7, 8], dtype) if dtype != np.bool_ else np.array([1, 0, 1, 1], bool)
    idx = np.array([3, 0, 0], I32)
    (out,) = check_op("GATHER", [x, idx], [((3,), x.dtype)])
    np.testing.assert_array_equal(out, x[idx])


def test_gather_out_of_range(rng):
    x = rand(rng, (4, 3))
    with pytest.raises(ShapeError, match=r"GATHER.*\[0, 4\); got values from 0 to 4"):
        run_op("GATHER", [x, np.array([0, 4], I32)], [((2, 3), F32)])
    with pytest.raises(ShapeError, match=r"\[0, 4\); got values from -1"):
        run_op("GATHER", [x, const([-1, 2], I32)], [((2, 3), F32)])
