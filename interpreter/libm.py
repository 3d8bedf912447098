"""The C library's float32 math functions (expf, tanhf), for building lookup tables.

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
