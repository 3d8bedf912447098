"""interpreter/signature.py: SignatureRunner calls a model by its SignatureDef names --
resizing, allocating, returning copies keyed by output name -- on subgraph 0 and on another
entry subgraph (tests against LiteRT's runner: test_interpreter.py)."""

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.errors import SignatureError

from .tflite_builder import ModelBuilder


def _two_entries() -> bytes:
    """Subgraph 0 "double": x[1, 2] -> ADD(x, x) -> y. Subgraph 1 "negate": a[2] -> NEG -> b."""
    m = ModelBuilder()
    x = m.tensor("x", (1, 2), shape_signature=(-1, 2))
    y = m.tensor("y", (1, 2), shape_signature=(-1, 2))
    m.op("ADD", [x, x], [y])
    m.signature("double", {"value": x}, {"twice": y})
    m.finish_subgraph([x], [y], name="main")
    a, b = m.tensor("a", (2,)), m.tensor("b", (2,))
    m.op("NEG", [a], [b])
    m.signature("negate", {"in": a}, {"out": b}, subgraph_index=1)
    return m.build([a], [b])


def test_a_call_resizes_runs_and_returns_copies_by_name():
    interp = Interpreter(model_content=_two_entries())
    runner = interp.get_signature_runner("double")
    assert runner.signature_key == "double"
    assert list(runner.get_input_details()) == ["value"]
    assert runner.get_output_details()["twice"]["name"] == "y"
    x = np.float32([[1, 2], [3, 4], [5, 6]])  # batch 3: the input is resized first
    out = runner(value=x)
    assert list(out) == ["twice"]
    np.testing.assert_array_equal(out["twice"], 2 * x)
    out["twice"][:] = 0  # a copy: the next call is not affected
    np.testing.assert_array_equal(runner(value=x)["twice"], 2 * x)


def test_a_signature_of_another_subgraph_runs_it_as_an_entry():
    interp = Interpreter(model_content=_two_entries())
    out = interp.get_signature_runner("negate")(**{"in": np.float32([1.5, -2])})
    np.testing.assert_array_equal(out["out"], np.float32([-1.5, 2]))


def test_wrong_input_names_are_one_line():
    runner = Interpreter(model_content=_two_entries()).get_signature_runner("double")
    with pytest.raises(SignatureError, match=r"^signature 'double' takes inputs \['value'\]; "
                                             r"missing \['value'\], unknown \['v'\]$"):
        runner(v=np.zeros((1, 2), np.float32))
