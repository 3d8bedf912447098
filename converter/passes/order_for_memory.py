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
runs the pass again after quantization (passes.after_quantization), on the real sizes, so
the QUANTIZE ops it adds (requantizing a CONCATENATION's inputs, ...) are ordered too.
Per-op scratch buffers are not modelled (they are the same set in every order). Graphs of
more than PLANNER_OPS ops are scored by their live-bytes peak (the planner is quadratic).

Search, region by region (a region ends where a single activation tensor crosses from the
ops before to the ops after; a linear chain is a chain of one-op regions):
  * exact: a dynamic programme over the sets of ops already run (the state determines the
    live bytes) finds the order of smallest live-bytes peak, the planner's lower bound,
    capped at EXACT_STATES states per region;
  * heuristic, where a region has more states: list scheduling that runs, of the ready ops,
    the one that adds the fewest live bytes (the branch that frees memory first), ties in
    the file's order; a region of more than HEURISTIC_OPS ops keeps the file's order.
When the whole graph (64 ops at most) has at most EXACT_ORDERS topological orders every order is scored with
the planner itself (exact for the true objective). The order found replaces the file's only
when its planner arena is strictly smaller, so the pass never makes the arena larger and a
second run changes nothing. Graphs with control flow, variable tensors or unknown shapes are
left as they are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...interpreter.kernels import OPS
from ..ir import Graph, Tensor
from ...interpreter.micro.plan import ONLINE, greedy_offsets

ALIGN = 16             # TFLM's kBufferAlignment: each buffer's size is rounded up to it
EXACT_STATES = 20_000  # states of the exact search per region; larger regions: heuristic
EXACT_ORDERS = 2_000   # graphs with at most this many orders: every order scored by the planner
HEURISTIC_OPS = 2_000  # a region with more ops than this keeps the file's order
PLANNER_OPS = 600      # graphs with more ops are scored by their live-bytes peak
# Ops keeping state between invokes (OpDef.state): the variable ops, CALL_ONCE.
STATEFUL = frozenset(n for n, op in OPS.items() if op.state)


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
    size = math.prod(t.shape) * item
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

    def tid(t: Tensor, prod: int) -> int:
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
    """The arena TFLM's GreedyMemoryPlanner lays these (size, first, last) buffers out in:
    the interpreter's reimplementation of the planner (interpreter/micro/plan.py)."""
    if not buffers:
        return 0
    sizes, firsts, lasts = zip(*buffers)
    offsets = greedy_offsets(sizes, firsts, lasts, [ONLINE] * len(sizes))
    return max(o + s for o, s in zip(offsets, sizes))


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
    """One region's ops (file order; local numbers 0..k-1, bit masks of local numbers for
    the ops already run): live bytes, what one more op changes, which ops are ready. Ops
    before the region have run, ops after it have not: O(region) memory."""

    def __init__(self, dag: Dag, ops: list[int]) -> None:
        self.dag, self.ops = dag, ops
        local = {op: i for i, op in enumerate(ops)}
        self.pred_mask = [sum(1 << local[p] for p in dag.preds(op) if p in local)
                          for op in ops]
        self.succs: list[list[int]] = [[] for _ in ops]
        for i, op in enumerate(ops):
            for p in dag.preds(op):
                if p in local:
                    self.succs[local[p]].append(i)
        last = ops[-1] if ops else -1
        self.readers: dict[int, int] = {}   # tensor: local mask of its readers here
        self.kept: set[int] = set()         # tensors read after the region, or outputs
        for op in ops:
            for t in (*dag.inputs[op], *dag.outputs[op]):
                if t in self.readers:
                    continue
                self.readers[t] = sum(1 << local[r] for r in dag.readers[t] if r in local)
                if t in dag.graph_outputs or any(r > last for r in dag.readers[t]):
                    self.kept.add(t)

    def _alive(self, t: int, done: int) -> bool:
        return t in self.kept or self.readers[t] & ~done != 0

    def step(self, done: int, i: int) -> tuple[int, int]:
        """(bytes allocated while op i runs, change of the live bytes after it)."""
        dag, op, after = self.dag, self.ops[i], done | 1 << i
        made = sum(dag.sizes[t] for t in dag.outputs[op])
        freed = sum(dag.sizes[t] for t in (*dag.inputs[op], *dag.outputs[op])
                    if not self._alive(t, after))
        return made, made - freed

    def ready(self, done: int) -> tuple[int, ...]:
        return tuple(i for i in range(len(self.ops))
                     if not done >> i & 1 and self.pred_mask[i] & ~done == 0)

    def after(self, ready: tuple[int, ...], done: int, i: int) -> tuple[int, ...]:
        """The ready ops once op i has run: O(its readers)."""
        done |= 1 << i
        new = [s for s in self.succs[i] if self.pred_mask[s] & ~done == 0]
        return tuple(sorted({*ready, *new} - {i}))

    def walk(self, order: list[int], now: int) -> tuple[int, int]:
        """(live-bytes peak, live bytes after) along `order` (local numbers)."""
        done, peak = 0, now
        for i in order:
            made, change = self.step(done, i)
            peak, now, done = max(peak, now + made), now + change, done | 1 << i
        return peak, now


def exact_region(live: _Live, now: int) -> list[int] | None:
    """The order of the region's ops (`now` live bytes before it) of smallest live-bytes
    peak, in local numbers, or None past EXACT_STATES states. States are the sets of ops
    run; the DP goes level by level (one more op each), keeping per state the best peak,
    the ops ready there and the order that reached it."""
    level = {0: (0, now, live.ready(0), ())}
    states = 1
    for _ in live.ops:
        nxt: dict[int, tuple] = {}
        for state, (peak, now, ready, path) in level.items():
            for i in ready:
                made, change = live.step(state, i)
                top = max(peak, now + made)
                new = state | 1 << i
                if new not in nxt or top < nxt[new][0]:
                    nxt[new] = (top, now + change, live.after(ready, state, i), (*path, i))
        states += len(nxt)
        if states > EXACT_STATES:
            return None
        level = nxt
    (*_, path), = level.values()
    return list(path)


def heuristic_region(live: _Live) -> list[int]:
    """Run, of the ready ops, the one that adds the fewest live bytes (file order on ties):
    O(ops x ready ops); a region of more than HEURISTIC_OPS ops keeps the file's order."""
    if len(live.ops) > HEURISTIC_OPS:
        return list(range(len(live.ops)))
    done, ready, order = 0, live.ready(0), []
    for _ in live.ops:
        i = min(ready, key=lambda j: (live.step(done, j)[1], j))
        ready = live.after(ready, done, i)
        order.append(i)
        done |= 1 << i
    return order


def all_orders(dag: Dag, limit: int) -> list[list[int]] | None:
    """Every topological order, or None when there are more than `limit`."""
    live = _Live(dag, list(range(dag.n)))
    count = {0: 1}
    for _ in range(dag.n):
        nxt: dict[int, int] = {}
        for state, c in count.items():
            for op in live.ready(state):
                nxt[state | 1 << op] = nxt.get(state | 1 << op, 0) + c
        if sum(nxt.values()) > limit:
            return None
        count = nxt
    out: list[list[int]] = []

    def walk(done: int, path: list[int]) -> None:
        if len(path) == dag.n:
            out.append(list(path))
        for op in live.ready(done):
            walk(done | 1 << op, [*path, op])
    walk(0, [])
    return out


def initial_live(dag: Dag) -> int:
    """Live bytes before the first op: the graph inputs something reads or returns."""
    return sum(dag.sizes[t] for t in dag.graph_inputs
               if dag.readers[t] or t in dag.graph_outputs)


def searched_order(dag: Dag) -> list[int]:
    """Region by region: the exact order, or the heuristic's past EXACT_STATES."""
    now, order = initial_live(dag), []
    for ops in regions(dag):
        live = _Live(dag, ops)
        local = (exact_region(live, now) if len(ops) > 1 else None) or \
            heuristic_region(live)
        now = live.walk(local, now)[1]
        order += [ops[i] for i in local]
    return order


def score(dag: Dag, order: list[int]) -> int:
    """The planner's arena (PLANNER_OPS ops at most: it is quadratic in the tensors), else
    the live-bytes peak over TFLM's lifetimes (linear)."""
    buffers = lifetimes(dag, order)
    if dag.n <= PLANNER_OPS:
        return planner_peak(buffers)
    change = [0] * (dag.n + 2)
    for size, first, last in buffers:
        change[first] += size
        change[last + 1] -= size
    peak = now = 0
    for c in change:
        now += c
        peak = max(peak, now)
    return peak


def best_order(dag: Dag) -> list[int]:
    """The order with the smallest arena found (the file's order on ties)."""
    original = list(range(dag.n))
    orders = all_orders(dag, EXACT_ORDERS) if dag.n <= 64 else None
    if orders is None:
        orders = [searched_order(dag)]
        if orders[0] == original:
            return original   # nothing to compare (a chain, or the file's order won)
    best, smallest = original, score(dag, original)
    for order in orders:
        size = score(dag, order)
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
