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
  Offsets are aligned to 64 bytes (kDefaultTensorAlignment). The offsets are exactly
  SimpleMemoryArena's, but found in O(n log n) plus the number of tensors alive together
  instead of its O(n^2) scan (see "the index" below).

Lifetimes are inclusive op intervals [first, last]; ``NEVER_FREED`` as ``last`` means
"alive until the end". Two tensors may share bytes only if their intervals do not
intersect, so an op's inputs and outputs never alias.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Iterable, Mapping, NamedTuple, Sequence

from edgelite.errors import GraphError

ALIGNMENT = 64  # bytes; TFLite's kDefaultTensorAlignment
NEVER_FREED = 2**62  # stands for TFLite's kNodeNotAssigned dealloc node


@dataclass(frozen=True)
class ArenaPlan:
    offsets: Mapping[int, int]  # tensor index -> byte offset in the arena
    size: int  # bytes the arena needs (high-water mark)
    visits: int = 0  # placed tensors / byte ranges the planner looked at (a work count)


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
    max_visits: int | None = None,
) -> ArenaPlan:
    """Offsets for every tensor in ``lifetimes`` (``sizes`` in bytes).

    The same offsets as SimpleMemoryArena's scan over every placed tensor (see the
    module docstring), found without that scan: each tensor's search looks only at the
    placed tensors that are live during its lifetime and not yet "settled" (below),
    plus the merged byte ranges of the settled ones.

    ``max_visits`` bounds that work (default: work_budget(number of tensors)); a graph
    that needs more is refused with GraphError rather than planned for hours.
    """
    order = allocation_order(lifetimes, sizes)
    queue = [t for t in order if sizes[t] != 0]  # SimpleMemoryArena skips empty tensors
    spans = [lifetimes[t] for t in queue]
    nbytes = [sizes[t] for t in queue]
    for t in queue:
        first, last = lifetimes[t]
        if not 0 <= first <= last or sizes[t] < 0:
            raise ValueError(f"tensor {t}: lifetime {lifetimes[t]} / size {sizes[t]} "
                             "(need 0 <= first <= last and size >= 0)")
    budget = work_budget(len(queue)) if max_visits is None else max_visits
    settle = _settle_steps(spans)
    live, visits = _live_pairs(spans, settle, budget)
    placed = _place(nbytes, settle, live, alignment, budget, visits)
    visits = placed.visits
    offsets: dict[int, int] = {}
    high_water = 0
    positions = iter(placed.offsets)
    for t in order:
        if sizes[t] == 0:
            offsets[t] = 0  # SimpleMemoryArena gives empty tensors offset 0, no space
            continue
        offsets[t] = next(positions)
        high_water = max(high_water, offsets[t] + sizes[t])
    return ArenaPlan(offsets, high_water, visits)


# --------------------------------------------------------------------------- the index
#
# SimpleMemoryArena::Allocate walks every placed tensor in offset order, skips those whose
# lifetime does not intersect the new one, and watches the gaps between the rest: that is
# O(n) per tensor, O(n^2) per plan (96 s for a 100,000-op chain). The result depends only
# on the byte ranges of the placed tensors that intersect the new one in time, so:
#
# * Placed tensor A is *settled* from step settle[A] of the allocation order on: every
#   tensor placed from then on intersects A in time (whole-run tensors from the start;
#   with preserve_all_tensors every tensor). Settled tensors' byte ranges are kept merged
#   in one sorted list, so a thousand inputs or a preserved 100,000-op graph cost a
#   handful of ranges per search, not one visit per tensor.
# * Pairs (A placed before B, intersecting in time, A not settled yet when B is placed)
#   are found once, by one sweep over time, and B's search visits exactly those A.
#
# The work is O(n log n) plus the number of such pairs -- the tensors alive together
# (a chain: ~2 per tensor). Never-freed tensors born mid-graph (outputs, tensors nobody
# reads) that are not settled pair with every later tensor; TFLite's own scan visits
# every placed tensor for every tensor. The work (and so the memory the pairs take) is
# bounded by work_budget(n): a graph that needs more is refused, not planned for hours.


class _Placement(NamedTuple):
    offsets: list[int]  # per tensor of the allocation order (empty ones left out)
    visits: int  # the work so far plus the byte ranges the searches looked at


def _settle_steps(spans: Sequence[tuple[int, int]]) -> list[int]:
    """settle[p]: the first step > p from which every tensor placed intersects p."""
    n = len(spans)
    # min_last[i] / -max_first[i]: over the tensors placed at steps >= i (both
    # non-decreasing in i; the sentinel at n stands for "no tensor left").
    min_last = [NEVER_FREED + 1] * (n + 1)
    neg_max_first = [1] * (n + 1)
    for i in range(n - 1, -1, -1):
        first, last = spans[i]
        min_last[i] = min(min_last[i + 1], last)
        neg_max_first[i] = min(neg_max_first[i + 1], -first)
    # Tensor p intersects every tensor from step i on iff first_p <= min_last[i] and
    # last_p >= max_first[i]; the first such i comes from two binary searches.
    return [max(p + 1, bisect_left(min_last, first), bisect_left(neg_max_first, -last))
            for p, (first, last) in enumerate(spans)]


def work_budget(n: int) -> int:
    """Visits allowed for planning ``n`` tensors: 2**22 (a few seconds) plus 32 per
    tensor. Real graphs need ~2-5 per tensor (MobileNetV2: 254 for 67 tensors)."""
    return 2**22 + 32 * n


def _too_much_work(n: int, budget: int) -> GraphError:
    return GraphError(
        f"cannot plan the arena of {n} tensors within {budget} steps: too many tensors are "
        "alive at once (tensors never freed -- graph outputs made early, outputs nobody "
        "reads -- are alive with every tensor after them)"
    )


def _live_pairs(spans: Sequence[tuple[int, int]], settle: Sequence[int], budget: int):
    """live[q]: the steps p < q whose tensors intersect q's in time and are not settled
    at step q (q < settle[p]). One sweep over time: a tensor meets every earlier-born
    tensor still alive when it is born."""
    n = len(spans)
    live: list[list[int]] = [[] for _ in range(n)]
    # Tensors that settle right after their own step ("settled at once") are never
    # visited, so they need not be looked at when later-born tensors meet them -- except
    # as the later step of a pair, which only an unsettled tensor placed before them can
    # need: those go to ``waiting``; the others to ``unsettled``.
    first_unsettled = next((p for p in range(n) if settle[p] > p + 1), n)
    unsettled: dict[int, None] = {}
    waiting: dict[int, None] = {}
    by_last = sorted(range(n), key=lambda p: spans[p][1])
    dead = 0
    visits = 0
    for x in sorted(range(n), key=lambda p: spans[p][0]):
        born = spans[x][0]
        while dead < n and spans[by_last[dead]][1] < born:
            unsettled.pop(by_last[dead], None)
            waiting.pop(by_last[dead], None)
            dead += 1
        visits += len(unsettled)
        if visits > budget:
            raise _too_much_work(n, budget)
        for y in unsettled:
            early, late = (x, y) if x < y else (y, x)
            if late < settle[early]:
                live[late].append(early)
        if settle[x] > x + 1:
            visits += len(waiting)
            if visits > budget:
                raise _too_much_work(n, budget)
            for y in waiting:
                if x < y < settle[x]:
                    live[y].append(x)
            unsettled[x] = None
        elif x > first_unsettled:
            waiting[x] = None
    return live, visits


def _place(nbytes: Sequence[int], settle: Sequence[int], live: Sequence[list[int]],
           alignment: int, budget: int, visits: int) -> _Placement:
    """SimpleMemoryArena::Allocate for each tensor in turn, over the byte ranges of the
    settled tensors (merged) and of the live pairs. ``visits``: the work done so far."""
    n = len(nbytes)
    settling: list[list[int]] = [[] for _ in range(n)]
    for p, step in enumerate(settle):
        if step < n:
            settling[step].append(p)
    starts: list[int] = []  # settled byte ranges, merged, sorted by start
    ends: list[int] = []
    offsets = [0] * n
    for q in range(n):
        for p in settling[q]:
            _merge_range(starts, ends, offsets[p], offsets[p] + nbytes[p], alignment)
        ranges = sorted([(offsets[p], offsets[p] + nbytes[p]) for p in live[q]]) \
            if live[q] else ()
        visits += len(starts) + len(ranges)
        if visits > budget:
            raise _too_much_work(n, budget)
        offsets[q] = _best_fit(starts, ends, ranges, nbytes[q], alignment)
    return _Placement(offsets, visits)


def _merge_range(starts: list[int], ends: list[int], start: int, end: int,
                 alignment: int) -> None:
    """Add bytes [start, end) to the merged ranges. Two ranges merge when the gap between
    them cannot hold an aligned byte (_align(end) >= next start): no tensor could ever
    be placed there, so for the search the gap does not exist. A range keeps the exact
    (unaligned) end, which the search's fit arithmetic uses."""
    i = bisect_right(starts, start)
    if i and _align(ends[i - 1], alignment) >= start:
        i -= 1
        start = starts[i]
        end = max(end, ends[i])
    j = i
    while j < len(starts) and _align(end, alignment) >= starts[j]:
        end = max(end, ends[j])
        j += 1
    starts[i:j] = [start]
    ends[i:j] = [end]


def _best_fit(starts: Sequence[int], ends: Sequence[int], ranges: Sequence[tuple[int, int]],
              size: int, alignment: int) -> int:
    """SimpleMemoryArena::Allocate's scan over the byte ranges in offset order (the
    merged settled ranges and the live pairs' ranges, merged on the fly): the smallest
    gap that holds ``size`` at an aligned offset, else the aligned end. The fit compares
    the gap from the aligned offset with the best gap from its unaligned start, exactly
    as simple_memory_arena.cc does."""
    current = 0  # end of the ranges seen so far
    best_offset = None
    best_fit = None
    i = k = 0
    n_settled, n_live = len(starts), len(ranges)
    while True:
        if i < n_settled and (k == n_live or starts[i] <= ranges[k][0]):
            start, end = starts[i], ends[i]
            i += 1
        elif k < n_live:
            start, end = ranges[k]
            k += 1
        else:
            break
        aligned = _align(current, alignment)
        if aligned + size <= start and (best_fit is None or start - aligned < best_fit):
            best_offset = aligned
            best_fit = start - current
        if end > current:
            current = end
        # (TFLite also stops at a fit of 0, which never happens: a fit is >= size > 0.)
    return _align(current, alignment) if best_offset is None else best_offset
