"""interpreter/program.py: which subgraphs a model's entries reach (refusing recursion,
indices out of range and too deep nesting, one line naming the op), resource ids numbered
as LiteRT numbers them, and the loop bound / cancellation an invoke checks."""

from types import SimpleNamespace

import pytest

from edgelite.errors import GraphError, InvokeStoppedError
from edgelite.interpreter.loader.model import load_model
from edgelite.interpreter.program import MAX_DEPTH, State, check_calls, resource_ids

from . import subgraph_models as sm


def _model(calls: dict[int, list[int]], n: int):
    """n subgraphs; subgraph i holds one CALL_ONCE op per callee in calls[i]."""
    def op(k, callee):
        return SimpleNamespace(name="CALL_ONCE", index=k,
                               options={"init_subgraph_index": callee})
    return SimpleNamespace(subgraphs=[
        SimpleNamespace(operators=[op(k, c) for k, c in enumerate(calls.get(i, []))])
        for i in range(n)])


def test_reachable_subgraphs_entries_first():
    model = load_model(sm.nested_while(outer=3, inner=4))
    assert check_calls(model, [0]) == [0, 1, 2, 3, 4]
    assert check_calls(_model({0: [2], 2: [3]}, 5), [0, 1]) == [0, 2, 3, 1]


def test_recursion_range_and_depth_are_refused():
    with pytest.raises(GraphError, match=r"^subgraph 2 operator 0 \(CALL_ONCE\) calls subgraph "
                                         r"1, which is already running \(calls 0 -> 1 -> 2 -> "
                                         r"1\): a recursive subgraph call never ends"):
        check_calls(_model({0: [1], 1: [2], 2: [1]}, 3), [0])
    with pytest.raises(GraphError, match=r"^subgraph 0 operator 1 \(CALL_ONCE\): its init "
                                         r"subgraph index 7 is out of range: the model has 2"):
        check_calls(_model({0: [1, 7]}, 2), [0])
    chain = {i: [i + 1] for i in range(MAX_DEPTH + 1)}
    with pytest.raises(GraphError, match=rf"at nesting depth {MAX_DEPTH + 1}; edgelite runs "
                                         rf"subgraph calls nested at most {MAX_DEPTH} deep$"):
        check_calls(_model(chain, MAX_DEPTH + 2), [0])


def test_resource_ids_and_names():
    ids = resource_ids(load_model(sm.two_variables()))
    assert ids == {("", "a"): 0, ("", "b"): 1}     # a second handle of "a" shares its id
    state = State(ids)
    assert state.variable_name(1) == "'b'" and state.variable_name(9) == "with resource id 9"
    assert State({("box", "v"): 0}).variable_name(0) == "'v' (container 'box')"


def test_loop_bound_and_cancel():
    state = State({}, max_loop_iterations=3)
    state.loop_iteration("subgraph 0 operator 1 (WHILE)", 3)
    with pytest.raises(InvokeStoppedError, match=r"^subgraph 0 operator 1 \(WHILE\): the loop "
                                                 r"ran 3 iterations without ending"):
        state.loop_iteration("subgraph 0 operator 1 (WHILE)", 4)
    state.cancelled.set()
    with pytest.raises(InvokeStoppedError, match=r"^invoke\(\) was cancelled "
                                                 r"\(Interpreter\.cancel\(\)\) in w, iteration 1$"):
        state.loop_iteration("w", 1)
