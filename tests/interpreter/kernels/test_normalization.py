"""L2_NORMALIZATION against LiteRT's reference kernels (and its default kernels)."""

import numpy as np
import pytest

from ..op_models import check_op, check_op_default
from ..oracle import rand

F32 = np.float32


@pytest.mark.parametrize("shape", [(1, 10), (2, 3, 16), (4,), (1, 1, 1, 64)])
def test_l2_normalization(rng, shape):
    x = rand(rng, shape, low=-3, high=3)
    check_op("L2_NORMALIZATION", [x], [(shape, F32)])


def test_l2_normalization_epsilon():
    # A zero row stays zero; a row whose norm is below 1e-6 is divided by 1e-6.
    x = np.array([[0.0, 0.0, 0.0], [3e-7, -4e-7, 0.0], [3.0, 4.0, 0.0]], F32)
    (out,) = check_op("L2_NORMALIZATION", [x], [((3, 3), F32)])
    np.testing.assert_allclose(out, [[0, 0, 0], [0.3, -0.4, 0], [0.6, 0.8, 0]], rtol=1e-6)


@pytest.mark.parametrize("op,options,low,high", [
    ("L2_NORMALIZATION", {}, -3, 3),
])
def test_against_default_kernels(rng, op, options, low, high):
    # LiteRT's optimized kernels (Eigen / XNNPACK) round differently from its reference
    # kernels: still within rtol 1e-5 relative to the tensor's magnitude.
    x = rand(rng, (4, 64), low=low, high=high)
    check_op_default(op, [x], [(x.shape, F32)], **options)
