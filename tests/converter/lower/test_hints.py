"""converter/lower/hints.py: the `--set NAME=VALUE` hints of an unsupported-op report -- a
placeholder that is no input, one whose default decides a tf.cond -- with the placeholder's
type and the value to give (whole TF1 training graphs: tests/models/test_tf1_training.py)."""

from types import SimpleNamespace

import numpy as np

from edgelite.converter.ir import Graph
from edgelite.converter.lower.hints import set_hints

from ..tfgraph import GraphBuilder


def _graph():
    """keep (float32 [?]) is no input; is_training (bool [], with a default) feeds the
    predicate of two If nodes through a LogicalNot; x is the data."""
    g = GraphBuilder()
    g.placeholder("x", [2])
    g.placeholder("keep", [-1])
    g.const("default", np.array(False))
    flag = g.node("is_training", "PlaceholderWithDefault", ["default"], dtype=np.dtype(bool))
    g.gd.node[-1].attr["shape"].shape.SetInParent()
    g.node("not", "LogicalNot", [flag])
    for name in ("bn/cond", "drop/cond", "z/cond", "w/cond"):
        g.node(name, "If", ["not", "x"])
    return SimpleNamespace(nodes={n.name: n for n in g.gd.node})


def _report(unsupported_placeholders):
    ops = {} if unsupported_placeholders is None else {"Placeholder": SimpleNamespace(
        supported=False, unsupported_nodes=unsupported_placeholders)}
    return SimpleNamespace(ops=ops)


def test_a_placeholder_that_is_no_input_and_a_deciding_default():
    ctx = SimpleNamespace(undecided_conds=[], graph=Graph())
    hints = set_hints(_graph(), ctx, _report(["keep"]))
    assert hints == [
        "placeholder 'keep' (float32 [?]) is not an input: give it a value with "
        "--set keep=VALUE (or list it in --inputs)",
        "placeholder 'is_training' (bool []) takes its default, which decides tf.cond "
        "'bn/cond', 'drop/cond', 'w/cond' and 1 more; --set is_training=false overrides it"]


def test_no_hints_for_a_graph_without_them():
    g = GraphBuilder()
    g.placeholder("x", [2])
    g.node("y", "Relu", ["x"], T=np.dtype(np.float32))
    tf = SimpleNamespace(nodes={n.name: n for n in g.gd.node})
    assert set_hints(tf, SimpleNamespace(undecided_conds=[], graph=Graph()), _report(None)) == []
