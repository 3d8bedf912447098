"""interpreter/loader/model_objects.py: exact element counts and the execution-order check a loaded
subgraph passes (every operand available when its op runs, every tensor produced once)."""

import numpy as np
import pytest

from edgelite.errors import ModelFormatError
from edgelite.interpreter.loader.model import load_model
from edgelite.interpreter.loader.model_objects import num_elements

from ..tflite_builder import ModelBuilder


def test_num_elements_never_wraps():
    assert num_elements([]) == 1 and num_elements((2, 3, 4)) == 24
    assert num_elements([2 ** 62 + 1, 4]) == 2 ** 64 + 4  # numpy's int64 product gives 4
    assert num_elements(np.array([3, 0, 5])) == 0


def _two_ops(first_reads: str, second_writes: str = "b", output: str = "b") -> bytes:
    """x -> NEG -> a -> NEG -> b, with the operands renamed to break the order."""
    m = ModelBuilder()
    t = {n: m.tensor(n, (2,)) for n in ("x", "a", "b", "c")}
    m.op("NEG", [t[first_reads]], [t["a"]])
    m.op("NEG", [t["a"]], [t[second_writes]])
    return m.build([t["x"]], [t[output]])


def test_a_well_ordered_subgraph_loads():
    sg = load_model(_two_ops("x")).subgraphs[0]
    assert [op.name for op in sg.operators] == ["NEG", "NEG"]


@pytest.mark.parametrize("model, message", [
    (lambda: _two_ops("b"), r"^subgraph 0: operator 0 \(NEG\) reads tensor 2 'b' before any "
                            r"operator produces it"),
    (lambda: _two_ops("x", second_writes="a"), r"^subgraph 0: tensor 1 'a' is written by "
                                               r"operator 1 \(NEG\) but already defined by "
                                               r"operator 0$"),
    (lambda: _two_ops("x", output="c"), r"^subgraph 0: output tensor 3 'c' is never produced$"),
    (lambda: _two_ops("x", second_writes="x"), r"tensor 0 'x' is written by operator 1 "
                                               r"\(NEG\) but already defined by the file$"),
])
def test_out_of_order_subgraphs_are_refused(model, message):
    with pytest.raises(ModelFormatError, match=message):
        load_model(model())
