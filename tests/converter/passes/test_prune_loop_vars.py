"""prune_loop_vars: WHILE loop variables the body passes through unread leave the loop."""

import numpy as np

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.passes import prune_loop_vars
from edgelite.interpreter import Interpreter

from ..control_flow.library import F32, I32, Function, call
from ..tfgraph import GraphBuilder


def _loop() -> GraphBuilder:
    """(i, x, w, s, u) -> while i < 3: (i + 1, x * s, w, s, u); y = x, z = u after the loop.
    w (a constant) is passed through unread; s is passed through and read; u is passed
    through unread, but its result is an output of the graph."""
    g = GraphBuilder()
    g.placeholder("x", [1, 4])
    g.placeholder("u", [1, 4])
    g.const("zero", np.int32(0))
    g.const("w", np.ones((4, 4), np.float32))
    g.placeholder("s", [])
    args = {"i": I32, "x": F32, "w": F32, "s": F32, "u": F32}
    cond = Function(g, "cond", args, {"out": "less:z:0"})
    cond.const("limit", np.int32(3))
    cond.node("less", "Less", ["i", "limit:output:0"], T=I32)
    body = Function(g, "body", args, {"i2": "inc:z:0", "x2": "mul:z:0", "w2": "w", "s2": "s",
                                      "u2": "u"})
    body.const("one", np.int32(1))
    body.node("inc", "AddV2", ["i", "one:output:0"], T=I32)
    body.node("mul", "Mul", ["x", "s"], T=F32)
    call(g, "loop", "StatelessWhile", ["zero", "x", "w", "s", "u"], cond="cond", body="body")
    g.node("y", "Identity", ["loop:1"], T=F32)
    g.node("z", "Identity", ["loop:4"], T=F32)
    return g


def _convert(disabled=frozenset()):
    return convert_detailed(_loop().bytes(), ConvertOptions(
        inputs=["x", "u", "s"], outputs=["y", "z"], disabled_passes=frozenset(disabled)))


def _run(model: bytes, **values):
    interp = Interpreter(model_content=model)
    interp.allocate_tensors()
    for d in interp.get_input_details():
        interp.set_tensor(d["index"], values[d["name"]])
    interp.invoke()
    return [interp.get_tensor(d["index"]) for d in interp.get_output_details()]


def test_unread_passthrough_variables_leave_the_loop():
    kept = _convert({"prune_loop_vars"})
    pruned = _convert()
    (loop_kept,), (loop,) = kept.graph.ops, pruned.graph.ops
    assert len(loop_kept.inputs) == 5
    assert [t.name for t in loop.inputs] == ["zero", "x", "s", "u"]  # w went
    assert len(loop.outputs) == 4
    cond, body = loop.subgraphs["cond"], loop.subgraphs["body"]
    assert len(cond.inputs) == len(body.inputs) == len(body.outputs) == 4
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    u = np.full((1, 4), 5, np.float32)
    for model in (kept.model, pruned.model):
        y, z = _run(model, x=x, u=u, s=np.float32(2))
        np.testing.assert_array_equal(y, x * 8)
        np.testing.assert_array_equal(z, u)
    assert len(pruned.model) < len(kept.model)


def test_the_pass_alone_reports_what_it_removed():
    graph = _convert({"prune_loop_vars"}).graph
    assert prune_loop_vars.run(graph) == 1  # w
    assert prune_loop_vars.run(graph) == 0  # a fixed point


def test_a_last_step_list_reads_the_state_and_leaves_the_loop():
    """An unfused Keras LSTM (return_sequences=False) writes h' into a list of one item on
    every step and returns h' as a state too: the caller reads the state's result, and the
    list, written but no longer read, leaves the loop with its DYNAMIC_UPDATE_SLICE."""
    from tests.conftest import MODELS
    keep = convert_detailed(MODELS / "rnn_lstm.pb", ConvertOptions(
        disabled_passes=frozenset({"fuse_lstm_loop"})))
    body = next(op for op in keep.graph.ops if op.type == "WHILE").subgraphs["body"]
    assert "DYNAMIC_UPDATE_SLICE" not in body.op_counts()
    golden = np.load(MODELS / "rnn_lstm.golden.npz")
    interp = Interpreter(model_content=keep.model)
    interp.allocate_tensors()
    for k in range(len(golden["tokens"])):
        interp.set_tensor(interp.get_input_details()[0]["index"], golden["tokens"][k:k + 1])
        interp.invoke()
        got = interp.get_tensor(interp.get_output_details()[0]["index"])
        assert np.abs(got - golden["output"][k:k + 1]).max() <= 1e-5
    plain = convert_detailed(MODELS / "rnn_lstm.pb", ConvertOptions(
        disabled_passes=frozenset({"fuse_lstm_loop", "prune_loop_vars"})))
    body = next(op for op in plain.graph.ops if op.type == "WHILE").subgraphs["body"]
    assert body.op_counts()["DYNAMIC_UPDATE_SLICE"] == 1   # the switch
