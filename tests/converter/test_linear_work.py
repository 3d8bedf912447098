"""Each step of a conversion does work linear in the graph's size, on several graph shapes.

Time is not measured (bench/scale_convert.py does that): the Python calls each step of one
real convert_detailed call makes (cProfile's count, builtins included) are counted on a
graph and on the same kind of graph four times larger. Linear work grows 4x; a scan of every
op per op -- or per pass, repeated topological orders, a list searched per node -- grows
much faster (16x for quadratic).
"""

from __future__ import annotations

import cProfile
import pstats

import numpy as np
import pytest

import edgelite.converter as converter
from edgelite.converter import convert_detailed

from .tfgraph import GraphBuilder

F32 = np.dtype(np.float32)
STEPS = ("lower_graph", "run_passes", "infer_shapes", "export_tflite")


def chain(links: int) -> bytes:
    """x[1, 8] -> (Relu | AddV2 c | Mul c | BiasAdd c)* -> Identity."""
    g = GraphBuilder()
    head = g.placeholder("x", [1, 8])
    for k in range(links):
        if k % 4 == 0:
            head = g.node(f"n{k}", "Relu", [head], T=F32)
        else:
            c = g.const(f"n{k}/c", np.full(8, 0.5 + 0.25 * (k % 4), np.float32))
            head = g.node(f"n{k}", ("AddV2", "Mul", "BiasAdd")[k % 4 - 1], [head, c], T=F32)
    g.node("y", "Identity", [head], T=F32)
    return g.bytes()


def constant_expressions(links: int) -> bytes:
    """x -> AddV2(h, Mul(c1, Sub(c2, c3)))*: two ops per link folded while lowering."""
    g = GraphBuilder()
    head = g.placeholder("x", [1, 8])
    for k in range(links):
        c = [g.const(f"n{k}/c{j}", np.full(8, 0.1 * (k % 7 + j), np.float32))
             for j in range(3)]
        diff = g.node(f"n{k}/sub", "Sub", c[1:], T=F32)
        head = g.node(f"n{k}", "AddV2", [head, g.node(f"n{k}/mul", "Mul", [c[0], diff],
                                                           T=F32)], T=F32)
    g.node("y", "Identity", [head], T=F32)
    return g.bytes()


def wide(branches: int) -> bytes:
    """Every branch reads x (one tensor with `branches` readers): Relu(Mul(x, c)), summed
    by a running AddV2."""
    g = GraphBuilder()
    g.placeholder("x", [1, 8])
    total = None
    for k in range(branches):
        c = g.const(f"b{k}/c", np.full(8, 1.0 + 0.01 * (k % 9), np.float32))
        branch = g.node(f"b{k}/relu", "Relu", [g.node(f"b{k}", "Mul", ["x", c], T=F32)], T=F32)
        total = branch if total is None else g.node(f"s{k}", "AddV2", [total, branch], T=F32)
    g.node("y", "Identity", [total], T=F32)
    return g.bytes()


def calls_per_step(data: bytes) -> dict[str, int]:
    """Python calls made inside each step of one convert_detailed call."""
    counts = {}
    with pytest.MonkeyPatch.context() as mp:
        for name in STEPS:
            def counted(*args, _real=getattr(converter, name), _name=name, **kwargs):
                prof = cProfile.Profile()
                try:
                    return prof.runcall(_real, *args, **kwargs)
                finally:
                    counts[_name] = counts.get(_name, 0) + pstats.Stats(prof).total_calls
            mp.setattr(converter, name, counted)
        convert_detailed(data)
    return counts


@pytest.mark.parametrize("build, size", [(chain, 400), (constant_expressions, 100),
                                         (wide, 100)], ids=["chain", "constants", "wide"])
def test_every_step_grows_linearly(build, size, monkeypatch):
    monkeypatch.delenv("EDGELITE_CHECK_IR")  # (the O(n) index check after every pass)
    small, large = calls_per_step(build(size)), calls_per_step(build(4 * size))
    assert set(small) == set(STEPS), small
    ratios = {step: large[step] / small[step] for step in STEPS}
    assert all(r < 4.4 for r in ratios.values()), (ratios, small, large)
