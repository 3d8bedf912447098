"""converter/lower/control.py: a TF1 tf.cond (Switch / Merge) on a constant predicate.

TF (control_flow_ops.cc): Switch(data, pred) "Forwards data to the output port determined by
pred. If pred is true, the data input is forwarded to output_true [output 1]. Otherwise, the
data goes to output_false [output 0]"; Merge "Forwards the value of an available tensor from
inputs to output" and outputs value_index, "the index of the chosen input tensor in inputs".
"""

import numpy as np
import pytest

from edgelite.interpreter.errors import UnsupportedOpError

from .lowering import BOOL, F32, check, floats, graph, rng, run

COVERED = {"Switch", "Merge"}


def cond_graph(pred):
    """y = Merge(Neg(Switch:0), Relu(Switch:1)): -x if pred is false, relu(x) if true."""
    g = graph(x=(2, 3))
    if isinstance(pred, bool):
        g.const("pred", np.array(pred))
    g.node("sw", "Switch", ["x", "pred"], T=F32)
    g.node("f", "Neg", ["sw:0"], T=F32)
    g.node("t", "Relu", ["sw:1"], T=F32)
    g.node("y", "Merge", ["f", "t"], T=F32, N=2)
    return g


@pytest.mark.parametrize("pred", [True, False])
def test_constant_condition_takes_one_branch(pred):
    x = floats(rng(), 2, 3)
    want, taken = (np.maximum(x, 0), 1) if pred else (-x, 0)
    check(cond_graph(pred), {"x": x}, [want, np.int32(taken)], ["RELU" if pred else "NEG"],
          outputs=["y", "y:1"], lowered={"RELU" if pred else "NEG": 1})


def test_condition_computed_from_constants():
    """A predicate folded from constants (LogicalNot of a false Const) is constant too."""
    x = floats(rng(), 2, 3)
    g = graph(x=(2, 3))
    g.const("off", np.array(False))
    g.node("pred", "LogicalNot", ["off"])
    g.node("sw", "Switch", ["x", "pred"], T=F32)
    g.node("f", "Neg", ["sw:0"], T=F32)
    g.node("t", "Relu", ["sw:1"], T=F32)
    g.node("y", "Merge", ["f", "t"], T=F32, N=2)
    check(g, {"x": x}, np.maximum(x, 0), ["RELU"])


def test_run_time_condition_is_refused():
    g = graph(x=(2, 3), pred=((), BOOL))
    g.node("sw", "Switch", ["x", "pred"], T=F32)
    g.node("f", "Neg", ["sw:0"], T=F32)
    g.node("t", "Relu", ["sw:1"], T=F32)
    g.node("y", "Merge", ["f", "t"], T=F32, N=2)
    with pytest.raises(UnsupportedOpError, match=r"^node 'sw' \(Switch\): the condition "
                       r"'pred' is only known at run time; TFLite has no Switch/Merge"):
        run(g, {"x": np.zeros((2, 3), np.float32), "pred": np.array(True)}, ["y"])


def test_merge_of_two_live_inputs_is_refused():
    g = graph(a=(2, 3), b=(2, 3))
    g.node("y", "Merge", ["a", "b"], T=F32, N=2)
    zeros = np.zeros((2, 3), np.float32)
    with pytest.raises(UnsupportedOpError, match=r"^node 'y' \(Merge\): has 2 live inputs; "
                       "only a tf.cond whose condition is a constant can be converted"):
        run(g, {"a": zeros, "b": zeros}, ["y"])
