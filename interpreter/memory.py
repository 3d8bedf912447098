"""The memory limit of one allocation: arena + folded constants + kernels' work buffers.

A .tflite file declares shapes, and a few bytes can declare gigabytes (a FILL of a
2**29-element shape is 12 bytes of constants). allocate_tensors() therefore adds up
what an allocation will take and refuses, with one line naming the biggest tensors and
their sizes, *before* allocating past the limit:

* folded constants are charged before each fold (allocation.py),
* kernels' work buffers (scratch() and the shared Workspace, kernels/base.py) before
  each buffer is made,
* the arena once it is planned, before it is allocated.

The default limit is DEFAULT_MEMORY_LIMIT, or half the machine's physical memory when
that is less (where os.sysconf can tell); ``Interpreter(memory_limit=...)`` sets another.
"""

from __future__ import annotations

import functools
import gc
import os
from contextlib import contextmanager
from typing import Callable, Iterator, Mapping

import numpy as np

from edgelite.errors import MemoryLimitError
from edgelite.names import quoted

DEFAULT_MEMORY_LIMIT = 4 * 2**30  # 4 GiB: far above real models at batch 1, below a crash
_SHOWN = 3  # the biggest tensors a refusal names


def physical_memory() -> int | None:
    """Bytes of physical memory, or None where os.sysconf cannot tell (Windows)."""
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    return pages * page_size if pages > 0 and page_size > 0 else None


def default_memory_limit() -> int:
    ram = physical_memory()
    return DEFAULT_MEMORY_LIMIT if ram is None else min(DEFAULT_MEMORY_LIMIT, ram // 2)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a model is read or allocated.

    Reading and allocating a model create a few objects per tensor and op (frozen
    dataclasses, tuples, records) and no reference cycles. With the collector on, its
    full collections re-scan every live object each time the heap grows by a quarter:
    on a 100,000-op model that took 40 % of allocate_tensors(). It is turned back on
    afterwards -- unless it was off before (the caller's choice is kept)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def out_of_memory_as_error(what: str) -> Callable:
    """Decorator: a MemoryError inside the call (numpy could not get the memory the limit
    allowed, e.g. on a small device or under a ulimit) becomes one MemoryLimitError line."""
    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except MemoryError:
                raise MemoryLimitError(
                    f"{what}: the system ran out of memory; free memory, use smaller input "
                    "shapes, or pass Interpreter(memory_limit=...) below what the machine "
                    "can give so the model is refused up front") from None
        return wrapper
    return decorate


def check_limit(memory_limit) -> int | None:
    """A valid ``memory_limit`` argument (None or a positive int of bytes)."""
    if memory_limit is None:
        return None
    if isinstance(memory_limit, bool) or not isinstance(memory_limit, (int, np.integer)) \
            or memory_limit <= 0:
        raise ValueError(f"memory_limit should be a positive number of bytes, got "
                         f"{memory_limit!r}")
    return int(memory_limit)


class MemoryBudget:
    """What an allocation has taken so far, against its limit."""

    def __init__(self, limit: int):
        self.limit = limit
        self.constants = 0  # bytes of folded constants
        self.work = 0  # bytes of kernels' work buffers

    def _advice(self) -> str:
        return (f"over the {self.limit}-byte memory limit; check the input shapes, or pass "
                "Interpreter(memory_limit=...) to allow more")

    def _take(self, where: str, nbytes: int, what: str) -> None:
        taken = self.constants + self.work
        if taken + nbytes > self.limit:
            raise MemoryLimitError(f"{where}: {what} would take {taken + nbytes} bytes with what is "
                             f"allocated so far, {self._advice()}")

    def take_constant(self, where: str, nbytes: int) -> None:
        """Charge a folded op's outputs (``where`` names the op) before computing them."""
        self._take(where, nbytes, f"folding its {nbytes}-byte output into a constant")
        self.constants += nbytes

    def take_work(self, where: str, nbytes: int) -> None:
        """Charge a kernel's work buffer before making it."""
        self._take(where, nbytes, f"a {nbytes}-byte work buffer")
        self.work += nbytes

    def check_arena(self, arena: int, names: Mapping[int, str], sizes: Mapping[int, int],
                    constants: Mapping[int, int]) -> None:
        """Refuse a plan whose arena does not fit beside what is taken. ``sizes``: bytes
        of the arena's tensors, ``constants``: of the folded ones; ``names``: tensor
        names, for the biggest of both."""
        total = arena + self.constants + self.work
        if total <= self.limit:
            return
        biggest = sorted(list(sizes.items()) + list(constants.items()),
                         key=lambda item: (-item[1], item[0]))[:_SHOWN]
        listed = ", ".join(f"{quoted(names[t])} {nbytes}" for t, nbytes in biggest)
        raise MemoryLimitError(
            f"allocate_tensors() needs {total} bytes (a {arena}-byte arena, {self.constants} "
            f"bytes of folded constants, {self.work} bytes of work buffers), "
            f"{self._advice()}; the biggest tensors (bytes): {listed}"
        )


class DynamicMemory:
    """At invoke: the running total of one allocation -- its arena, folded constants and
    work buffers (``base``) plus every dynamic output it holds now -- against the limit.

    Outputs sized at invoke (a FILL whose dims an input gives, a WHILE whose carried tensor
    grows) are charged before they are allocated where their shapes are known first (ops
    prepared at invoke), else as soon as the kernel returns them; a tensor's new value
    replaces its old one in the total."""

    __slots__ = ("limit", "base", "held", "total")

    def __init__(self, limit: int, base: int):
        self.limit = limit
        self.base = base
        self.held: dict[int, int] = {}   # dynamic tensor -> bytes of its current value
        self.total = base

    def charge(self, where: str, tensors, sizes) -> None:
        """Account ``sizes`` (bytes) as the new values of ``tensors``, or raise one
        MemoryLimitError line naming the op (``where``) without changing anything."""
        total = self.total + sum(sizes) - sum(self.held.get(t, 0) for t in tensors)
        if total > self.limit:
            raise MemoryLimitError(
                f"{where}: its outputs ({sum(sizes)} bytes, sized at invoke) would bring "
                f"the model's memory to {total} bytes ({self.base} allocated up front, "
                f"{total - self.base} in tensors sized at invoke), over the {self.limit}-byte "
                "memory limit; check the input values, or pass Interpreter(memory_limit=...) "
                "to allow more")
        for t, nbytes in zip(tensors, sizes):
            self.held[t] = nbytes
        self.total = total
