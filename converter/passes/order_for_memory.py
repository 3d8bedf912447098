"""Order the ops so TFLite Micro's memory planner needs a smaller arena (branches first-fit).

The op order of a .tflite is the order TFLite Micro runs it, and the lifetimes its
GreedyMemoryPlanner packs into the arena follow from that order: on a graph with branches
(Inception blocks, DenseNet concatenations, U-Net skips, residual blocks) another topological
order can need less RAM. A linear chain has one order and is left as it is.

Objective: the arena of TFLM's greedy planner (micro/memory_planner/greedy_memory_planner.cc
and micro_allocation_info.cc, modelled by `planner_peak`): every activation tensor is a buffer
of its byte size rounded up to 16; op i (0-based) runs at time i + 1; graph inputs live from
time 0 and graph outputs to the last time; a tensor lives from its producer to its last
reader. Buffers are placed largest first (ties: the later tensor first, as TFLM's stable sort
of a list filled from the back), each at the lowest offset that fits between the buffers
already placed that overlap it in time; the arena is the highest end. Sizes are counted one
byte per float element in the float graph, as in the full-integer file quantization makes
of it (a float model's sizes are 4x, the same up to the 16-byte rounding); the converter
runs the pass again after quantization (passes.reorder_quantized), on the real sizes, so
the QUANTIZE ops it adds (requantizing a CONCATENATION's inputs, ...) are ordered too. Per-op scratch buffers
are not modelled (they are the same set in every order).

Search, region by region (a region ends where a single activation tensor crosses from the
ops before to the ops after; a linear chain is a chain of one-op regions):
  * exact: a dynamic programme over the sets of ops already run (the state determines the
    live bytes) finds the order of smallest live-bytes peak, the planner's lower bound,
    capped at EXACT_STATES states per region;
  * heuristic, where a region has more states: list scheduling that runs, of the ready ops,
    the one that adds the fewest live bytes (the branch that frees memory first), ties in
    the file's order.
When the whole graph has at most EXACT_ORDERS topological orders every order is scored with
the planner itself (exact for the true objective). The order found replaces the file's only
when its planner arena is strictly smaller, so the pass never makes the arena larger and a
second run changes nothing. Graphs with control flow, variable tensors or unknown shapes are
left as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Graph, Tensor

ALIGN = 16             # TFLM's kBufferAlignment: each buffer's size is rounded up to it
EXACT_STATES = 20_000  # states of the exact search per region; larger regions: heuristic
EXACT_ORDERS = 2_000   # graphs with at most this many orders: every order scored by the planner
STATEFUL = frozenset({"VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "CALL_ONCE"})


@dataclass(frozen=True)
class Dag:
    """The graph's ops as numbers 0..n-1 in the file's order, and their activation tensors."""

    n: int
    sizes: tuple[int, ...]                  # per tensor id: bytes, rounded up to ALIGN
    inputs: tuple[tuple[int, ...], ...]     # per op: the activation tensor ids it reads
    outputs: tuple[tuple[int, ...], ...]    # per op: the tensor ids it writes
    producer: tuple[int, ...]               # per tensor id: its op, -1 for a graph input
    readers: tuple[tuple[int, ...], ...]    # per tensor id: the ops reading it
    graph_inputs: frozenset[int]
    graph_outputs: frozenset[int]

    def preds(self, op: int) -> set[int]:
        return {self.producer[t] for t in self.inputs[op] if self.producer[t] >= 0}


def _bytes(t: Tensor, float_as_int8: bool) -> int | None:
    if t.shape is None or any(d is None or d < 0 for d in t.shape):
        return None
    dtype = np.dtype(t.dtype)
    item = 1 if dtype.kind == "f" and float_as_int8 else dtype.itemsize
    size = int(np.prod(t.shape, dtype=np.int64)) * item
    return -(-size // ALIGN) * ALIGN


def build_dag(graph: Graph, float_as_int8: bool = True) -> Dag | None:
    """The graph as a Dag, or None where its order must not change (see module doc).
    `float_as_int8`: count float tensors one byte per element (before quantization)."""
    ops = list(graph.ops)
    if graph.is_subgraph or any(op.subgraphs or op.type in STATEFUL for op in ops):
        return None
    ids: dict[int, int] = {}
    sizes: list[int] = []
    producer: list[int] = []

    def tid(t: Tensor, prod: int) -> int | None:
        if id(t) not in ids:
            size = _bytes(t, float_as_int8)
            if size is None:
                raise _Unknown
            ids[id(t)] = len(sizes)
            sizes.append(size)
            producer.append(prod)
        return ids[id(t)]

    try:
        for t in graph.inputs:
            if not t.is_const:
                tid(t, -1)
        ins, outs = [], []
        for i, op in enumerate(ops):
            if any(t is not None and t.is_variable for t in [*op.inputs, *op.outputs]):
                return None
            ins.append(tuple(dict.fromkeys(
                ids[id(t)] for t in op.inputs
                if t is not None and not t.is_const and id(t) in ids)))
            outs.append(tuple(tid(t, i) for t in op.outputs))
        graph_outputs = frozenset(ids[id(t)] for t in graph.outputs if id(t) in ids)
    except _Unknown:
        return None
    readers: list[list[int]] = [[] for _ in sizes]
    for i, reads in enumerate(ins):
        for t in reads:
            readers[t].append(i)
    return Dag(len(ops), tuple(sizes), tuple(ins), tuple(outs), tuple(producer),
               tuple(map(tuple, readers)),
               frozenset(t for t, p in enumerate(producer) if p < 0), graph_outputs)


class _Unknown(Exception):
    """A tensor without a static shape: its size, and so the plan, is unknown."""


# -- the objective: TFLM's greedy planner ---------------------------------------------------
def lifetimes(dag: Dag, order: list[int]) -> list[tuple[int, int, int]]:
    """(size, first time, last time) per buffer, in the order the file would number the
    tensors (first seen along `order`, as export.py numbers them)."""
    pos = {op: k for k, op in enumerate(order)}
    end = dag.n
    seen: dict[int, None] = dict.fromkeys(sorted(dag.graph_inputs))
    for op in order:
        seen.update(dict.fromkeys(dag.inputs[op]))
        seen.update(dict.fromkeys(dag.outputs[op]))
    out = []
    for t in seen:
        p = dag.producer[t]
        first = 0 if p < 0 else pos[p] + 1
        last = max([first, *(pos[r] + 1 for r in dag.readers[t])])
        if t in dag.graph_outputs:
            last = end
        out.append((dag.sizes[t], first, last))
    return out


def planner_peak(buffers: list[tuple[int, int, int]]) -> int:
    """The arena TFLM's GreedyMemoryPlanner lays these buffers out in (see module doc)."""
    # TFLM fills its sort list from the back, then sorts it stably by decreasing size.
    ranked = sorted(reversed(buffers), key=lambda b: -b[0])
    placed: list[tuple[int, int, int, int]] = []   # (offset, size, first, last) by offset
    peak = 0
    for size, first, last in ranked:
        offset = 0
        for at, other, f, l in placed:
            if f > last or first > l:
                continue      # not alive at the same time
            if at - offset >= size:
                break         # the gap before this buffer fits
            offset = max(offset, at + other)
        k = 0
        while k < len(placed) and placed[k][0] <= offset:
            k += 1
        placed.insert(k, (offset, size, first, last))
        peak = max(peak, offset + size)
    return peak


def arena(dag: Dag, order: list[int]) -> int:
    return planner_peak(lifetimes(dag, order))


# -- search ---------------------------------------------------------------------------------
def regions(dag: Dag) -> list[list[int]]:
    """The file's order cut where at most one activation tensor (graph inputs and outputs
    aside) crosses from the ops before to the ops after: O(ops + tensors)."""
    crossing = [0] * (dag.n + 1)   # crossing[k]: tensors made before op k, read from op k on
    for t, p in enumerate(dag.producer):
        if p < 0 or t in dag.graph_outputs or not dag.readers[t]:
            continue
        crossing[p + 1] += 1
        crossing[max(dag.readers[t]) + 1] -= 1
    out, current, live = [], [], 0
    for k in range(dag.n):
        live += crossing[k]
        if current and live <= 1:
            out.append(current)
            current = []
        current.append(k)
    if current:
        out.append(current)
    return out


class _Live:
    """Live bytes of a set of ops already run (a bit mask), what one more op changes, and
    which ops become ready (all producers run)."""

    def __init__(self, dag: Dag) -> None:
        self.dag = dag
        self.reader_mask = [sum(1 << r for r in rs) for rs in dag.readers]
        self.pred_mask = [sum(1 << p for p in dag.preds(op)) for op in range(dag.n)]
        succs: list[set[int]] = [set() for _ in range(dag.n)]
        for op in range(dag.n):
            for p in dag.preds(op):
                succs[p].add(op)
        self.succs = [sorted(s) for s in succs]
        self.initial = sum(dag.sizes[t] for t in dag.graph_inputs if self._alive(t, 0))

    def _alive(self, t: int, done: int) -> bool:
        return t in self.dag.graph_outputs or self.reader_mask[t] & ~done != 0

    def step(self, done: int, op: int) -> tuple[int, int]:
        """(bytes allocated while `op` runs, change of the live bytes after it)."""
        dag, after = self.dag, done | 1 << op
        made = sum(dag.sizes[t] for t in dag.outputs[op])
        freed = sum(dag.sizes[t] for t in dag.inputs[op] if not self._alive(t, after))
        freed += sum(dag.sizes[t] for t in dag.outputs[op] if not self._alive(t, after))
        return made, made - freed

    def ready(self, ops: list[int], done: int) -> tuple[int, ...]:
        return tuple(op for op in ops if not done >> op & 1 and
                     self.pred_mask[op] & ~done == 0)

    def after(self, ready: tuple[int, ...], done: int, op: int, members: int) -> tuple:
        """The ready ops (of the region `members`) once `op` has run: O(its readers)."""
        done |= 1 << op
        new = [s for s in self.succs[op] if members >> s & 1 and self.pred_mask[s] & ~done == 0]
        return tuple(sorted({*ready, *new} - {op}))


def exact_region(live: _Live, ops: list[int], done: int, now: int) -> list[int] | None:
    """The order of `ops` (the ops in `done` already run, `now` live bytes) of smallest
    live-bytes peak, or None past EXACT_STATES states. States are the sets of ops run; the
    DP goes level by level (one more op each), keeping per state the best peak, the ops
    ready there and the order that reached it."""
    members = sum(1 << op for op in ops)
    level = {done: (0, now, live.ready(ops, done), ())}
    states = 1
    for _ in ops:
        nxt: dict[int, tuple] = {}
        for state, (peak, now, ready, path) in level.items():
            for op in ready:
                made, change = live.step(state, op)
                new = state | 1 << op
                top = max(peak, now + made)
                if new not in nxt or top < nxt[new][0]:
                    nxt[new] = (top, now + change, live.after(ready, state, op, members),
                                (*path, op))
        states += len(nxt)
        if states > EXACT_STATES:
            return None
        level = nxt
    (*_, path), = level.values()
    return list(path)


def heuristic_region(live: _Live, ops: list[int], done: int) -> list[int]:
    """Run, of the ready ops, the one that adds the fewest live bytes (file order on ties):
    O(ops x ready ops)."""
    members = sum(1 << op for op in ops)
    ready, order = live.ready(ops, done), []
    for _ in ops:
        op = min(ready, key=lambda o: (live.step(done, o)[1], o))
        ready = live.after(ready, done, op, members)
        order.append(op)
        done |= 1 << op
    return order


def all_orders(dag: Dag, limit: int):
    """Every topological order, or None when there are more than `limit`."""
    live, every = _Live(dag), list(range(dag.n))
    count = {0: 1}
    for _ in range(dag.n):
        nxt: dict[int, int] = {}
        for state, c in count.items():
            for op in live.ready(every, state):
                nxt[state | 1 << op] = nxt.get(state | 1 << op, 0) + c
        if sum(nxt.values()) > limit:
            return None
        count = nxt
    out: list[list[int]] = []

    def walk(done: int, path: list[int]) -> None:
        if len(path) == dag.n:
            out.append(list(path))
        for op in live.ready(every, done):
            walk(done | 1 << op, [*path, op])
    walk(0, [])
    return out


def best_order(dag: Dag) -> list[int]:
    """The order with the smallest planner arena found (the file's order on ties)."""
    original = list(range(dag.n))
    orders = all_orders(dag, EXACT_ORDERS) if dag.n <= 64 else None
    if orders is None:
        live, done, searched = _Live(dag), 0, []
        now = live.initial
        for ops in regions(dag):
            part = exact_region(live, ops, done, now) if len(ops) > 1 else ops
            for op in part if part is not None else heuristic_region(live, ops, done):
                now += live.step(done, op)[1]
                done |= 1 << op
                searched.append(op)
        orders = [searched]
    best, smallest = original, arena(dag, original)
    for order in orders:
        size = arena(dag, order)
        if size < smallest:
            best, smallest = order, size
    return best


def run(graph: Graph, quantized: bool = False) -> int:
    """Reorder `graph`'s ops; 1 if the order changed, else 0. `quantized`: the graph is
    final (sizes as they are), not a float graph quantization will make int8."""
    dag = build_dag(graph, float_as_int8=not quantized)
    if dag is None or dag.n < 3:
        return 0
    order = best_order(dag)
    if order == list(range(dag.n)):
        return 0
    ops = list(graph.ops)
    graph.ops = [ops[i] for i in order]
    return 1
