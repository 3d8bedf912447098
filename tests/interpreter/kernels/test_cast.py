"""CAST against LiteRT's reference kernels."""

import numpy as np
import pytest

from ..op_models import check_op
from ..oracle import rand

I32, I64, F32 = np.int32, np.int64, np.float32

CASTS = [(F32, I32), (F32, I64), (F32, np.bool_), (F32, np.uint8), (I32, F32), (I64, F32),
         (I32, I64), (I64, I32), (np.bool_, F32), (np.bool_, I32), (I32, np.bool_),
         (np.uint8, F32), (np.int8, I32), (F32, np.int16), (F32, np.float16)]


@pytest.mark.parametrize("src,dst", CASTS)
def test_cast(rng, src, dst):
    low, high = (0, 200) if np.dtype(dst) == np.uint8 else (-100, 100)
    x = rand(rng, (4, 7), low=low, high=high)
    x[0, :3] = [0.0, -0.0, 0.5]
    x = x.astype(src)
    (out,) = check_op("CAST", [x], [((4, 7), dst)])
    np.testing.assert_array_equal(out, x.astype(dst))


def test_cast_int64_wraps():
    x = np.array([1 << 33, -(1 << 31) - 1, 5], I64)
    check_op("CAST", [x], [((3,), I32)])
