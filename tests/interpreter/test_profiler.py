"""Interpreter.profile(): which ops are timed, how they are labelled and aggregated.

Only structural facts are asserted (op lists, counts, names, shares summing to 1); the
times themselves are whatever the machine gives.
"""

import math
from pathlib import Path

import numpy as np
import pytest

import edgelite
from edgelite.interpreter import Interpreter, InterpreterStateError
from edgelite.interpreter.profiler import Profile

from .tflite_builder import ModelBuilder

MODELS = Path(__file__).resolve().parents[2] / "models"


def _model():
    """x -> ADD(x, c1 + c2 folded) -> RELU -> ADD -> RELU: four ops run, one is folded."""
    b = ModelBuilder()
    x = b.tensor("x", (2, 3))
    c1 = b.const("c1", np.ones((2, 3), np.float32))
    c2 = b.const("c2", np.ones((2, 3), np.float32))
    folded = b.tensor("folded", (2, 3))
    a1, r1, a2, r2 = (b.tensor(n, (2, 3)) for n in ("add1", "relu1", "add2", "relu2"))
    b.op("ADD", [c1, c2], [folded])
    b.op("ADD", [x, folded], [a1])
    b.op("RELU", [a1], [r1])
    b.op("ADD", [r1, x], [a2])
    b.op("RELU", [a2], [r2])
    return b.build([x], [r2]), x, r2


def _check_shares(prof: Profile) -> None:
    assert math.isclose(sum(op.share for op in prof.ops), 1.0, rel_tol=1e-9)
    assert math.isclose(sum(t.share for t in prof.by_type), 1.0, rel_tol=1e-9)
    assert math.isclose(sum(t.seconds for t in prof.by_type), prof.op_seconds, rel_tol=1e-9)
    assert all(op.seconds >= 0 for op in prof.ops)


def test_profile_lists_executed_ops_in_order_with_names():
    content, x, y = _model()
    interp = Interpreter(model_content=content)
    interp.allocate_tensors()
    interp.set_tensor(x, np.array([[-3, -1, 0], [1, 2, 3]], np.float32))
    prof = interp.profile(runs=3, warmup=2)
    assert (prof.runs, prof.warmup) == (3, 2)
    # Operator 0 (constant ADD) was folded at allocate time and never runs.
    assert [(op.index, op.op_type, op.output) for op in prof.ops] == [
        (1, "ADD", "add1"), (2, "RELU", "relu1"), (3, "ADD", "add2"), (4, "RELU", "relu2")]
    assert {(t.op_type, t.count) for t in prof.by_type} == {("ADD", 2), ("RELU", 2)}
    assert [t.seconds for t in prof.by_type] == sorted((t.seconds for t in prof.by_type),
                                                        reverse=True)
    _check_shares(prof)
    assert len(prof.top_ops(2)) == 2 and len(prof.top_ops()) == 4
    assert prof.top_ops(1)[0].seconds == max(op.seconds for op in prof.ops)
    # The profiled runs compute the model like invoke(): relu(relu(x + 2) + x).
    np.testing.assert_array_equal(interp.get_tensor(y), [[0, 0, 2], [4, 6, 8]])
    d = prof.to_dict(top=1)
    assert d["num_ops"] == 4 and len(d["ops"]) == 1 and len(d["by_type"]) == 1
    text = prof.table(top=None)
    assert "relu2" in text and "RELU" in text


def test_profile_of_converted_cnn_covers_every_step():
    interp = Interpreter(model_content=edgelite.convert(str(MODELS / "keras_cnn.pb")))
    interp.allocate_tensors()
    prof = interp.profile(runs=2)
    ops = interp.model.subgraphs[0].operators
    assert [op.index for op in prof.ops] == list(range(len(ops)))
    assert [op.op_type for op in prof.ops] == [op.name for op in ops]
    assert sum(t.count for t in prof.by_type) == len(ops)
    assert prof.ops[-1].output == interp.get_output_details()[0]["name"]
    _check_shares(prof)


def test_profile_needs_allocation_and_valid_counts():
    content, _, _ = _model()
    interp = Interpreter(model_content=content)
    with pytest.raises(InterpreterStateError, match="allocate_tensors"):
        interp.profile()
    interp.allocate_tensors()
    with pytest.raises(ValueError, match="runs"):
        interp.profile(runs=0)
    with pytest.raises(ValueError, match="warmup"):
        interp.profile(warmup=-1)
