"""CAST against LiteRT's reference kernels."""

import numpy as np
import pytest

from tests.support import assert_micro_exact, rand, run_edgelite, run_litert

from ..op_models import check_op, op_model

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


# --------------------------------------------------------------------------- saturation
# Out-of-range floats, inf and NaN: LiteRT saturates (NaN -> the maximum), TFLM too
# (NaN -> 0); numpy's astype would wrap. Every value exactly, both LiteRT kernel sets.

EDGES = np.array([1.5, -1.7, 0.0, -0.0, 3e9, -3e9, 300.7, -200.2, np.nan, np.inf, -np.inf,
                  65535.9, 1e20, -1e20, 2147483520.0, -2147483648.0], np.float32)
INTEGERS = (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, I64)


def _exact_both_sets(model: bytes, feeds) -> np.ndarray:
    """edgelite's output, equal (NaN at the same places) to LiteRT's in both kernel sets."""
    for kernels in ("reference", "default"):
        (ours,), (want,) = run_edgelite(model, feeds, kernels), run_litert(model, feeds, kernels)
        assert ours.dtype == want.dtype and ours.shape == want.shape
        np.testing.assert_array_equal(ours, want, err_msg=kernels)
    return ours


@pytest.mark.parametrize("dst", INTEGERS)
@pytest.mark.parametrize("src", (F32, np.float64, np.float16))
def test_float_to_integer_saturates(src, dst):
    with np.errstate(over="ignore"):
        x = EDGES.astype(src)  # float16: the big ones become inf
    model, feeds = op_model("CAST", [x], [(x.shape, dst)])
    out = _exact_both_sets(model, feeds)
    info = np.iinfo(dst)
    assert out[8] == info.max and out[9] == info.max and out[10] == info.min  # nan, +-inf
    assert out[1] == (-1 if info.min < 0 else 0)


@pytest.mark.parametrize("dst", (np.int8, np.int16, np.int32, np.uint32))  # TFLM's types
def test_float_to_integer_micro_nan_is_zero(dst):
    model, feeds = op_model("CAST", [EDGES], [(EDGES.shape, dst)])
    (out,) = assert_micro_exact(model, feeds)
    assert out[8] == 0 and out[9] == np.iinfo(dst).max


# --------------------------------------------------------------------------- complex64

COMPLEX = (EDGES + np.float32(2.5) * 1j).astype(np.complex64)
COMPLEX[2] = 5j  # real part 0: False as bool though the value is not 0
ALL_TYPES = (F32, np.float64, np.float16, *INTEGERS, np.bool_, np.complex64)


@pytest.mark.parametrize("dst", ALL_TYPES)
def test_cast_from_complex64_takes_the_real_part(dst):
    model, feeds = op_model("CAST", [COMPLEX], [(COMPLEX.shape, dst)])
    out = _exact_both_sets(model, feeds)
    if np.dtype(dst).kind == "f":
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(out, EDGES.astype(dst))
    elif dst == np.bool_:
        np.testing.assert_array_equal(out, EDGES != 0)
    elif dst == np.complex64:
        np.testing.assert_array_equal(out, COMPLEX)
    else:  # saturated as the real part itself
        (want,) = run_litert(op_model("CAST", [EDGES], [(EDGES.shape, dst)])[0], [EDGES])
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("src", (F32, np.float64, np.float16, np.int8, np.uint8, np.int16,
                                 np.int32, I64, np.bool_))
def test_cast_to_complex64(src):
    x = np.array([1.5, -2.25, 0, 7, 100, -100, 3], np.float64).astype(src)
    if src == I64:
        x[-1] = (1 << 40) + 1  # rounds to float32 once
    model, feeds = op_model("CAST", [x], [(x.shape, np.complex64)])
    out = _exact_both_sets(model, feeds)
    np.testing.assert_array_equal(out.imag, 0)
    np.testing.assert_array_equal(out.real, x.astype(F32))
