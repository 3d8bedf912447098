"""fold_input_affine on small graphs: a constant ADD / SUB / MUL in front of a FULLY_CONNECTED
folds into its weights and bias -- exact op counts after, the same numbers before and after."""

import numpy as np
import pytest

from edgelite.converter.passes import fold_input_affine
from edgelite.converter.shape_inference import infer_shapes

from ..irgraph import NONE, check, input_graph, rand, then


def _graph(op: str, c: np.ndarray, bias: bool = True, reversed_sub: bool = False):
    g, x = input_graph((6, 4))
    k = g.const("c", c.astype(np.float32))
    t = then(g, op, [k, x] if reversed_sub else [x, k], "offset", **NONE)
    ins = [t, g.const("w", rand(8, 4))] + ([g.const("b", rand(8))] if bias else [])
    g.outputs = [then(g, "FULLY_CONNECTED", ins, "fc", keep_num_dims=False, **NONE)]
    infer_shapes(g)
    return g


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("c", [rand(4), rand(1, 4), np.float32(0.75)], ids=["in", "1xin", "scalar"])
@pytest.mark.parametrize("bias", [True, False])
def test_folds_into_weights_and_bias(op, c, bias):
    g = _graph(op, np.asarray(c), bias)
    check(g, fold_input_affine.run, rand(6, 4), 1, {"FULLY_CONNECTED": 1})
    assert g.outputs[0].name == "fc"


def test_leaves_what_does_not_fold():
    assert fold_input_affine.run(_graph("SUB", rand(4), reversed_sub=True)) == 0  # c - x
    assert fold_input_affine.run(_graph("ADD", rand(6, 4))) == 0  # not per input feature
    g = _graph("ADD", rand(4))
    g.outputs = [*g.outputs, g.ops[0].outputs[0]]  # the offset value is an output too
    assert fold_input_affine.run(g) == 0
