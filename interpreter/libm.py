"""The C library's float32 math functions (expf, tanhf), for building lookup tables, and
the erfc numpy lacks.

TFLite's and XNNPACK's int8 LOGISTIC / TANH / SOFTMAX kernels fill 256-entry tables with
std::exp(float) / std::tanh(float) in prepare. Those are the platform libm's expf and
tanhf, which are not always correctly rounded, and a one-ulp difference can move a table
entry across a rounding boundary. So, where the C library is reachable through ctypes,
the tables are built with the very same functions; elsewhere we fall back to numpy's
float32 functions (correctly rounded float64 results narrowed to float32).

Only prepare() calls these (256 values per op), never invoke().
"""

from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np


def _load():
    name = ctypes.util.find_library("m")
    if name is None:
        return None
    try:
        lib = ctypes.CDLL(name)
        for fn in ("expf", "tanhf"):
            getattr(lib, fn).argtypes = [ctypes.c_float]
            getattr(lib, fn).restype = ctypes.c_float
        lib.exp.argtypes = [ctypes.c_double]
        lib.exp.restype = ctypes.c_double
        return lib
    except (OSError, AttributeError):
        return None


_LIBM = _load()


def _map(fn_name: str, x: np.ndarray, fallback) -> np.ndarray:
    x = np.asarray(x)
    if _LIBM is None:
        return fallback(x)
    fn = getattr(_LIBM, fn_name)
    out = np.array([fn(float(v)) for v in x.reshape(-1)], dtype=x.dtype)
    return out.reshape(x.shape)


def expf(x) -> np.ndarray:
    """float32 exp, element by element (the C library's expf)."""
    x = np.asarray(x, np.float32)
    return _map("expf", x, lambda v: np.exp(v.astype(np.float64)).astype(np.float32))


def tanhf(x) -> np.ndarray:
    """float32 tanh (the C library's tanhf)."""
    x = np.asarray(x, np.float32)
    return _map("tanhf", x, lambda v: np.tanh(v.astype(np.float64)).astype(np.float32))


def exp(x) -> np.ndarray:
    """float64 exp (the C library's exp)."""
    x = np.asarray(x, np.float64)
    return _map("exp", x, np.exp)


# numpy has no erfc. This is the Chebyshev-fitted formula of Press et al., Numerical
# Recipes 2nd ed. section 6.2 (erfcc), whose fractional error is below 1.2e-7 for every x
# -- about one float32 ulp -- evaluated in float64: GELU's float kernel and the fallback of
# its int8 / int16 tables (kernels/common/lut.py) where the C library's erfcf is missing.
_ERFC_COEFFS = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
                -1.13520398, 1.48851587, -0.82215223, 0.17087277)


def erfc(x: np.ndarray) -> np.ndarray:
    """float64 erfc (Numerical Recipes' erfcc), element by element."""
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = np.full_like(t, _ERFC_COEFFS[-1])
    for c in _ERFC_COEFFS[-2::-1]:  # Horner, innermost coefficient first
        poly = poly * t + c
    ans = t * np.exp(-z * z + poly)
    return np.where(x >= 0, ans, 2.0 - ans)
