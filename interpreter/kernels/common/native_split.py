"""How a native step splits its work over the Interpreter's threads: the C pool
(native/threadpool.c) runs the step's tasks on ``num_threads - 1`` sleeping workers and
the invoking thread, inside the step -- no Python and no GIL between the slices, so a split
op stays in the C run loop (docs/native-run-loop.md).

The decision is made once, in prepare: an op with at least ``SPLIT_MACS`` multiply-adds
is cut into ``TASKS_PER_THREAD`` tasks per thread. The C pool's hand-off (a condition
variable broadcast and a futex wake, then one atomic add per task) costs ~10-50 us of
wall time before a worker runs on this machine, so an op must take well over that on one
core for a second core to pay: SPLIT_MACS is about 50 us of the AVX2 GEMM here. Several
tasks per thread let the caller take over a worker's remaining tasks when that worker has
lost its core (a busy machine: bench/load.py), at one atomic add per task.
"""

from __future__ import annotations

# multiply-adds below which an op runs on the invoking thread only (measured: see the
# module docstring and docs/native-run-loop.md)
SPLIT_MACS = 2**20
# output values below which an element-wise op (ADD / SUB / MUL: well under a nanosecond a
# value) runs on the invoking thread only
SPLIT_ELEMENTS = 2**18
# output values below which a float32 transcendental (LOGISTIC, TANH, EXP, GELU, SOFTMAX:
# about 1 ns a value with AVX2) runs on the invoking thread only: 2^16 values is ~65 us
SPLIT_TRANSCENDENTAL = 2**16
TASKS_PER_THREAD = 2


def tasks(threads: int, work: int, units: int, threshold: int | None = None) -> int:
    """How many tasks an op of ``work`` (multiply-adds, or values), divisible into
    ``units`` equal pieces (rows, panels, runs of values), runs as: 1 (not split) below
    ``threshold`` (SPLIT_MACS) or on one thread; else up to TASKS_PER_THREAD per thread
    worth running (one per threshold / 2 of work)."""
    threshold = SPLIT_MACS if threshold is None else threshold
    if threads <= 1 or work < threshold or units <= 1:
        return 1
    parts = min(threads, work // max(1, threshold // 2))
    return max(1, min(units, parts * TASKS_PER_THREAD))
