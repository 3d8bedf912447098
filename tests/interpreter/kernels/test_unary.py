"""EXP, LOG, SQRT, RSQRT, SQUARE, ABS, NEG, SIGN, FLOOR, CEIL, ROUND, SIN, COS and
LOGICAL_NOT against LiteRT's reference kernels (its default kernels where the reference
resolver lacks the op, and where they compute differently)."""

import numpy as np
import pytest

from tests.support import rand

from ..op_models import NOT_IN_REF_RESOLVER, check_op, check_op_default, run_op

I32, I64, F32 = np.int32, np.int64, np.float32

UNARY = {
    "EXP": (-20, 20), "LOG": (0.001, 100), "SQRT": (0, 100), "RSQRT": (0.001, 100),
    "SQUARE": (-100, 100), "ABS": (-10, 10), "NEG": (-10, 10), "SIN": (-10, 10),
    "COS": (-10, 10), "FLOOR": (-10, 10), "CEIL": (-10, 10), "ROUND": (-10, 10),
    "SIGN": (-3, 3),
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_float(rng, op):
    low, high = UNARY[op]
    x = rand(rng, (3, 50), low=low, high=high)
    if op in ("ROUND", "SIGN"):
        x[0, :8] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.0, 3.0]
    check = check_op_default if op in NOT_IN_REF_RESOLVER else check_op
    check(op, [x], [(x.shape, F32)])


@pytest.mark.parametrize("op,dtype", [("ABS", I32), ("NEG", I32), ("NEG", I64), ("SIGN", I32)])
def test_unary_int(rng, op, dtype):
    x = rand(rng, (4, 9), dtype, low=-1000, high=1000)
    check_op(op, [x], [(x.shape, dtype)])


def test_square_int32(rng):
    # LiteRT's SQUARE is float only; edgelite also squares int32 (wrapping).
    x = rand(rng, (4, 9), I32, low=-1000, high=1000)
    (out,) = run_op("SQUARE", [x], [(x.shape, I32)])
    np.testing.assert_array_equal(out, x * x)


def test_unary_special_values():
    x = np.array([0.0, -1.0, np.inf, -0.0], F32)
    for op in ("LOG", "SQRT", "RSQRT"):
        check_op(op, [x], [((4,), F32)])
    check_op("EXP", [np.array([100.0, -200.0, 0.0], F32)], [((3,), F32)])


def test_logical_not(rng):
    check_op("LOGICAL_NOT", [rand(rng, (5, 2)) > 0], [((5, 2), np.bool_)])


@pytest.mark.parametrize("op,options,low,high", [
    ("EXP", {}, -20, 20), ("LOG", {}, 0.001, 100), ("SIN", {}, -10, 10), ("COS", {}, -10, 10),
])
def test_against_default_kernels(rng, op, options, low, high):
    # LiteRT's optimized kernels (Eigen / XNNPACK) round differently from its reference
    # kernels, by up to ~100 ulp for SIN / COS / LOG: still within rtol 1e-5 relative to
    # the tensor's magnitude.
    x = rand(rng, (4, 64), low=low, high=high)
    check_op_default(op, [x], [(x.shape, F32)], **options)
