"""The thread count of numpy's BLAS (the matmuls under CONV_2D / FULLY_CONNECTED).

numpy wheels bundle OpenBLAS (``scipy_openblas``), whose thread count can be changed at
run time through ``openblas_set_num_threads``; environment variables such as
OPENBLAS_NUM_THREADS only act before numpy is imported. This module finds that library
among the ones the process has loaded (or in numpy's bundled-library folder) and calls
its setter through ctypes -- no dependency, nothing native of edgelite's own. Where
numpy uses another BLAS (MKL, Accelerate) or none is found, ``available()`` is False
and the thread count stays whatever the BLAS chose (usually one per core).

Elementwise numpy work (depthwise convolutions, requantization, activations) runs on
one thread whatever this says.
"""

from __future__ import annotations

import ctypes
import glob
import os
from contextlib import contextmanager

_PREFIXES = ("scipy_openblas", "openblas")
_SUFFIXES = ("64_", "_64_", "")
_UNSET = object()
_api = _UNSET  # (get, set) ctypes functions, or None when no OpenBLAS was found


def _candidate_paths() -> list[str]:
    paths = []
    try:
        with open("/proc/self/maps") as maps:  # Linux: the libraries already loaded
            for line in maps:
                path = line.split(maxsplit=5)[-1].strip()
                if "openblas" in os.path.basename(path).lower() and path not in paths:
                    paths.append(path)
    except OSError:
        pass
    import numpy

    root = os.path.dirname(numpy.__file__)
    for folder in (root + ".libs", os.path.join(root, ".dylibs"), os.path.join(root, "..",
                                                                             "numpy.libs")):
        paths += sorted(glob.glob(os.path.join(folder, "*openblas*")))
    return paths


def _find_api():
    global _api
    if _api is not _UNSET:
        return _api
    _api = None
    for path in _candidate_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix in _PREFIXES:
            for suffix in _SUFFIXES:
                getter = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                setter = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                if getter is not None and setter is not None:
                    getter.restype, getter.argtypes = ctypes.c_int, []
                    setter.restype, setter.argtypes = None, [ctypes.c_int]
                    _api = (getter, setter)
                    return _api
    return _api


def available() -> bool:
    """True when numpy's BLAS thread count can be read and changed."""
    return _find_api() is not None


def get_threads() -> int | None:
    api = _find_api()
    return None if api is None else int(api[0]())


def set_threads(n: int) -> bool:
    """Set numpy's BLAS thread count (process-wide); False when that is not possible."""
    api = _find_api()
    if api is None:
        return False
    api[1](max(1, int(n)))
    return True


@contextmanager
def threads(n: int | None):
    """Run a block with ``n`` BLAS threads (None or -1: leave the count alone)."""
    api = _find_api() if n is not None and n > 0 else None
    if api is None:
        yield
        return
    before = int(api[0]())
    if before != n:
        api[1](int(n))
    try:
        yield
    finally:
        if before != n:
            api[1](before)
