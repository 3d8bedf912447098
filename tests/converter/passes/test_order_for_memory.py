"""order_for_memory: the model of TFLM's greedy planner, the exact and heuristic searches,
and the pass on IR graphs (same outputs, a valid order, never a larger modelled arena).
TFLite Micro itself is the oracle in tests/models/test_micro_order.py."""

import numpy as np
import pytest

from edgelite.converter.ir import Graph
from edgelite.converter.passes import PASS_NAMES, order_for_memory, run_passes
from tests.converter.irgraph import NONE, rand, run_ir

om = order_for_memory   # its functions; the pass itself runs as order_for_memory.run

CONV1 = dict(padding=1, stride_h=1, stride_w=1, dilation_h_factor=1, dilation_w_factor=1,
             **NONE)


def conv1x1(g: Graph, x, ch: int, name: str):
    y = g.tensor(name, np.float32, x.shape[:3] + (ch,))
    g.add_op("CONV_2D", [x, g.const(f"{name}_w", rand(ch, 1, 1, x.shape[3])),
                         g.const(f"{name}_b", rand(ch))], [y], CONV1, name=name)
    return y


def two_branches(interleaved: bool) -> Graph:
    """x[1,8,8,4] -> (A1 32 ch -> A2 4 ch) | (B1 32 ch -> B2 4 ch) -> concat: 256-byte
    input, 2048-byte branch intermediates, 256-byte branch outputs (one byte an element).
    `interleaved`: the file runs A1 B1 A2 B2, holding both intermediates at once."""
    g = Graph()
    x = g.tensor("x", np.float32, (1, 8, 8, 4))
    g.inputs = [x]
    a1 = conv1x1(g, x, 32, "a1")
    if interleaved:
        b1 = conv1x1(g, x, 32, "b1")
        a2 = conv1x1(g, a1, 4, "a2")
    else:
        a2 = conv1x1(g, a1, 4, "a2")
        b1 = conv1x1(g, x, 32, "b1")
    b2 = conv1x1(g, b1, 4, "b2")
    out = g.tensor("cat", np.float32, (1, 8, 8, 8))
    g.add_op("CONCATENATION", [a2, b2], [out], dict(axis=3, **NONE), name="cat")
    g.outputs = [out]
    return g


def names(g: Graph) -> list[str]:
    return [op.name for op in g.ops]


def test_planner_places_largest_first_at_the_first_gap():
    # (size, first, last): the two 32-byte buffers never overlap and share offset 0; the
    # 16-byte one overlaps both and goes above them
    assert om.planner_peak([(32, 0, 1), (16, 1, 2), (32, 2, 3)]) == 48
    # equal sizes: the later buffer first. (16, 2, 2) goes above the 48-byte one, into the
    # space the 64-byte one (alive earlier) makes; (16, 0, 3) overlaps all three: above them
    assert om.planner_peak([(64, 0, 1), (48, 2, 3), (16, 0, 3), (16, 2, 2)]) == 80
    # (64, 0, 1) is placed first (the later of equal sizes) at 0, (64, 0, 3) above it;
    # (48, 2, 3) overlaps only the upper one and fits in the gap below it, at 0
    assert om.planner_peak([(64, 0, 3), (64, 0, 1), (48, 2, 3)]) == 128
    assert om.planner_peak([]) == 0


def test_lifetimes_follow_tflm():
    """Inputs live from time 0, op i runs at time i + 1, outputs live to the last time."""
    g = two_branches(interleaved=False)
    dag = om.build_dag(g)
    # x, a1, a2, b1, b2, cat: numbered as first seen along the order, sizes 16-aligned
    assert om.lifetimes(dag, list(range(dag.n))) == [
        (256, 0, 3), (2048, 1, 2), (256, 2, 5), (2048, 3, 4), (256, 4, 5), (512, 5, 5)]


def test_interleaved_branches_are_run_one_after_the_other():
    g = two_branches(interleaved=True)
    dag = om.build_dag(g)
    assert om.arena(dag, list(range(dag.n))) == 4352   # x + a1 + b1 while b1 runs
    x = rand(1, 8, 8, 4)
    before = run_ir(g, x)[0]
    assert order_for_memory.run(g) == 1
    assert names(g) == ["a1", "a2", "b1", "b2", "cat"]
    g.check()
    np.testing.assert_array_equal(run_ir(g, x)[0], before)
    assert om.arena(om.build_dag(g), list(range(dag.n))) == 2560
    assert order_for_memory.run(g) == 0   # a second run changes nothing


def test_the_search_is_exact_on_small_graphs():
    dag = om.build_dag(two_branches(interleaved=True))
    orders = om.all_orders(dag, 1000)
    assert len(orders) == 6   # a1 before a2, b1 before b2, cat last: 4! / (2 * 2)
    assert om.arena(dag, om.best_order(dag)) == min(om.arena(dag, o) for o in orders) == 2560
    assert om.all_orders(dag, 5) is None


def test_the_exact_dp_and_the_heuristic_find_the_branch_order(monkeypatch):
    """Past EXACT_ORDERS the region DP finds the order; past EXACT_STATES the heuristic
    (fewest live bytes added first) does."""
    monkeypatch.setattr(om, "EXACT_ORDERS", 0)
    g = two_branches(interleaved=True)
    dag = om.build_dag(g)
    # a1 alone crosses after op 0 (the graph input is not counted: it lives from time 0)
    assert om.regions(dag) == [[0], [1, 2, 3, 4]]
    live = om._Live(dag, [1, 2, 3, 4])   # local numbers: b1 a2 b2 cat
    now = om.initial_live(dag) + om._Live(dag, [0]).step(0, 0)[1]
    assert now == 256 + 2048
    assert om.exact_region(live, now) == [1, 0, 2, 3]
    assert om.heuristic_region(live) == [1, 0, 2, 3]
    assert live.walk([1, 0, 2, 3], now) == (2560, 512)
    assert live.walk([0, 1, 2, 3], now) == (4352, 512)
    monkeypatch.setattr(om, "EXACT_STATES", 3)
    assert om.exact_region(live, now) is None
    assert order_for_memory.run(g) == 1 and names(g) == ["a1", "a2", "b1", "b2", "cat"]


def test_a_chain_keeps_its_order():
    g = Graph()
    x = g.tensor("x", np.float32, (1, 4, 4, 2))
    g.inputs = [x]
    y = x
    for i, ch in enumerate((8, 2, 16, 4)):
        y = conv1x1(g, y, ch, f"c{i}")
    g.outputs = [y]
    dag = om.build_dag(g)
    assert om.regions(dag) == [[0], [1], [2], [3]]
    assert order_for_memory.run(g) == 0 and names(g) == ["c0", "c1", "c2", "c3"]


def test_unknown_sizes_and_variables_leave_the_order():
    g = two_branches(interleaved=True)
    g.ops[1].outputs[0].shape = None
    assert om.build_dag(g) is None and order_for_memory.run(g) == 0
    g = two_branches(interleaved=True)
    g.ops[0].outputs[0].is_variable = True
    assert order_for_memory.run(g) == 0 and names(g) == ["a1", "b1", "a2", "b2", "cat"]


@pytest.mark.parametrize("disabled", [frozenset(), frozenset({"order_for_memory"})])
def test_switch(disabled):
    assert "order_for_memory" in PASS_NAMES
    g = two_branches(interleaved=True)
    run_passes(g, disabled)
    expect = ["a1", "b1", "a2", "b2", "cat"] if disabled else ["a1", "a2", "b1", "b2", "cat"]
    assert names(g) == expect


def test_regions_of_many_residual_blocks_stay_small(monkeypatch):
    """60 residual blocks (x -> conv -> conv -> add x): one region per block, each searched
    exactly; the order is already the best one and is kept."""
    g = Graph()
    x = g.tensor("x", np.float32, (1, 4, 4, 4))
    g.inputs = [x]
    for i in range(60):
        y = conv1x1(g, conv1x1(g, x, 16, f"e{i}"), 4, f"p{i}")
        s = g.tensor(f"s{i}", np.float32, x.shape)
        g.add_op("ADD", [x, y], [s], dict(NONE), name=f"s{i}")
        x = s
    g.outputs = [x]
    dag = om.build_dag(g)
    # the first block's ops read the graph input: one region each
    assert dag.n == 180 and [len(r) for r in om.regions(dag)] == [1, 1, 1] + [3] * 59
    assert order_for_memory.run(g) == 0
    # past PLANNER_OPS the orders are scored by their live-bytes peak: the planner's bound
    monkeypatch.setattr(om, "PLANNER_OPS", 100)
    assert om.score(dag, list(range(180))) == 64 + 256 + 64 < om.arena(dag, list(range(180)))
    assert order_for_memory.run(g) == 0
