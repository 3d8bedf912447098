"""DEPTH_TO_SPACE and SPACE_TO_DEPTH against LiteRT's reference kernels."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError
from tests.support import rand

from ..op_models import check_op, run_op

I32, F32 = np.int32, np.float32


@pytest.mark.parametrize("block,shape", [(2, (1, 3, 4, 8)), (3, (2, 2, 2, 18)),
                                         (1, (1, 2, 3, 4)), (2, (2, 1, 1, 4))])
@pytest.mark.parametrize("dtype", [F32, I32])
def test_depth_to_space(rng, block, shape, dtype):
    x = rand(rng, shape, low=-50, high=50).astype(dtype)
    n, h, w, c = shape
    out_shape = (n, h * block, w * block, c // block // block)
    (out,) = check_op("DEPTH_TO_SPACE", [x], [(out_shape, dtype)], block_size=block)
    # Round trip through SPACE_TO_DEPTH restores the input.
    (back,) = check_op("SPACE_TO_DEPTH", [out], [(shape, dtype)], block_size=block)
    np.testing.assert_array_equal(back, x)


@pytest.mark.parametrize("block,shape", [(2, (1, 4, 6, 3)), (3, (2, 6, 3, 2))])
def test_space_to_depth(rng, block, shape):
    x = rand(rng, shape)
    n, h, w, c = shape
    check_op("SPACE_TO_DEPTH", [x], [((n, h // block, w // block, c * block * block), F32)],
             block_size=block)
    with pytest.raises(ShapeError, match="multiples of block_size"):
        run_op("SPACE_TO_DEPTH", [x], [((1, 1, 1, 1), F32)], block_size=5)
