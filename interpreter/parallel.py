"""Running one op's work on several threads: the Interpreter's ``num_threads``.

numpy releases the GIL inside its loops and in BLAS calls, so the big kernels (CONV_2D,
DEPTHWISE_CONV_2D, float or quantized) split their output rows into ``num_threads``
slices and run the slices at once. BLAS then runs single-threaded inside each slice (the
Interpreter sets that, blas.py), so one mechanism covers the matmuls and the elementwise
work alike.

Workers are daemon threads shared by every interpreter of the process (one pool per
thread count). They never spin: an idle worker is blocked in ``SimpleQueue.get()`` (a
futex wait: no CPU), and a caller waiting for a worker's slice is blocked on an Event.
Spinning is what makes OpenBLAS's own threads collapse on a shared CPU (blas.py).

The slices of one run sit in a shared list; the calling thread and the woken workers
take slices from it until it is empty, and the caller then waits only for slices a
worker already started. So when the CPU is busy with other processes and a woken worker
does not get a core soon, the caller simply runs that slice itself: a run is never much
slower than running its slices one after the other, whatever the load (the point of
bench/load.py). A pool that is busy -- another thread is invoking through it -- is not
waited for either: the caller runs all its slices itself. Each hand-off costs a thread
wake-up (tens of microseconds), so kernels only split ops with large outputs
(``worth_splitting``).
"""

from __future__ import annotations

import os
import queue
import threading
from typing import Callable, Sequence

MIN_SPLIT_ELEMENTS = 2**18  # output values below which an op runs on one thread
# The Interpreter's num_threads when none is given. Measured (bench/load.py, bench/RESULTS.md
# "Latency under load", MobileNetV2 224 on 2 cores): a second thread gains 3-8 % when the
# CPU is idle but loses 10-35 % beside two busy processes (four runnable threads on two
# cores: a worker holding a started slice waits for a time slice), so one thread -- also
# LiteRT's default -- is the setting that is never the slow case. Pass num_threads=N for
# throughput on an idle machine (and the batch split).
DEFAULT_THREADS = 1


def default_threads() -> int:
    """``DEFAULT_THREADS``, but no more than the cores this process may run on."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(DEFAULT_THREADS, cores))


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


class _Run:
    """One ``Pool.run``: the slices not started yet, and who is still running one."""

    def __init__(self, fn: Callable, args: Sequence[tuple]) -> None:
        self.fn = fn
        self.todo = list(reversed(args))  # taken from the end, under ``lock``
        self.lock = threading.Lock()
        self.running = 0  # slices taken by workers and not finished
        self.finished = threading.Event()
        self.error: BaseException | None = None

    def work(self, by_worker: bool) -> None:
        """Take and run slices until none is left."""
        while True:
            with self.lock:
                if not self.todo:
                    return
                a = self.todo.pop()
                if by_worker:
                    self.running += 1
            try:
                self.fn(*a)
            except BaseException as exc:  # handed back to the caller
                with self.lock:
                    self.error = self.error or exc
            finally:
                if by_worker:
                    with self.lock:
                        self.running -= 1
                        if not self.running and not self.todo:
                            self.finished.set()

    def wait(self) -> None:
        """Block (no spinning) until the slices workers took are done."""
        with self.lock:
            if not self.running:
                return
        self.finished.wait()


class _Worker:
    def __init__(self) -> None:
        self.runs: queue.SimpleQueue = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="edgelite-worker",
                                       daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            run = self.runs.get()  # blocks in the kernel while idle
            run.work(by_worker=True)


class Pool:
    """The calling thread plus ``size - 1`` workers."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.workers = [_Worker() for _ in range(size - 1)]
        self._lock = threading.Lock()

    def run(self, fn: Callable, args: Sequence[tuple]) -> None:
        """fn(*args[i]) for every i, concurrently; returns when all are done and re-raises
        the first exception."""
        if len(args) == 1 or not self._lock.acquire(blocking=False):
            for a in args:
                fn(*a)
            return
        try:
            run = _Run(fn, args)
            for worker in self.workers[:len(args) - 1]:
                worker.runs.put(run)
            run.work(by_worker=False)
            run.wait()
            if run.error is not None:
                raise run.error
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
