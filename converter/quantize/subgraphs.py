"""int8 / uint8 models with WHILE and IF: every graph rewritten, boundaries sharing parameters.

TFLite's WHILE (kernels/while.cc) copies its operands into the cond and body inputs, the
body's results back into the body inputs for the next iteration, and the last values into
its own results -- bytes, not values; IF (kernels/if.cc) copies its operands into the branch
it takes and that branch's results out. So every tensor on one such path must have one
dtype and one set of quantization parameters: loop variable k is operand k, cond input k,
body input k, body output k and result k; an IF position is operand k + 1 and both branches'
input k, or result k and both branches' output k.

Those tensors are grouped (union-find: a tensor passed as two loop variables joins both
groups). A group's range is the union of its members' calibrated ranges -- every iteration's
values, since calibrate.py observes a subgraph after each of its runs -- and every member
gets that range, so the ops around the boundary (DYNAMIC_UPDATE_SLICE writing a list, an
ADD making the next state) compute the very parameters the boundary fixes and no
requantization is needed in the common case. Each graph is then rewritten by rewrite.py
with a Boundary: the caller pins its WHILE / IF operands and results, a subgraph its inputs
(stored quantized, like integer model inputs) and outputs (requantized if an op with fixed
parameters, such as LOGISTIC, produced one).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ir import Graph, Op, Tensor, all_graphs
from .params import Affine, activation
from .rewrite import Boundary, IOType, RewriteConfig, quantize_graph
from .selective import keep_float_ops, op_matches


def boundary_pairs(op: Op) -> list[tuple[Tensor, list[tuple[Graph, Tensor]]]]:
    """(caller-side tensor, [(subgraph, tensor) ...]) for each position of a WHILE / IF:
    the tensors that must share parameters with it."""
    subs = op.subgraphs
    pairs = []
    if op.type == "WHILE":
        cond, body = subs["cond"], subs["body"]
        for k, (operand, result) in enumerate(zip(op.inputs, op.outputs)):
            pairs.append((operand, [(cond, cond.inputs[k]), (body, body.inputs[k]),
                                          (body, body.outputs[k])]))
            pairs.append((result, [(body, body.outputs[k])]))
    elif op.type == "IF":
        branches = (subs["then"], subs["else"])
        for k, operand in enumerate(op.inputs[1:]):
            pairs.append((operand, [(g, g.inputs[k]) for g in branches]))
        for k, result in enumerate(op.outputs):
            pairs.append((result, [(g, g.outputs[k]) for g in branches]))
    return pairs


class _Groups:
    """Union-find over tensors (by identity)."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, t: Tensor) -> int:
        k = id(t)
        self.parent.setdefault(k, k)
        while self.parent[k] != k:
            self.parent[k] = self.parent[self.parent[k]]
            k = self.parent[k]
        return k

    def union(self, a: Tensor, b: Tensor) -> None:
        self.parent[self.find(a)] = self.find(b)


def quantize_with_subgraphs(graph: Graph, ranges: dict[str, tuple[float, float]],
                            subgraph_ranges: dict[int, dict[str, tuple[float, float]]],
                            cfg: RewriteConfig, input_params: dict[str, Affine]) -> None:
    """Rewrite `graph` and every subgraph it calls to integer arithmetic. `ranges`: the main
    graph's tensors by name; `subgraph_ranges`: subgraph k's (export numbering, k >= 1)."""
    graphs = all_graphs(graph)
    range_of = {id(g): dict(ranges if i == 0 else subgraph_ranges.get(i, {}))
                for i, g in enumerate(graphs)}
    where: dict[int, tuple[Graph, Tensor]] = {}  # boundary tensors: the graph naming them
    groups = _Groups()
    positions = []
    for g in graphs:
        for op in g.ops:
            if not op.subgraphs:
                continue
            positions.append((g, op))
            for outer, inner in boundary_pairs(op):
                if outer.dtype != np.float32:
                    continue
                where[id(outer)] = (g, outer)
                for sub, t in inner:
                    where[id(t)] = (sub, t)
                    groups.union(t, outer)
    members: dict[int, list[tuple[Graph, Tensor]]] = {}
    for g, t in where.values():
        members.setdefault(groups.find(t), []).append((g, t))
    params: dict[int, Affine] = {}
    for root, group in members.items():
        span = [r for g, t in group if (r := _range(t, range_of[id(g)])) is not None]
        if not span:
            continue  # no range anywhere: the rewrite names the tensor
        lo, hi = min(r[0] for r in span), max(r[1] for r in span)
        params[root] = activation(lo, hi, cfg.qtype)
        for g, t in group:
            if not t.is_const:
                range_of[id(g)][t.name] = (lo, hi)
    boundaries = {id(g): Boundary() for g in graphs}

    def pin(t: Tensor) -> Affine | None:
        return params.get(groups.find(t)) if id(t) in where else None

    for g, op in positions:
        offset = 1 if op.type == "IF" else 0
        for i, t in enumerate(op.inputs[offset:], offset):
            if (p := pin(t)) is not None:
                boundaries[id(g)].operands[(id(op), i)] = p
        for t in op.outputs:
            if (p := pin(t)) is not None:
                boundaries[id(g)].tensors[id(t)] = p
        for sub in op.subgraphs.values():
            b = boundaries[id(sub)]
            for t in sub.inputs:
                if (p := pin(t)) is not None:
                    b.tensors[id(t)] = p
            if sub is not op.subgraphs.get("cond"):
                for k, t in enumerate(sub.outputs):
                    if (p := pin(t)) is not None:
                        b.outputs[k] = p
    local = _local_patterns(cfg, graphs)
    for i, g in enumerate(graphs):
        own = local[id(g)] if i == 0 else replace(local[id(g)], io_type=IOType(cfg.qtype.value))
        quantize_graph(g, range_of[id(g)], own, input_params if i == 0 else {},
                       boundaries[id(g)])


def _local_patterns(cfg: RewriteConfig, graphs: list[Graph]) -> dict[int, RewriteConfig]:
    """Each graph's config with the keep-float / int16 patterns that match its own ops: a
    pattern (an op type, a node name) must match an op in some graph, not in every one."""
    for patterns in (cfg.keep_float, cfg.int16):
        unmatched = [p for p in patterns
                     if not any(op_matches(op, p) for g in graphs for op in g.ops)]
        if unmatched:
            keep_float_ops(graphs[0], unmatched)  # the one error naming them

    def mine(patterns, g) -> frozenset[str]:
        return frozenset(p for p in patterns if any(op_matches(op, p) for op in g.ops))
    return {id(g): replace(cfg, keep_float=mine(cfg.keep_float, g), int16=mine(cfg.int16, g))
            for g in graphs}


def _range(t: Tensor, ranges: dict[str, tuple[float, float]]) -> tuple[float, float] | None:
    if t.is_const:
        return float(t.data.min()), float(t.data.max())
    return t.range or ranges.get(t.name)
