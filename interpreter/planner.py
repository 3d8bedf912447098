"""Arena planning: tensor lifetimes -> byte offsets in one shared buffer.

A faithful, small re-implementation of TFLite's planner:

* ``compute_lifetimes`` follows ArenaPlanner::PlanAllocations
  (tensorflow/lite/arena_planner.cc). Walking the ops in execution order, a tensor is
  allocated at the first op that outputs it (graph inputs at op 0) and freed at the op
  that drops its last reference. Graph inputs and outputs get one extra reference, so
  they are never freed: inputs stay readable after invoke() and outputs are never
  overwritten. A tensor nobody reads is never freed either. With
  ``preserve_all_tensors`` nothing is ever freed, so every tensor gets its own bytes.
* ``plan_arena`` follows ArenaPlanner::CreateTensorAllocationVector and
  SimpleMemoryArena::Allocate (tensorflow/lite/simple_memory_arena.cc): tensors alive
  for the whole run come first (by index), then the rest by size, largest first (ties:
  earlier allocation first). Each one takes the smallest gap between already placed
  tensors whose lifetimes overlap its own ("best fit"), or goes after the last of them.
  Offsets are aligned to 64 bytes (kDefaultTensorAlignment).

Lifetimes are inclusive op intervals [first, last]; ``NEVER_FREED`` as ``last`` means
"alive until the end". Two tensors may share bytes only if their intervals do not
intersect, so an op's inputs and outputs never alias.
"""

from __future__ import annotations

from bisect import insort
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

ALIGNMENT = 64  # bytes; TFLite's kDefaultTensorAlignment
NEVER_FREED = 2**62  # stands for TFLite's kNodeNotAssigned dealloc node


@dataclass(frozen=True)
class ArenaPlan:
    offsets: Mapping[int, int]  # tensor index -> byte offset in the arena
    size: int  # bytes the arena needs (high-water mark)


def _align(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


def compute_lifetimes(
    op_inputs: Sequence[Sequence[int]],
    op_outputs: Sequence[Sequence[int]],
    graph_inputs: Iterable[int],
    graph_outputs: Iterable[int],
    planned: Iterable[int],
    preserve_all_tensors: bool = False,
) -> dict[int, tuple[int, int]]:
    """(first op, last op) of every tensor in ``planned`` that is allocated at all.

    ``op_inputs`` / ``op_outputs`` list tensor indices per op in execution order (-1 for
    an omitted optional input). Tensors outside ``planned`` (constants) are ignored.
    """
    planned = set(planned)
    refcounts: dict[int, int] = {}
    first: dict[int, int] = {}
    last: dict[int, int] = {}

    def allocate(op: int, tensor: int) -> None:
        if tensor in planned and tensor not in first:
            first[tensor] = op

    def deallocate(op: int, tensor: int) -> None:
        if tensor in first and tensor not in last:
            last[tensor] = op

    for t in graph_outputs:
        if t >= 0:
            refcounts[t] = refcounts.get(t, 0) + 1
    for t in graph_inputs:
        if t >= 0:
            refcounts[t] = refcounts.get(t, 0) + 1
            allocate(0, t)
    for inputs in op_inputs:
        for t in inputs:
            if t >= 0:
                refcounts[t] = refcounts.get(t, 0) + 1

    for op, (inputs, outputs) in enumerate(zip(op_inputs, op_outputs, strict=True)):
        for t in outputs:
            if t >= 0:
                allocate(op, t)
        if preserve_all_tensors:
            continue
        for t in inputs:
            if t >= 0:
                refcounts[t] -= 1
                if refcounts[t] == 0:
                    deallocate(op, t)

    return {t: (first[t], last.get(t, NEVER_FREED)) for t in first}


def allocation_order(lifetimes: Mapping[int, tuple[int, int]],
                     sizes: Mapping[int, int]) -> list[int]:
    """The order in which TFLite computes offsets (CreateTensorAllocationVector)."""

    def key(t: int):
        start, end = lifetimes[t]
        if start == 0 and end == NEVER_FREED:
            return (0, t, 0, 0)  # whole-run tensors first, by index
        return (1, -sizes[t], start, t)  # then largest first, earlier allocation first

    return sorted(lifetimes, key=key)


def plan_arena(
    lifetimes: Mapping[int, tuple[int, int]],
    sizes: Mapping[int, int],
    alignment: int = ALIGNMENT,
) -> ArenaPlan:
    """Offsets for every tensor in ``lifetimes`` (``sizes`` in bytes)."""
    placed: list[tuple[int, int, int, int]] = []  # (offset, size, first, last), by offset
    offsets: dict[int, int] = {}
    high_water = 0
    for t in allocation_order(lifetimes, sizes):
        size = sizes[t]
        first, last = lifetimes[t]
        if size == 0:
            offsets[t] = 0  # SimpleMemoryArena gives empty tensors offset 0, no space
            continue
        best_offset = None
        best_fit = None
        current = 0  # end of the placed tensors seen so far
        for p_offset, p_size, p_first, p_last in placed:
            if p_last < first or p_first > last:
                continue  # lifetimes do not intersect: its bytes are free for us
            aligned = _align(current, alignment)
            # A gap before this tensor that fits us and is tighter than the best so far.
            if aligned + size <= p_offset and (best_fit is None
                                               or p_offset - aligned < best_fit):
                best_offset = aligned
                best_fit = p_offset - current
            current = max(current, p_offset + p_size)
            if best_fit == 0:
                break  # a perfect fit
        if best_offset is None:
            best_offset = _align(current, alignment)
        offsets[t] = best_offset
        high_water = max(high_water, best_offset + size)
        insort(placed, (best_offset, size, first, last))
    return ArenaPlan(offsets, high_water)
