"""interpreter/kernels/binary.py: FLOOR_MOD for every type LiteRT's floor_mod.cc takes
(int8, int16, int32, int64, float32), bit for bit, sign of zero included."""

import numpy as np
import pytest

from edgelite.interpreter import EdgeliteError

from ..op_models import op_model, run_op
from ..quant_oracle import run_litert, run_ours

INTS = [np.int8, np.int16, np.int32, np.int64]
KERNEL_SETS = ("reference", "default")


def floor_mod(a, b):
    """reference/floor_mod.h: t = a % b (C++: truncated) or fmod(a, b), then t + b where
    t != 0 and the signs of t and b differ -- Python's % for integers."""
    a, b = np.broadcast_arrays(a, b)
    if a.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            t = np.fmod(a, b)
    else:
        t = np.array([_cpp_remainder(int(x), int(y)) for x, y in zip(a.ravel(), b.ravel())],
                     a.dtype).reshape(a.shape)
    fix = (t != 0) & ((b < 0) != (t < 0))
    return np.where(fix, t + b, t).astype(a.dtype)


def _cpp_remainder(x: int, y: int) -> int:
    """C++ x % y: the quotient truncated toward zero."""
    q = abs(x) // abs(y)
    return x - y * (q if (x < 0) == (y < 0) else -q)


def check_floor_mod(a, b):
    shape = np.broadcast_shapes(a.shape, b.shape)
    model, feeds = op_model("FLOOR_MOD", [a, b], [(shape, a.dtype)])
    want = floor_mod(a, b)
    for kernels in KERNEL_SETS:
        (ours,) = run_ours(model, feeds, kernels)
        (theirs,) = run_litert(model, feeds, kernels)
        assert ours.dtype == a.dtype and ours.shape == shape
        bits = np.dtype(f"u{a.itemsize}")
        np.testing.assert_array_equal(ours.view(bits), theirs.view(bits), err_msg=kernels)
        np.testing.assert_array_equal(ours.view(bits), want.view(bits))
    return ours


# Every sign combination, exact multiples (remainder 0), |a| < |b|, and the extremes.
def signed_pairs(dtype):
    info = np.iinfo(dtype)
    a = [7, -7, 7, -7, 6, -6, 0, 3, -3, info.max, info.min, info.min, info.max, info.min + 1]
    b = [3, 3, -3, -3, 3, -3, 5, 7, -7, 2, 3, info.max, info.min, -1]
    return np.array(a, dtype), np.array(b, dtype)


@pytest.mark.parametrize("dtype", INTS)
def test_integers(dtype):
    a, b = signed_pairs(dtype)
    out = check_floor_mod(a, b)
    np.testing.assert_array_equal(out[:9], [1, 2, -2, -1, 0, 0, 0, 3, -3])


@pytest.mark.parametrize("dtype", INTS)
def test_integers_broadcast(rng, dtype):
    a = rng.integers(-100, 100, (2, 3, 4)).astype(dtype)
    b = np.array([5, -3, 7, -1], dtype)
    check_floor_mod(a, b)
    check_floor_mod(b.reshape(4, 1), a[0, :1])  # [4, 1] against [1, 4]


def test_float_signs_of_zero_inf_and_nan():
    # A zero remainder keeps a's sign (fmod), where np.mod would give b's.
    a = np.array([-4, 4, -4, 4, 5, -5, 1.5, -1.5, np.inf, -1, 1, np.nan, 3, 0.0, -0.0, 7],
                 np.float32)
    b = np.array([2, -2, -2, 2, 3, 3, np.inf, np.inf, 2, np.inf, -np.inf, 1, np.nan, 3, 3, 0],
                 np.float32)
    out = check_floor_mod(a, b)
    np.testing.assert_array_equal(np.signbit(out[:4]), [True, False, True, False])
    np.testing.assert_array_equal(out[4:8], [2, 1, 1.5, np.inf])


def test_float_broadcast(rng):
    a = rng.uniform(-10, 10, (3, 1, 5)).astype(np.float32)
    b = rng.uniform(0.5, 3, (4, 1)).astype(np.float32) * np.array([[1], [-1], [1], [-1]],
                                                                 np.float32)
    check_floor_mod(a, b)


@pytest.mark.parametrize("dtype", INTS)
def test_integer_division_by_zero_fails(dtype):
    a, b = np.array([4, 5], dtype), np.array([1, 0], dtype)
    model, feeds = op_model("FLOOR_MOD", [a, b], [((2,), dtype)])
    with pytest.raises(EdgeliteError, match="FLOOR_MOD.*integer division by zero"):
        run_ours(model, feeds, "default")
    with pytest.raises(RuntimeError, match="Division by 0"):
        run_litert(model, feeds, "reference")


def test_uint8_is_refused_like_litert():
    a = np.array([4, 5], np.uint8)
    with pytest.raises(EdgeliteError, match="has type uint8; this kernel supports float32, "
                       "int8, int16, int32, int64"):
        run_op("FLOOR_MOD", [a, a], [((2,), np.uint8)])
