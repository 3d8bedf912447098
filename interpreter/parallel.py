"""Running one op's work on several threads: the Interpreter's ``num_threads``.

numpy releases the GIL inside its loops and in BLAS calls, so the big kernels (CONV_2D,
DEPTHWISE_CONV_2D, float or quantized) split their output rows into ``num_threads``
slices and run the slices at once: the calling thread takes the first, worker threads
the others. BLAS then runs single-threaded inside each slice (the Interpreter sets
that), so one mechanism covers the matmuls and the elementwise work alike.

Workers are daemon threads shared by every interpreter of the process (one pool per
thread count); a pool that is busy -- another thread is invoking through it -- runs
the slices one after the other on the caller instead of waiting. Each hand-off costs a
thread wake-up (tens of microseconds), so kernels only split ops with large outputs
(``worth_splitting``).
"""

from __future__ import annotations

import queue
import threading
from typing import Callable, Sequence

MIN_SPLIT_ELEMENTS = 2**18  # output values below which an op runs on one thread


def worth_splitting(threads: int, elements: int) -> int:
    """How many slices an op with ``elements`` output values should run in (1: none)."""
    if threads <= 1 or elements < MIN_SPLIT_ELEMENTS:
        return 1
    return min(threads, elements // (MIN_SPLIT_ELEMENTS // 2))


def row_ranges(rows: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` contiguous, near-equal [start, stop) ranges covering ``rows``."""
    parts = max(1, min(parts, rows))
    bounds = [rows * i // parts for i in range(parts + 1)]
    return [(bounds[i], bounds[i + 1]) for i in range(parts)]


def output_slices(batch: int, height: int, parts: int) -> list[tuple[slice, ...]]:
    """Index tuples splitting (N, H, ...) arrays into ``parts`` row slices whose 2-D
    (rows, channels) reshapes stay views: along H for a single image, else along N."""
    if batch == 1:
        return [(slice(None), slice(a, b)) for a, b in row_ranges(height, parts)]
    return [(slice(a, b),) for a, b in row_ranges(batch, parts)]


class _Worker:
    def __init__(self) -> None:
        self.tasks: queue.SimpleQueue = queue.SimpleQueue()
        self.done: queue.SimpleQueue = queue.SimpleQueue()
        thread = threading.Thread(target=self._loop, name="edgelite-worker", daemon=True)
        thread.start()

    def _loop(self) -> None:
        while True:
            fn, args = self.tasks.get()
            try:
                fn(*args)
                self.done.put(None)
            except BaseException as exc:  # handed back to the caller
                self.done.put(exc)


class Pool:
    """The calling thread plus ``size - 1`` workers."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._workers = [_Worker() for _ in range(size - 1)]
        self._lock = threading.Lock()

    def run(self, fn: Callable, args: Sequence[tuple]) -> None:
        """fn(*args[i]) for every i, concurrently; returns when all are done and re-raises
        the first exception."""
        if len(args) == 1 or not self._lock.acquire(blocking=False):
            for a in args:
                fn(*a)
            return
        try:
            extra = args[1:len(self._workers) + 1]
            for worker, a in zip(self._workers, extra):
                worker.tasks.put((fn, a))
            error = None
            try:
                fn(*args[0])
                for a in args[len(extra) + 1:]:  # more slices than threads
                    fn(*a)
            except BaseException as exc:
                error = exc
            for worker, _ in zip(self._workers, extra):
                result = worker.done.get()
                if error is None and result is not None:
                    error = result
            if error is not None:
                raise error
        finally:
            self._lock.release()


_pools: dict[int, Pool] = {}
_pools_lock = threading.Lock()


def pool(size: int) -> Pool:
    """The process's pool of ``size`` threads (created on first use)."""
    with _pools_lock:
        if size not in _pools:
            _pools[size] = Pool(size)
        return _pools[size]


def run_slices(threads: int, fn: Callable, args: Sequence[tuple]) -> None:
    """fn(*a) for every a in ``args``: on ``threads`` threads when there are several."""
    if threads <= 1 or len(args) <= 1:
        for a in args:
            fn(*a)
        return
    pool(threads).run(fn, args)
