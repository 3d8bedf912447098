"""WHILE, IF, CALL_ONCE and models with several subgraphs, against LiteRT."""

from __future__ import annotations

import _thread
import threading
import time

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.errors import (DTypeError, GraphError, InvokeStoppedError, MemoryLimitError,
                             ShapeError)
from edgelite.interpreter.program import MAX_DEPTH, MAX_VARIANTS
from tests.conftest import litert_module
from tests.interpreter import subgraph_models as sm
from tests.interpreter.tflite_builder import ModelBuilder
from tests.support import assert_sequence_matches_litert

I32 = np.int32


def _x(*values) -> np.ndarray:
    return np.array(values, np.float32)


def _ready(model: bytes, **kwargs) -> Interpreter:
    interp = Interpreter(model_content=model, **kwargs)
    interp.allocate_tensors()
    return interp


def test_counting_while_matches_litert_and_prepares_each_subgraph_once():
    model = sm.counting_while(limit=5)
    feeds = [[I32(0), _x(1.5, -2)], [I32(3), _x(0.25, 8)], [I32(7), _x(1, 2)]]
    runs = assert_sequence_matches_litert(model, feeds)
    assert [r[0].item() for r in runs] == [5, 5, 7]  # the body never runs from 7
    np.testing.assert_array_equal(runs[0][1], _x(48, -64))
    np.testing.assert_array_equal(runs[2][1], _x(1, 2))
    interp = _ready(model)
    for feed in feeds:
        for d, v in zip(interp.get_input_details(), feed):
            interp.set_tensor(d["index"], v)
        interp.invoke()
    # cond (1) and body (2) prepared once, at allocate time, for the one input shape
    assert {k: len(v) for k, v in interp._program._variants.items()} == {1: 1, 2: 1}
    assert interp._alloc.dynamic == frozenset()
    assert interp.num_subgraphs() == 3


def test_growing_loop_carried_tensor_gives_dynamic_outputs():
    model = sm.counting_while(limit=4, grow=True)
    feeds = [[I32(0), _x(1, 2)], [I32(2), _x(3, 4)], [I32(1), _x(5, 6)]]
    runs = assert_sequence_matches_litert(model, feeds)
    assert [r[1].shape for r in runs] == [(32,), (8,), (16,)]
    np.testing.assert_array_equal(runs[1][1], _x(3, 4, 3, 4, 3, 4, 3, 4))
    interp = _ready(model)
    out = interp.get_output_details()[1]["index"]
    assert out in interp._alloc.dynamic
    interp.set_tensor(0, I32(1))
    interp.set_tensor(1, _x(1, 2))
    interp.invoke()
    assert list(interp.get_output_details()[1]["shape"]) == [16]
    # the body was prepared for each shape it met: [2], [4], [8]; the cond also for [16]
    assert sorted(interp._program._variants[2]) == [((), (2,)), ((), (4,)), ((), (8,))]
    assert len(interp._program._variants[1]) == 4


def test_long_growing_loop_keeps_a_bounded_number_of_prepared_bodies():
    interp = _ready(sm.counting_while(limit=12, grow=True))
    interp.set_tensor(0, I32(0))
    interp.set_tensor(1, _x(1, 2))
    interp.invoke()
    assert interp.get_tensor(interp.get_output_details()[1]["index"]).shape == (2 * 2**12,)
    assert len(interp._program._variants[2]) == MAX_VARIANTS


def test_ops_after_a_dynamic_output_are_prepared_at_invoke():
    model = sm.grow_then_consume(limit=3)
    feeds = [[I32(0), _x(0.5, -1)], [I32(2), _x(2, 3)], [I32(0), _x(-0.5, 1)]]
    runs = assert_sequence_matches_litert(model, feeds)
    assert [r[0].shape for r in runs] == [(16,), (4,), (16,)]
    interp = _ready(model)
    ops = {op.index: op.name for op in interp.model.subgraphs[0].operators}
    # ABS, MUL and SUM read the WHILE's dynamic output: dynamic steps, prepared per shape
    dynamic_steps = [ops[i] for i, step in zip(interp._alloc.step_ops, interp._steps)
                     if type(step[1]).__name__ == "DynamicOp"]
    assert dynamic_steps == ["WHILE", "ABS", "MUL", "SUM"]


def test_a_body_returning_its_inputs_permuted_copies_like_litert():
    runs = assert_sequence_matches_litert(sm.swapping_while(limit=3),
                                          [[I32(0), _x(1, 2), _x(3, 4)]])
    # body outputs are copied into body inputs one by one (while.cc CopyTensorsData):
    # after the first iteration both carried tensors hold b
    np.testing.assert_array_equal(runs[0][1], _x(3, 4))
    np.testing.assert_array_equal(runs[0][2], _x(3, 4))


def test_nested_while_and_every_subgraphs_tensors_after_invoke():
    model = sm.nested_while(outer=3, inner=4)
    feeds = [[I32(0), _x(1, -2, 0.5)], [I32(1), _x(8, 0, -1)]]
    runs = assert_sequence_matches_litert(model, feeds, preserve_all_tensors=True)
    assert runs[0][0].item() == 3
    interp = _ready(model, preserve_all_tensors=True)
    litert = litert_module()
    ref = litert.Interpreter(model_content=model, experimental_preserve_all_tensors=True)
    ref.allocate_tensors()
    for it in (interp, ref):
        it.set_tensor(0, I32(0))
        it.set_tensor(1, _x(1, -2, 0.5))
        it.invoke()
    checked = 0
    for k, sg in enumerate(interp.model.subgraphs):
        for t in sg.tensors:
            # (LiteRT drops the cond subgraphs' unused inputs "c_x": never written there)
            if t.data is None and t.name != "c_x":
                np.testing.assert_array_equal(interp.get_tensor(t.index, subgraph_index=k),
                                              ref.get_tensor(t.index, subgraph_index=k))
                checked += 1
    assert checked == 4 + 2 + 7 + 2 + 5
    names = {t.name: t.index for t in interp.model.subgraphs[4].tensors}
    # after the loop, a static body's inputs hold its final outputs (as in LiteRT)
    np.testing.assert_array_equal(interp.get_tensor(names["i_x"], subgraph_index=4),
                                  interp.get_tensor(names["i_x2"], subgraph_index=4))
    with pytest.raises(GraphError,
                       match="subgraph_index is out of range: 5 for the model, which has 5"):
        interp.get_tensor(0, subgraph_index=5)
    with pytest.raises(GraphError, match="tensor index 40 is out of range: subgraph 3 has 4 tensors"):
        interp.get_tensor(40, subgraph_index=3)


def test_int8_while_with_quantized_carried_tensor_is_bit_exact():
    rng = np.random.default_rng(3)
    feeds = [[I32(0), rng.integers(-128, 128, (1, 6)).astype(np.int8)] for _ in range(4)]
    feeds.append([I32(4), np.full((1, 6), 5, np.int8)])
    runs = assert_sequence_matches_litert(sm.int8_while(limit=4), feeds)
    assert runs[-1][1].tolist() == [[5] * 6]


@pytest.mark.parametrize("shapes_differ", [False, True])
def test_if_with_a_data_dependent_predicate(shapes_differ):
    feeds = [[_x(1, 2, -0.5)], [_x(-1, -2, 0.5)], [_x(0.25, 0, 0)], [_x(0, 0, 0)]]
    runs = assert_sequence_matches_litert(sm.if_model(shapes_differ), feeds)
    np.testing.assert_array_equal(runs[0][0], _x(2, 4, 0))
    if shapes_differ:
        assert [r[0].shape for r in runs] == [(3,), (6,), (3,), (6,)]
        np.testing.assert_array_equal(runs[1][0], _x(0, 0, 0.5, 0, 0, 0.5))
    else:
        np.testing.assert_array_equal(runs[1][0], _x(0, 0, 0))


def test_profile_counts_the_loop_body_in_the_while_row():
    interp = _ready(sm.nested_while(outer=3, inner=4))
    interp.set_tensor(0, I32(0))
    interp.set_tensor(1, _x(1, 2, 3))
    profile = interp.profile(runs=2, warmup=0)
    assert [(op.index, op.op_type) for op in profile.ops] == [(0, "WHILE")]
    assert profile.ops[0].seconds > 0
    assert interp.get_tensor(interp.get_output_details()[0]["index"]).item() == 3


# --------------------------------------------------------------------------- hostile files


def _self_calling_body() -> bytes:
    """The body of a WHILE holds a WHILE whose body is itself."""
    b = ModelBuilder()
    specs = [("i", [], I32, {})]
    sm._while_main(b, specs, cond=1, body=2)
    sm._less_than_cond(b, specs, 3)
    i, o = b.tensor("b_i", [], I32), b.tensor("b_o", [], I32)
    b.op("WHILE", [i], [o], cond_subgraph_index=1, body_subgraph_index=2)
    return b.build([i], [o])


def _if_cycle() -> bytes:
    """Subgraph 1's IF calls subgraph 2, whose IF calls subgraph 1."""
    b = ModelBuilder()
    p, x, y = b.tensor("p", [], np.bool_), b.tensor("x", [1]), b.tensor("y", [1])
    b.op("IF", [p, x], [y], then_subgraph_index=1, else_subgraph_index=1)
    b.finish_subgraph([p, x], [y])
    for other in (2, 1):
        p, x, y = b.tensor("p", [], np.bool_), b.tensor("x", [1]), b.tensor("y", [1])
        b.op("IF", [p, x], [y], then_subgraph_index=other, else_subgraph_index=other)
        if other == 2:
            b.finish_subgraph([p, x], [y])
    return b.build([p, x], [y])


def _while_with(cond: int = 1, body: int = 2, body_out_dtype=I32, cond_out_dtype=np.bool_,
                body_outputs: int = 1) -> bytes:
    b = ModelBuilder()
    sm._while_main(b, [("i", [], I32, {})], cond=cond, body=body)
    ci, flag = b.tensor("c_i", [], I32), b.tensor("flag", [], cond_out_dtype)
    b.op("LESS" if cond_out_dtype == np.bool_ else "ADD",
         [ci, b.const("lim", np.array(3, I32))], [flag])
    b.finish_subgraph([ci], [flag], "cond")
    i = b.tensor("b_i", [], I32)
    outs = [b.tensor(f"b_o{k}", [], body_out_dtype) for k in range(body_outputs)]
    for o in outs:
        b.op("CAST" if body_out_dtype != I32 else "ADD",
             [i] if body_out_dtype != I32 else [i, b.const("one", np.array(1, I32))], [o])
    return b.build([i], outs)


@pytest.mark.parametrize("model, error, message", [
    (_self_calling_body, GraphError,
     "subgraph 2 operator 0 (WHILE) calls subgraph 2, which is already running (calls "
     "0 -> 2 -> 2): a recursive subgraph call never ends; edgelite refuses it"),
    (_if_cycle, GraphError,
     "subgraph 2 operator 0 (IF) calls subgraph 1, which is already running (calls "
     "0 -> 1 -> 2 -> 1)"),
    (lambda: _while_with(body=7), GraphError,
     "subgraph 0 operator 0 (WHILE): its body subgraph index 7 is out of range: the model "
     "has 3 subgraph(s)"),
    (lambda: _while_with(cond=2, body=2), ShapeError,
     "operator 0 (WHILE, output 'i_out'): uses subgraph 2 as both its cond and its body"),
    (lambda: _while_with(body_outputs=2), ShapeError,
     "operator 0 (WHILE, output 'i_out'): expects 1 output(s) from its body subgraph 2, "
     "which gives 2"),
    (lambda: _while_with(body_out_dtype=np.float32), DTypeError,
     "operator 0 (WHILE, output 'i_out'): output 0 is int32 but its body subgraph 2 gives "
     "'b_o0' as float32"),
    (lambda: _while_with(cond_out_dtype=I32), DTypeError,
     "operator 0 (WHILE, output 'i_out'): output 0 is bool but its cond subgraph 1 gives "
     "'flag' as int32"),
])
def test_hostile_subgraph_calls_fail_with_one_line_at_allocate(model, error, message):
    interp = Interpreter(model_content=model())
    with pytest.raises(error) as info:
        interp.allocate_tensors()
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_nesting_deeper_than_the_limit_is_refused():
    b = ModelBuilder()
    depth = MAX_DEPTH + 2
    for k in range(depth):
        p, x, y = b.tensor("p", [], np.bool_), b.tensor("x", [1]), b.tensor("y", [1])
        callee = k + 1 if k + 1 < depth else None
        if callee is None:
            b.op("RELU", [x], [y])
            data = b.build([p, x], [y])
        else:
            b.op("IF", [p, x], [y], then_subgraph_index=callee, else_subgraph_index=callee)
            b.finish_subgraph([p, x], [y])
    with pytest.raises(GraphError, match=f"at nesting depth {MAX_DEPTH + 1}; edgelite runs "
                                         f"subgraph calls nested at most {MAX_DEPTH} deep"):
        Interpreter(model_content=data).allocate_tensors()


def test_an_endless_loop_stops_on_keyboard_interrupt_and_the_interpreter_still_works():
    interp = _ready(sm.counting_while(limit=2**31 - 1))  # i + 1 wraps before reaching it
    interp.set_tensor(0, I32(0))
    interp.set_tensor(1, _x(0, 0))
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            interp.invoke()
    finally:
        timer.cancel()
    interp.set_tensor(0, I32(2**31 - 3))
    interp.invoke()  # not refused: the interrupted invoke released the interpreter
    assert interp.get_tensor(interp.get_output_details()[0]["index"]).item() == 2**31 - 1


def test_a_loop_growing_past_the_memory_limit_stops_with_one_line():
    interp = _ready(sm.counting_while(limit=40, grow=True), memory_limit=1 << 20)
    interp.set_tensor(0, I32(0))
    interp.set_tensor(1, _x(0, 0))
    with pytest.raises(MemoryLimitError) as info:
        interp.invoke()
    # the body for a [131072] x (512 KiB) needs a 1.5 MiB arena: refused before allocating
    assert str(info.value).startswith("subgraph 2, for input shapes [[], [131072]]: "
                                      "allocate_tensors() needs 1572992 bytes")


# A single changed byte in a loop's start value runs 2^31 iterations: the API bounds it.
@pytest.mark.parametrize("grow", [False, True])
def test_max_loop_iterations_stops_a_runaway_loop_naming_the_op(grow):
    interp = _ready(sm.counting_while(limit=2**31 - 1 if not grow else 40, grow=grow),
                    max_loop_iterations=12)
    interp.set_tensor(0, I32(0))
    interp.set_tensor(1, _x(0, 0))
    with pytest.raises(InvokeStoppedError) as info:
        interp.invoke()
    assert str(info.value) == (
        "operator 0 (WHILE, output 'i_out'): the loop ran 12 iterations without ending, the "
        "max_loop_iterations bound; check the loop's start and limit values, or pass "
        "Interpreter(max_loop_iterations=...) to allow more")
    interp.set_tensor(0, I32(40 - 12 if grow else 2**31 - 13))  # exactly 12 runs: allowed
    interp.invoke()
    assert interp.get_tensor(interp.get_output_details()[0]["index"]).item() == (
        40 if grow else 2**31 - 1)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "10"])
def test_max_loop_iterations_must_be_a_positive_int(bad):
    with pytest.raises(ValueError, match="max_loop_iterations should be a positive int"):
        Interpreter(model_content=sm.counting_while(), max_loop_iterations=bad)


def test_cancel_from_another_thread_stops_a_running_invoke():
    interp = _ready(sm.counting_while(limit=2**31 - 1))
    interp.cancel()  # no invoke() running: no effect on the next one
    interp.set_tensor(0, I32(2**31 - 4))
    interp.set_tensor(1, _x(0, 0))
    interp.invoke()
    assert interp.get_tensor(interp.get_output_details()[0]["index"]).item() == 2**31 - 1
    interp.set_tensor(0, I32(0))
    timer = threading.Timer(0.3, interp.cancel)
    timer.start()
    start = time.monotonic()
    try:
        with pytest.raises(InvokeStoppedError, match=r"^invoke\(\) was cancelled \(Interpreter"
                           r"\.cancel\(\)\) in operator 0 \(WHILE, output 'i_out'\), "
                           r"iteration \d+$"):
            interp.invoke()
    finally:
        timer.cancel()
    assert time.monotonic() - start < 30
    interp.set_tensor(0, I32(2**31 - 3))
    interp.invoke()  # the cancelled invoke released the interpreter, and the flag is clear
    assert interp.get_tensor(interp.get_output_details()[0]["index"]).item() == 2**31 - 1
