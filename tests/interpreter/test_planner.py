"""Arena planner: lifetimes and exact offsets for small hand-made graphs."""

import numpy as np

from edgelite.interpreter import Interpreter
from edgelite.interpreter.planner import NEVER_FREED, compute_lifetimes, plan_arena

from .tflite_builder import ModelBuilder

INF = NEVER_FREED

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
