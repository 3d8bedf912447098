"""TF1 tf.cond (Switch / Merge): a constant predicate keeps one branch; a run-time one is an IF.

(Graphs with Switches are raised to If nodes first (control_flow/functionalize_cond.py); the
Merge becomes an Identity of the If -- an IdentityN with the value_index when it is read --
and an If on a constant inlines the taken branch. control.py's rules still lower a Merge
without Switches.)

TF (control_flow_ops.cc): Switch(data, pred) "Forwards data to the output port determined by
pred. If pred is true, the data input is forwarded to output_true [output 1]. Otherwise, the
data goes to output_false [output 0]"; Merge "Forwards the value of an available tensor from
inputs to output" and outputs value_index, "the index of the chosen input tensor in inputs".
"""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.errors import UnsupportedOpError
from tests.support import run_litert

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
          outputs=["y", "y:1"], lowered={"RELU" if pred else "NEG": 1, "IDENTITY": 1})


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


def test_run_time_condition_becomes_an_if():
    """A predicate known only at run time: an IF op with then / else subgraphs, run by
    LiteRT (edgelite's interpreter gains IF in another branch)."""
    g = graph(x=(2, 3), pred=((), BOOL))
    g.node("sw", "Switch", ["x", "pred"], T=F32)
    g.node("f", "Neg", ["sw:0"], T=F32)
    g.node("t", "Relu", ["sw:1"], T=F32)
    g.node("y", "Merge", ["f", "t"], T=F32, N=2)
    result = convert_detailed(g.bytes(), ConvertOptions(inputs=["x", "pred"], outputs=["y"]))
    assert result.graph.op_counts() == {"IF": 1}
    then_g, else_g = result.graph.ops[0].subgraphs.values()
    assert (then_g.op_counts(), else_g.op_counts()) == ({"RELU": 1}, {"NEG": 1})
    x = floats(rng(), 2, 3)
    for pred, want in ((True, np.maximum(x, 0)), (False, -x)):
        np.testing.assert_array_equal(run_litert(result.model, {"x": x, "pred": np.array(pred)},
                                                 "default")[0],
                                      want)


def test_merge_of_two_live_inputs_is_refused():
    g = graph(a=(2, 3), b=(2, 3))
    g.node("y", "Merge", ["a", "b"], T=F32, N=2)
    zeros = np.zeros((2, 3), np.float32)
    with pytest.raises(UnsupportedOpError, match=r"^node 'y' \(Merge\): has 2 live inputs; "
                       "only a tf.cond whose condition is a constant can be converted"):
        run(g, {"a": zeros, "b": zeros}, ["y"])
