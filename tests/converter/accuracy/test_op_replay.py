"""converter/accuracy/op_replay.py: one op cut out of a model runs alone on given inputs,
its constants kept, and gives what it gives inside the whole model; ops that cannot run
alone are left out."""

import numpy as np

from edgelite.converter.accuracy.op_replay import one_op_models
from edgelite.interpreter.loader.model import load_model
from tests.interpreter import subgraph_models as sm
from tests.interpreter.tflite_builder import ModelBuilder
from tests.support import run_edgelite


def _chain() -> tuple[bytes, dict]:
    """x[2, 3] -> ADD(x, c) -> h -> MUL(h, h) -> y; the tensors' shapes by index."""
    b = ModelBuilder()
    x, h, y = b.tensor("x", (2, 3)), b.tensor("h", (2, 3)), b.tensor("y", (2, 3))
    c = b.const("c", np.float32([1, 2, 3]))
    b.op("ADD", [x, c], [h])
    b.op("MUL", [h, h], [y])
    return b.build([x], [y]), {x: (2, 3), h: (2, 3), y: (2, 3), c: (3,)}


def test_each_op_alone_matches_the_whole_model():
    model, shapes = _chain()
    ops = one_op_models(model, {0, 1}, shapes)
    assert sorted(ops) == [0, 1]
    add, mul = ops[0], ops[1]
    assert add.inputs == [0] and add.outputs == [1]          # the constant stays inside
    x = np.float32([[0, 1, 2], [-1, -2, -3]])
    add.run({0: x})
    h = add.output(1)
    np.testing.assert_array_equal(h, x + np.float32([1, 2, 3]))
    mul.run({1: h})
    np.testing.assert_array_equal(mul.output(2), run_edgelite(model, [x])[0])


def test_ops_with_subgraphs_are_left_out():
    model = sm.counting_while(limit=3)
    sg = load_model(model).subgraphs[0]
    assert [op.name for op in sg.operators] == ["WHILE"]
    shapes = {t.index: t.shape for t in sg.tensors}    # every shape known: left out anyway
    assert one_op_models(model, {0}, shapes) == {}
