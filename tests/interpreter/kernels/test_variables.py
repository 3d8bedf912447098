"""Resource variables (VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE), CALL_ONCE, variable
tensors and reset_all_variables(), against LiteRT."""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.errors import InterpreterStateError
from tests.conftest import litert_module
from tests.interpreter import subgraph_models as sm
from tests.interpreter.tflite_builder import ModelBuilder
from tests.support import assert_sequence_matches_litert


def _x(*values) -> np.ndarray:
    return np.array(values, np.float32)


@pytest.mark.parametrize("scalar_read", [False, True])
def test_call_once_initialises_an_accumulator_that_survives_invokes_and_resets(scalar_read):
    model = sm.accumulator(scalar_read)
    feeds = [[_x(k, -2 * k)] for k in range(12)]
    runs = assert_sequence_matches_litert(model, feeds, reset_after=10)
    sums = [r[0].tolist() for r in runs]
    assert sums[0] == [10, 20]  # init ran once, on the first invoke, before the read
    assert sums[9] == [10 + 45, 20 - 90]
    # reset_all_variables() leaves resource variables and CALL_ONCE alone (as LiteRT)
    assert sums[10] == [65, -90] and sums[11] == [76, -112]


def test_state_survives_allocate_tensors_and_call_once_never_runs_again():
    interp = Interpreter(model_content=sm.accumulator())
    interp.allocate_tensors()
    interp.set_tensor(0, _x(1, 1))
    interp.invoke()
    interp.allocate_tensors()  # LiteRT: the resources and the init status stay
    interp.set_tensor(0, _x(1, 1))
    interp.invoke()
    assert interp.get_tensor(interp.get_output_details()[0]["index"]).tolist() == [12, 22]
    assert interp._state.initialized == {1}
    assert list(interp._state.variables) == [0]


def test_same_shared_name_is_the_same_variable():
    runs = assert_sequence_matches_litert(sm.two_variables(), [[_x(2)], [_x(-1.5)]])
    assert [r[0].tolist() for r in runs] == [[6.0], [-4.5]]
    interp = Interpreter(model_content=sm.two_variables())
    assert interp._state.resource_ids == {("", "a"): 0, ("", "b"): 1}


def test_reading_a_variable_nobody_assigned_is_one_clear_error():
    b = ModelBuilder()
    h, v = b.tensor("h", [], type_code=sm.RESOURCE), b.tensor("v", [2])
    b.op("VAR_HANDLE", [], [h], shared_name="state")
    b.op("READ_VARIABLE", [h], [v])
    interp = Interpreter(model_content=b.build([], [v]))
    interp.allocate_tensors()
    with pytest.raises(InterpreterStateError) as info:
        interp.invoke()
    assert str(info.value) == ("operator 1 (READ_VARIABLE, output 'v'): reads resource "
                               "variable 'state' before any ASSIGN_VARIABLE wrote it")


def test_int8_variable_tensors_start_and_reset_at_their_zero_point():
    b = ModelBuilder()
    q = {"scale": 0.5, "zero_point": 3}
    x = b.tensor("x", [2], np.int8, **q)
    var = b.tensor("var", [2], np.int8, is_variable=True, **q)
    y = b.tensor("y", [2], np.int8, **q)
    b.op("ADD", [x, var], [y])
    model = b.build([x], [y])
    feeds = [[np.array([5, 7], np.int8)], [np.array([-9, 100], np.int8)]]
    runs = assert_sequence_matches_litert(model, feeds, reset_after=1)
    assert runs[0][0].tolist() == [5, 7]
    interp = Interpreter(model_content=model)
    interp.allocate_tensors()
    interp.tensor(var)()[...] = 50
    interp.reset_all_variables()
    assert interp.get_tensor(var).tolist() == [3, 3]


def test_reset_all_variables_needs_allocated_tensors():
    interp = Interpreter(model_content=sm.accumulator())
    with pytest.raises(InterpreterStateError, match="reset_all_variables\\(\\) needs allocated"):
        interp.reset_all_variables()


def _signature_on_subgraph_one() -> bytes:
    """Signature "step" runs subgraph 1 (store 3 * value in variable "s" and return it);
    signature "read" runs subgraph 0 (return the variable + z). (A signature without
    inputs crashes LiteRT 2.3's runner: "read" takes one.)"""
    b = ModelBuilder()
    z = b.tensor("z", [2])
    h, v, y = b.tensor("h", [], type_code=sm.RESOURCE), b.tensor("v", [2]), b.tensor("y", [2])
    b.op("VAR_HANDLE", [], [h], shared_name="s")
    b.op("READ_VARIABLE", [h], [v])
    b.op("ADD", [v, z], [y])
    b.finish_subgraph([z], [y])
    x, h1, t = b.tensor("x", [2]), b.tensor("h", [], type_code=sm.RESOURCE), b.tensor("t", [2])
    b.op("VAR_HANDLE", [], [h1], shared_name="s")
    b.op("MUL", [x, b.const("three", _x(3))], [t])
    b.op("ASSIGN_VARIABLE", [h1, t], [])
    b.signature("step", {"value": x}, {"scaled": t}, subgraph_index=1)
    b.signature("read", {"z": z}, {"total": y}, subgraph_index=0)
    return b.build([x], [t])


def test_signature_runners_on_other_subgraphs_share_the_variables():
    model = _signature_on_subgraph_one()
    results = []
    for interp in (Interpreter(model_content=model),
                   litert_module().Interpreter(model_content=model)):
        step, read = interp.get_signature_runner("step"), interp.get_signature_runner("read")
        got = [step(value=_x(1, 2))["scaled"].tolist(), read(z=_x(0, 0))["total"].tolist(),
               step(value=_x(-1, 0.5))["scaled"].tolist(), read(z=_x(1, 1))["total"].tolist(),
               step(value=_x(1, 2, 3))["scaled"].tolist()]
        results.append(got)
    assert results[0] == results[1] == [[3, 6], [3, 6], [-3, 1.5], [-2, 2.5], [3, 6, 9]]
    runner = Interpreter(model_content=model).get_signature_runner("step")
    assert list(runner.get_input_details()) == ["value"]
    assert runner.get_output_details()["scaled"]["shape"].tolist() == [2]
