"""Arena planner: lifetimes and exact offsets for small hand-made graphs; at scale, the
same offsets as TFLite's O(n^2) scan with near-linear work."""

from bisect import insort
from pathlib import Path
import random

import numpy as np
import pytest

from edgelite.interpreter import GraphError, Interpreter, planner
from edgelite.interpreter.planner import (NEVER_FREED, allocation_order, compute_lifetimes,
                                          plan_arena)

from tests.conftest import sample_files

from .tflite_builder import ModelBuilder

INF = NEVER_FREED
MODELS = Path(__file__).resolve().parents[2] / "models"

# A chain: t0 (graph input) -op0-> t1 -op1-> t2 -op2-> t3 (graph output).
CHAIN_INPUTS = [[0], [1], [2]]
CHAIN_OUTPUTS = [[1], [2], [3]]
CHAIN_SIZES = {0: 100, 1: 200, 2: 200, 3: 50}


def test_chain_lifetimes():
    lifetimes = compute_lifetimes(CHAIN_INPUTS, CHAIN_OUTPUTS, [0], [3], range(4))
    # The input stays alive for the whole run; t1 dies at op1, t2 at op2; outputs never.
    assert lifetimes == {0: (0, INF), 1: (0, 1), 2: (1, 2), 3: (2, INF)}


def test_chain_offsets():
    lifetimes = compute_lifetimes(CHAIN_INPUTS, CHAIN_OUTPUTS, [0], [3], range(4))
    plan = plan_arena(lifetimes, CHAIN_SIZES)
    # Order: t0 (whole run) first, then by size: t1, t2 (equal size, t1 allocated first), t3.
    # t0 -> 0; t1 -> after t0 = align64(100) = 128; t2 overlaps t0 and t1 -> align64(328)
    # = 384; t3 (ops 2..end) overlaps t0 and t2 but not t1, so it reuses t1's bytes at 128.
    assert dict(plan.offsets) == {0: 0, 1: 128, 2: 384, 3: 128}
    assert plan.size == 584


def test_chain_preserve_all_tensors():
    lifetimes = compute_lifetimes(CHAIN_INPUTS, CHAIN_OUTPUTS, [0], [3], range(4),
                                  preserve_all_tensors=True)
    assert lifetimes == {0: (0, INF), 1: (0, INF), 2: (1, INF), 3: (2, INF)}
    plan = plan_arena(lifetimes, CHAIN_SIZES)
    # Nothing is reused: 0, 128 (after 100), 384 (after 328), 640 (after 584).
    assert dict(plan.offsets) == {0: 0, 1: 128, 2: 384, 3: 640}
    assert plan.size == 690


def test_best_fit_gap():
    # X [ops 0-1] 256 B, Z [2-3] 128 B, Y [0-5] 64 B, W [2-5] 64 B.
    lifetimes = {"X": (0, 1), "Y": (0, 5), "Z": (2, 3), "W": (2, 5)}
    sizes = {"X": 256, "Y": 64, "Z": 128, "W": 64}
    plan = plan_arena(lifetimes, sizes)
    # X -> 0. Z does not meet X in time -> 0. Y meets both -> after X at 256.
    # W meets Z [0,128) and Y [256,320) -> the 128-byte gap between them, at 128.
    assert dict(plan.offsets) == {"X": 0, "Z": 0, "Y": 256, "W": 128}
    assert plan.size == 320


def test_alignment_and_empty_tensors():
    lifetimes = {0: (0, INF), 1: (0, INF), 2: (0, INF)}
    plan = plan_arena(lifetimes, {0: 10, 1: 0, 2: 10})
    assert dict(plan.offsets) == {0: 0, 1: 0, 2: 64}
    assert plan.size == 74


def test_unread_output_is_never_freed():
    # op0 writes t1 (read by op1) and t2 (read by nobody, not a graph output).
    lifetimes = compute_lifetimes([[0], [1]], [[1, 2], [3]], [0], [3], range(4))
    assert lifetimes[2] == (0, INF)
    assert lifetimes[1] == (0, 1)


def test_constants_are_not_planned():
    lifetimes = compute_lifetimes([[0, 5]], [[1]], [0], [1], [0, 1])
    assert set(lifetimes) == {0, 1}


def _chain_model(n_ops=4, width=64):
    b = ModelBuilder()
    ts = [b.tensor(f"t{i}", (1, width)) for i in range(n_ops + 1)]
    for i in range(n_ops):
        b.op("RELU" if i % 2 else "TANH", [ts[i]], [ts[i + 1]])
    return b.build([ts[0]], [ts[-1]])


def test_interpreter_reuses_and_preserves():
    model = _chain_model()
    x = np.linspace(-2, 2, 64, dtype=np.float32).reshape(1, 64)
    shared = Interpreter(model_content=model)
    shared.allocate_tensors()
    kept = Interpreter(model_content=model, preserve_all_tensors=True)
    kept.allocate_tensors()
    # Five 256-byte tensors t0..t4. The input t0 lives throughout; t3 (born at op 2)
    # reuses t1 (dead after op 1) and the output t4 (born at op 3) reuses t2 (dead after
    # op 2): 3 slots. Preserved: 5 slots.
    assert shared.arena_size == 3 * 256
    assert kept.arena_size == 5 * 256
    for interp in (shared, kept):
        interp.set_tensor(0, x)
        interp.invoke()
    np.testing.assert_array_equal(shared.get_tensor(4), kept.get_tensor(4))
    # With preserve_all_tensors every intermediate keeps its value after invoke().
    np.testing.assert_allclose(kept.get_tensor(1), np.tanh(x), rtol=1e-6)
    np.testing.assert_allclose(kept.get_tensor(2), np.maximum(np.tanh(x), 0), rtol=1e-6)


# --------------------------------------------------------------------------- at scale

# ``reference_plan`` is the planner as it was before the index (a direct transcription of
# SimpleMemoryArena::Allocate: scan every placed tensor in offset order); every plan here
# must match it offset for offset.


def _align(value, alignment):
    return (value + alignment - 1) // alignment * alignment


def reference_plan(lifetimes, sizes, alignment=planner.ALIGNMENT):
    """The straightforward planner: (offsets, size)."""
    placed = []  # (offset, size, first, last), by offset
    offsets = {}
    high_water = 0
    for t in allocation_order(lifetimes, sizes):
        size = sizes[t]
        first, last = lifetimes[t]
        if size == 0:
            offsets[t] = 0
            continue
        best_offset = None
        best_fit = None
        current = 0
        for p_offset, p_size, p_first, p_last in placed:
            if p_last < first or p_first > last:
                continue
            aligned = _align(current, alignment)
            if aligned + size <= p_offset and (best_fit is None
                                               or p_offset - aligned < best_fit):
                best_offset = aligned
                best_fit = p_offset - current
            current = max(current, p_offset + p_size)
            if best_fit == 0:
                break
        if best_offset is None:
            best_offset = _align(current, alignment)
        offsets[t] = best_offset
        high_water = max(high_water, best_offset + size)
        insort(placed, (best_offset, size, first, last))
    return offsets, high_water


def assert_same_plan(lifetimes, sizes, alignment=planner.ALIGNMENT):
    plan = plan_arena(lifetimes, sizes, alignment)
    offsets, size = reference_plan(lifetimes, sizes, alignment)
    assert dict(plan.offsets) == offsets
    assert plan.size == size
    return plan


def _random_lifetimes(rng, n, horizon):
    lifetimes, sizes = {}, {}
    for t in range(n):
        kind = rng.random()
        if kind < 0.1:
            lifetimes[t] = (0, NEVER_FREED)  # inputs, variables
        elif kind < 0.25:
            lifetimes[t] = (rng.randint(0, horizon), NEVER_FREED)  # outputs, unread
        else:
            first = rng.randint(0, horizon)
            lifetimes[t] = (first, first + rng.randint(0, rng.choice([1, 3, horizon])))
        sizes[t] = rng.choice([0, 1, 10, 63, 64, 65, 100, 128, 200, 256, 1000,
                               rng.randint(0, 5000)])
    return lifetimes, sizes


@pytest.mark.parametrize("seed", range(6))
def test_random_lifetimes_match_the_reference(seed):
    rng = random.Random(seed)
    for _ in range(300):
        lifetimes, sizes = _random_lifetimes(rng, rng.randint(1, 60), rng.randint(1, 30))
        assert_same_plan(lifetimes, sizes, rng.choice([1, 4, 64]))


def test_large_random_graphs_match_the_reference():
    rng = random.Random(42)
    for _ in range(8):
        n = rng.randint(300, 600)
        horizon = n // rng.choice([1, 3])
        lifetimes, sizes = {}, {}
        for t in range(n):
            first = rng.randint(0, horizon)
            kind = rng.random()
            lifetimes[t] = ((0, NEVER_FREED) if kind < 0.04 else
                            (first, NEVER_FREED) if kind < 0.08 else
                            (first, min(first + int(rng.expovariate(0.2)), horizon)))
            sizes[t] = rng.choice([0, 64, 100, 4096, rng.randint(1, 100000)])
        assert_same_plan(lifetimes, sizes)
        preserved = {t: (first, NEVER_FREED) for t, (first, _) in lifetimes.items()}
        assert_same_plan(preserved, sizes)


def test_settled_ranges_merge_only_across_gaps_no_tensor_can_use():
    # A [0,100) and B [128,188) come first and settle (alive throughout). The gap after
    # A holds no aligned byte (align(100) = 128), so the two merge into one range; the
    # gap after B holds aligned bytes: C takes [192,692), D (alive with C) goes after
    # it, and E (not alive with C) takes the gap between B and D at 192.
    lifetimes = {"A": (0, NEVER_FREED), "B": (0, NEVER_FREED), "C": (0, 1), "D": (1, 2),
                 "E": (2, 5)}
    sizes = {"A": 100, "B": 60, "C": 500, "D": 300, "E": 40}
    plan = assert_same_plan(lifetimes, sizes)
    assert dict(plan.offsets) == {"A": 0, "B": 128, "C": 192, "D": 704, "E": 192}
    starts, ends = [], []
    for name in ("A", "B"):
        planner._merge_range(starts, ends, plan.offsets[name],
                             plan.offsets[name] + sizes[name], 64)
    assert (starts, ends) == ([0], [188])


def _capture_plans(monkeypatch):
    plans = []
    real = planner.plan_arena

    def capture(lifetimes, sizes, alignment=planner.ALIGNMENT):
        plans.append((dict(lifetimes), dict(sizes)))
        return real(lifetimes, sizes, alignment)

    monkeypatch.setattr(planner, "plan_arena", capture)
    return plans


# Files whose CUSTOM ops run only with kernels their user registers (test_custom_ops.py).
USER_KERNELS = ("custom_asinh.",)


@pytest.mark.parametrize("path", [p for p in sample_files("*.tflite", MODELS)
                                  if not p.name.startswith(USER_KERNELS)],
                         ids=lambda p: p.name)
def test_real_models_match_the_reference(path, monkeypatch):
    plans = _capture_plans(monkeypatch)
    for preserve in (False, True):
        interp = Interpreter(model_path=path, preserve_all_tensors=preserve)
        for t in interp.model.subgraphs[0].inputs:  # unknown batch dimensions -> 2
            shape = [2 if d < 0 else d for d in interp.model.subgraphs[0].tensors[t].shape]
            interp.resize_tensor_input(t, shape)
        interp.allocate_tensors()
    assert len(plans) == 2
    for lifetimes, sizes in plans:
        assert len(lifetimes) > 3
        assert_same_plan(lifetimes, sizes)


def _chain_lifetimes(n_ops, n_inputs=1):
    op_inputs = [[i] + list(range(n_ops + 1, n_ops + n_inputs)) if i == 0 else [i]
                 for i in range(n_ops)]
    op_outputs = [[i + 1] for i in range(n_ops)]
    graph_inputs = [0] + list(range(n_ops + 1, n_ops + n_inputs))
    return compute_lifetimes(op_inputs, op_outputs, graph_inputs, [n_ops],
                             range(n_ops + n_inputs))


def test_work_grows_linearly_on_a_chain():
    visits = {}
    for n in (1000, 4000, 16000):
        lifetimes = _chain_lifetimes(n)
        sizes = {t: 64 * (1 + t % 3) for t in lifetimes}
        plan = plan_arena(lifetimes, sizes)
        if n == 1000:
            offsets, size = reference_plan(lifetimes, sizes)
            assert (dict(plan.offsets), plan.size) == (offsets, size)
        visits[n] = plan.visits
    # Each tensor meets ~2 others alive with it plus the merged whole-run range: a
    # constant number of visits per tensor, 4x the tensors -> 4x the visits.
    assert visits[1000] < 10 * 1000
    assert visits[4000] <= 4.1 * visits[1000]
    assert visits[16000] <= 4.1 * visits[4000]


def test_many_whole_run_tensors_are_visited_as_one_range():
    # 600 graph inputs (alive throughout) and a 600-op chain: the reference scans every
    # input for every tensor (360,000 visits); here they are one merged range.
    lifetimes = _chain_lifetimes(600, n_inputs=600)
    sizes = {t: 100 for t in lifetimes}
    plan = assert_same_plan(lifetimes, sizes)
    assert plan.visits < 5 * len(lifetimes)


def test_preserve_all_tensors_is_linear():
    # Every tensor alive to the end: every tensor meets every other (TFLite: n^2 / 2
    # visits); each settles as soon as it is placed, so each search sees one range.
    n = 20000
    lifetimes = {t: (max(t - 1, 0), NEVER_FREED) for t in range(n)}
    sizes = {t: int(s) for t, s in enumerate(np.random.default_rng(0).integers(1, 999, n))}
    plan = plan_arena(lifetimes, sizes)
    assert plan.visits <= 2 * n
    order = allocation_order(lifetimes, sizes)
    assert plan.size == sum(_align(sizes[t], 64) for t in order[:-1]) + sizes[order[-1]]


def test_entangled_lifetimes_are_refused_within_the_work_budget():
    # Big tensors never freed, one born at each op, placed first; then a chain of small
    # short-lived ones. Each chain tensor meets every never-freed tensor born before it
    # and none of those settles: n^2 / 2 pairs, refused once over the budget.
    n = 400
    lifetimes = {("out", i): (i, NEVER_FREED) for i in range(n)}
    lifetimes.update({("chain", i): (i, i + 1) for i in range(n)})
    sizes = {t: 4096 if t[0] == "out" else 64 for t in lifetimes}
    assert plan_arena(lifetimes, sizes).visits > n * n // 2
    with pytest.raises(GraphError) as info:
        plan_arena(lifetimes, sizes, max_visits=10 * n)
    assert str(info.value) == (
        f"cannot plan the arena of {2 * n} tensors within {10 * n} steps: too many tensors "
        "are alive at once (tensors never freed -- graph outputs made early, outputs "
        "nobody reads -- are alive with every tensor after them)")
    assert planner.work_budget(100_000) == 2**22 + 3_200_000
