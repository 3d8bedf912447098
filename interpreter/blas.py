"""The thread count of numpy's BLAS (the matmuls under CONV_2D / FULLY_CONNECTED) inside
``invoke()``, through threadpoolctl.

Why it matters: numpy's bundled OpenBLAS starts one thread per core, and after a call its
threads busy-wait for the next one (OpenBLAS's THREAD_TIMEOUT, about 2^28 cycles). On a
CPU shared with other processes those spinning threads fight the other processes and
each other: MobileNetV2 int8 went from 18.5 ms idle to 126 ms next to two busy processes
with two BLAS threads, 41 ms with one (issue 10; bench/load.py measures it, bench/RESULTS.md
"Latency under load"). So the
Interpreter runs its BLAS calls with a small limit (1 by default: edgelite's own pool,
parallel.py, does the splitting and blocks when idle) and restores the count afterwards,
so the caller's own numpy code outside ``invoke()`` keeps numpy's setting.

threadpoolctl finds the BLAS libraries the process has loaded (OpenBLAS, MKL, BLIS, ...)
and sets their counts; its ``ThreadpoolController`` scans the loaded libraries, so one is
made per process, on first use (numpy is imported by then), and its library controllers
are called directly -- for OpenBLAS (numpy's) its own C getter and setter, while no
thread holds threadpoolctl's control (``_set``): entering and leaving a limit is one get
and two sets per library and a lock, a few microseconds (2-3x less than through
threadpoolctl's Python wrappers; it is most of a tiny model's invoke), and about 1 us
(no library call) when the count already matches. Without threadpoolctl installed (a
numpy-only environment) everything still works: ``available()`` is False, ``status()``
says why, and BLAS keeps numpy's own count.

The limit is process-wide (OpenBLAS's pthreads build, MKL and BLIS keep one count for the
whole process). Several interpreters invoking at once in several threads share it: the
first to enter saves the process's counts, the last to leave restores them, and in
between the smallest limit any of them asked for applies. Integer results do not depend
on it (their BLAS sums are exact); float results may move in the last bits, as with any
change of BLAS thread count. Numpy code in other threads that runs while an invoke is in
progress sees the limit too. With an OpenBLAS built on OpenMP the count is per thread
(threadpoolctl's semantics): the limit then applies to the invoking thread only.
"""

from __future__ import annotations

import threading
from typing import Any

_lock = threading.Lock()
_UNSET = object()
_libs: Any = _UNSET  # the BLAS library controllers, or None when there is no control
_reason = ""  # why there is no control
_shared: list = []  # the controllers whose count is process-wide
_per_thread: list = []  # those whose count is per thread (OpenMP-threaded OpenBLAS)
_active: dict[int, int] = {}  # limits of the sections entered now -> how many
_saved: list = []  # the shared libraries' counts before the first section entered
_applied = 0  # the count the shared libraries have while sections are entered
_local = threading.local()  # per thread: saved counts of the per-thread libraries
_raw_get: dict[int, Any] = {}  # id(controller) -> OpenBLAS's C getter (ctypes), fast path
_raw_set: dict[int, Any] = {}


def _find() -> list | None:
    """The loaded BLAS libraries' threadpoolctl controllers (scanned once per process)."""
    global _libs, _reason
    if _libs is not _UNSET:
        return _libs
    with _lock:
        if _libs is not _UNSET:
            return _libs
        try:
            import numpy  # noqa: F401  (loads numpy's BLAS before the scan)
            from threadpoolctl import ThreadpoolController
        except ImportError:
            _reason = "threadpoolctl is not installed (pip install threadpoolctl)"
            _libs = None
            return None
        libs = list(ThreadpoolController().select(user_api="blas").lib_controllers)
        if not libs:
            _reason = "threadpoolctl found no BLAS library loaded by numpy"
        per_thread = [getattr(lib, "threading_layer", None) == "openmp" for lib in libs]
        for lib in libs:
            get, put = _raw(lib, "openblas_get_num_threads"), _raw(lib, "openblas_set_num_threads")
            if get is not None and put is not None:
                _raw_get[id(lib)], _raw_set[id(lib)] = get, put
        _shared[:] = [lib for lib, p in zip(libs, per_thread) if not p]
        _per_thread[:] = [lib for lib, p in zip(libs, per_thread) if p]
        _libs = libs or None
    return _libs


def reset() -> None:
    """Forget the scan (tests; or after loading another BLAS library): the next use scans
    again. Not to be called while an invoke is running."""
    global _libs, _reason
    with _lock:
        _libs, _reason = _UNSET, ""
        _active.clear()
        _raw_get.clear()
        _raw_set.clear()


def available() -> bool:
    """True when numpy's BLAS thread count can be limited inside invoke()."""
    return _find() is not None


def status() -> str:
    """One line: what controls BLAS threads inside invoke(), or why nothing does."""
    libs = _find()
    if libs is None:
        return f"no BLAS thread control: {_reason}; BLAS keeps numpy's own thread count"
    names = ", ".join(f"{lib.internal_api} {lib.version or ''}".strip() for lib in libs)
    return f"threadpoolctl controls {names}"


def get_threads() -> int | None:
    """numpy's BLAS thread count now (the smallest over its libraries), or None."""
    libs = _find()
    if libs is None:
        return None
    counts = [n for n in (lib.get_num_threads() for lib in libs) if n is not None]
    return min(counts) if counts else None


def _raw(lib, name: str):
    """OpenBLAS's own C function ``name`` (ctypes), for the fast path of ``_get`` / ``_set``
    -- None for other libraries, or a threadpoolctl without these internals."""
    if getattr(lib, "internal_api", None) != "openblas" or \
            getattr(lib, "threading_layer", None) == "openmp" or \
            getattr(type(lib), "_SHARED_STATE", None) is None:
        return None
    try:
        return lib._get_symbol(name)
    except Exception:  # noqa: BLE001 -- a threadpoolctl that changed: the slow path
        return None


def _get(lib) -> int | None:
    raw = _raw_get.get(id(lib))
    return raw() if raw is not None else lib.get_num_threads()


def _set(lib, n: int) -> None:
    """Set one library's count. Fast path (OpenBLAS while no thread holds threadpoolctl's
    control, the usual case): its C setter, what threadpoolctl's set-then-release below
    amounts to, without its Python bookkeeping (10-40 us a section on a busy machine,
    more than a small model's invoke)."""
    raw = _raw_set.get(id(lib))
    if raw is not None and type(lib)._SHARED_STATE.controlling_thread is None:
        raw(n)
        return
    _set_slow(lib, n)


def _set_slow(lib, n: int) -> None:
    """Set one library's count. threadpoolctl lets only one Python thread at a time set
    a process-wide OpenBLAS count (the "controlling thread") and ignores the others;
    edgelite's sections are serialized by ``_lock``, so it gives the control back at once
    so that the next invoke, in whatever thread, can set it. (While a thread of the
    application holds that control inside its own ``threadpool_limits`` block,
    threadpoolctl ignores edgelite's limit, as it ignores every other thread's.)"""
    lib.set_num_threads(n)
    clear = getattr(type(lib), "clear_controlling_thread", None)
    if clear is not None:
        clear()


def _enter(n: int) -> None:
    global _applied
    with _lock:
        if not _active:  # the first section: remember the application's counts
            _saved[:] = [_get(lib) for lib in _shared]
            for lib, before in zip(_shared, _saved):
                if before is not None and before != n:
                    _set(lib, n)
            _applied = n
        elif n < _applied:
            for lib, before in zip(_shared, _saved):
                if before is not None:
                    _set(lib, n)
            _applied = n
        _active[n] = _active.get(n, 0) + 1
    if _per_thread:
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        stack.append([lib.get_num_threads() for lib in _per_thread])
        for lib in _per_thread:
            lib.set_num_threads(n)


def _leave(n: int) -> None:
    global _applied
    if _per_thread:
        for lib, before in zip(_per_thread, _local.stack.pop()):
            if before is not None:
                lib.set_num_threads(before)
    with _lock:
        if _active[n] > 1:
            _active[n] -= 1
        else:
            del _active[n]
        if not _active:  # the last section: give the application its counts back
            for lib, before in zip(_shared, _saved):
                if before is not None and before != _applied:
                    _set(lib, before)
        elif min(_active) != _applied:
            _applied = min(_active)
            for lib, before in zip(_shared, _saved):
                if before is not None:
                    _set(lib, _applied)


class _Limit:
    """The context manager ``threads(n)`` returns (a class: cheaper than a generator)."""

    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n

    def __enter__(self) -> None:
        _enter(self.n)

    def __exit__(self, *exc) -> None:
        _leave(self.n)


class _NoLimit:
    __slots__ = ()

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        pass


_NO_LIMIT = _NoLimit()


def threads(n: int | None) -> _Limit | _NoLimit:
    """A context manager running its block with numpy's BLAS limited to ``n`` threads
    (None, or no control: leave it alone). Re-entrant and safe from several threads at
    once: the smallest limit of the blocks entered applies (module docstring)."""
    if n is None or _find() is None:
        return _NO_LIMIT
    return _Limit(max(1, int(n)))
