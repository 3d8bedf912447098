import numpy as np
import pytest

from edgelite.converter.graphdef import TFGraph, TensorRef, load_graphdef, parse_ref
from edgelite.errors import GraphError, ModelFormatError

from .tfgraph import GraphBuilder


def small_graph() -> GraphBuilder:
    g = GraphBuilder()
    g.placeholder("x", [-1, 4])
    g.const("w", np.ones((4, 3)))
    g.node("w/read", "Identity", ["w"], T=np.dtype(np.float32))
    g.node("mm", "MatMul", ["x", "w/read"], T=np.dtype(np.float32))
    g.node("unused", "Relu", ["x"], T=np.dtype(np.float32))
    g.node("y", "Softmax", ["mm", "^init"], T=np.dtype(np.float32))
    g.node("init", "NoOp")
    return g


def test_parse_ref():
    assert parse_ref("a/b") == TensorRef("a/b", 0)
    assert parse_ref("split:2") == TensorRef("split", 2)
    assert parse_ref("split:2").name == "split:2"


def test_binary_and_text_parse_identically(models_dir):
    pb = load_graphdef(models_dir / "tf1_cnn.pb")
    txt = load_graphdef(models_dir / "tf1_cnn.pbtxt")
    assert [(n.name, n.op) for n in pb.node] == [(n.name, n.op) for n in txt.node]
    # Node by node, attributes included (the binary also keeps unknown top-level fields).
    for a, b in zip(pb.node, txt.node):
        assert a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True)


def test_default_inputs_outputs_skip_noop():
    tf = TFGraph(load_graphdef(small_graph().bytes()))
    assert tf.default_inputs() == [TensorRef("x")]
    # "unused" is consumed by nothing: it is an output too; NoOp never is.
    assert {r.node for r in tf.default_outputs()} == {"y", "unused"}


def test_prune_keeps_only_what_outputs_need():
    tf = TFGraph(load_graphdef(small_graph().bytes()))
    order = [n.name for n in tf.prune([TensorRef("x")], [TensorRef("y")])]
    assert order.index("w") < order.index("w/read") < order.index("mm") < order.index("y")
    assert set(order) == {"x", "w", "w/read", "mm", "y"}  # no Relu, no NoOp (control input)


def test_prune_reports_cycle():
    g = GraphBuilder()
    g.node("a", "Relu", ["b"])
    g.node("b", "Relu", ["a"])
    tf = TFGraph(load_graphdef(g.bytes()))
    with pytest.raises(GraphError, match="cycle"):
        tf.prune([], [TensorRef("a")])


def test_unknown_name_suggests_close_match():
    tf = TFGraph(load_graphdef(small_graph().bytes()))
    with pytest.raises(GraphError, match=r"'mn' is not a node.*'mm'"):
        tf.resolve(["mn"], tf.default_outputs, "output")


@pytest.mark.parametrize("data", [b"\x00\x01garbage\xff" * 10, b"not a graph at all {{{",
                                  b"node { name: 'a' op: 'Relu' inpt: 'b' "])
def test_malformed_graphdef_is_one_clear_error(data):
    with pytest.raises(ModelFormatError, match="not a TensorFlow GraphDef"):
        load_graphdef(data)


def test_truncated_pb_is_rejected(models_dir):
    data = (models_dir / "tf1_cnn.pb").read_bytes()
    with pytest.raises(ModelFormatError):
        load_graphdef(data[: len(data) // 2])


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(ModelFormatError, match="cannot read"):
        load_graphdef(tmp_path / "nope.pb")
    (tmp_path / "empty.pb").write_bytes(b"")
    with pytest.raises(ModelFormatError, match="empty"):
        load_graphdef(tmp_path / "empty.pb")


def test_pipes_folders_and_missing_files_are_refused(tmp_path):
    import os

    fifo = tmp_path / "graph.pb"
    os.mkfifo(fifo)  # opening it for reading would wait for a writer forever
    for path, why in ((fifo, "it is not a regular file"), (tmp_path, "it is a directory"),
                      (tmp_path / "nope.pb", "no such file")):
        with pytest.raises(ModelFormatError) as info:
            load_graphdef(path)
        assert str(info.value) == f"cannot read '{path}': {why}"


def test_ref_node_names_the_node_of_any_reference():
    from edgelite.converter.graphdef import parse_ref, ref_node
    for text in ("a", "a:0", "a:3", "^a", "^^a", "scope/a:b", "a:", "a:x1", ":2"):
        assert ref_node(text) == parse_ref(text.lstrip("^")).node, text
