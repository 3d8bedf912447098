"""interpreter/libm.py: the C library's expf / tanhf / exp for lookup tables, and the numpy
fallback where no libm is reachable."""

import numpy as np
import pytest

from edgelite.interpreter import libm

X = np.linspace(-10, 10, 2001, dtype=np.float32).reshape(3, 667)


def _ulps(a: np.ndarray, b: np.ndarray) -> int:
    return int(np.max(np.abs(a.view(np.int32).astype(np.int64) - b.view(np.int32))))


# glibc's documented worst-case errors (manual, "Errors in Math Functions"): expf 1 ulp,
# tanhf 2 ulps -- which is why the tables use the C library's results, not numpy's.
@pytest.mark.parametrize("name, reference, ulps", [("expf", np.exp, 1), ("tanhf", np.tanh, 2)])
def test_float32_functions_are_within_glibcs_bound_of_the_exact_result(name, reference, ulps):
    got = getattr(libm, name)(X)
    assert got.dtype == np.float32 and got.shape == X.shape
    exact = reference(X.astype(np.float64)).astype(np.float32)
    assert _ulps(got, exact) <= ulps
    assert getattr(libm, name)(np.float32([0.0])).tolist() == [1.0 if name == "expf" else 0.0]


def test_exp_is_float64():
    x = np.array([-1.5, 0.0, 2.0, 30.0])
    got = libm.exp(x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np.exp(x), rtol=1e-15)


@pytest.mark.parametrize("name", ["expf", "tanhf", "exp"])
def test_without_libm_the_numpy_results(monkeypatch, name):
    monkeypatch.setattr(libm, "_LIBM", None)
    got = getattr(libm, name)(X)
    wide = X.astype(np.float64)
    fn = np.tanh if name == "tanhf" else np.exp
    want = fn(wide) if name == "exp" else fn(wide).astype(np.float32)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_libm_is_the_c_library_here():
    assert libm._LIBM is not None  # Linux CI: the tables are built with glibc's functions
