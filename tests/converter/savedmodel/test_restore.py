"""restore.py: the checkpoint key of each variable, read off TF's own restore ops (TF2's
traced restore function, TF1's save/restore_all), and the layouts it refuses."""

import pytest

from edgelite.converter.savedmodel.restore import restored_variables
from edgelite.errors import GraphError, UnsupportedOpError
from edgelite.schema import graph_pb2 as pb
from tests.bounded import run_bounded
from tests.conftest import MODELS

SAVED = MODELS / "savedmodel"


def _meta(name: str) -> pb.MetaGraphDef:
    sm = pb.SavedModel()
    sm.ParseFromString((SAVED / name / "saved_model.pb").read_bytes())
    return sm.meta_graphs[0]


def test_tf2_module_variables_by_object_path():
    mg = _meta("sm_module_two")
    assert restored_variables(mg.graph_def, mg.saver_def.restore_op_name) == {
        "w": "w/.ATTRIBUTES/VARIABLE_VALUE", "table": "table/.ATTRIBUTES/VARIABLE_VALUE"}


def test_keras_export_and_save():
    mg = _meta("sm_keras_cnn_export")
    keys = restored_variables(mg.graph_def, mg.saver_def.restore_op_name)
    assert keys["conv/kernel"] == "variables/0/.ATTRIBUTES/VARIABLE_VALUE"
    assert len(keys) == 9
    mg = _meta("sm_keras_cnn_save")  # also the optimizer's slots and the metrics
    keys = restored_variables(mg.graph_def, mg.saver_def.restore_op_name)
    assert keys["conv/kernel"] == "layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE"
    assert keys["Adam/m/conv/kernel"] == "optimizer/_variables/1/.ATTRIBUTES/VARIABLE_VALUE"


@pytest.mark.parametrize("source", ["builder", "meta"])
def test_tf1_saver(source):
    if source == "builder":
        mg = _meta("sm_tf1_builder")
    else:
        mg = pb.MetaGraphDef()
        mg.ParseFromString((SAVED / "ckpt_tf1" / "model.ckpt.meta").read_bytes())
    assert restored_variables(mg.graph_def, mg.saver_def.restore_op_name) == {
        "w1": "w1", "b1": "b1", "w2": "w2"}


def _tf1_with(edit) -> pb.MetaGraphDef:
    mg = _meta("sm_tf1_builder")
    nodes = {n.name: n for n in mg.graph_def.node}
    edit(nodes)
    return mg


def test_a_sliced_variable_is_refused():
    def slices(nodes):
        t = nodes["save/RestoreV2/shape_and_slices"].attr["value"].tensor
        t.string_val[1] = b"5 8 0,5:0,8"
    mg = _tf1_with(slices)
    with pytest.raises(UnsupportedOpError, match="is restored from a slice .* partitioned"):
        restored_variables(mg.graph_def, mg.saver_def.restore_op_name)


def test_a_value_not_from_restorev2_is_refused():
    def other(nodes):
        nodes["save/Assign_1"].input[1] = "w1/initial_value"
    mg = _tf1_with(other)
    with pytest.raises(UnsupportedOpError, match="not RestoreV2: only V2 checkpoints"):
        restored_variables(mg.graph_def, mg.saver_def.restore_op_name)


def test_a_missing_restore_op():
    mg = _meta("sm_tf1_builder")
    with pytest.raises(GraphError, match="restore op 'nope' named by the saver"):
        restored_variables(mg.graph_def, "nope")


# Hostile and deep restore graphs, built here: a main graph holding the variable and its
# RestoreV2, and a library of functions passing (handle, value) down to an AssignVariableOp.
def _node(gd_or_fn, name, op, inputs=(), **attrs):
    n = gd_or_fn.node.add() if isinstance(gd_or_fn, pb.GraphDef) else gd_or_fn.node_def.add()
    n.name, n.op = name, op
    n.input.extend(inputs)
    for k, v in attrs.items():
        if k == "f":
            n.attr["f"].func.name = v
        else:
            n.attr[k].tensor.CopyFrom(v)
    return n


def _strings_tensor(values):
    t = pb.TensorProto(dtype=7)
    t.tensor_shape.dim.add().size = len(values)
    t.string_val.extend(v.encode() for v in values)
    return t


def _graph(calls: dict[str, list[str]], entry: str = "f0") -> pb.GraphDef:
    """`calls`: function -> the functions it calls (each with the two arguments it got);
    a function calling nothing assigns its value to its handle."""
    gd = pb.GraphDef()
    _node(gd, "v", "VarHandleOp")
    _node(gd, "names", "Const", value=_strings_tensor(["k"]))
    _node(gd, "slices", "Const", value=_strings_tensor([""]))
    _node(gd, "prefix", "Const", value=_strings_tensor(["ckpt"]))
    _node(gd, "restore_v2", "RestoreV2", ["prefix", "names", "slices"])
    _node(gd, "restore", "PartitionedCall", ["v", "restore_v2"], f=entry)
    for name, callees in calls.items():
        fdef = gd.library.function.add()
        fdef.signature.name = name
        fdef.signature.input_arg.add().name = "h"
        fdef.signature.input_arg.add().name = "x"
        for i, callee in enumerate(callees):
            _node(fdef, f"call{i}", "PartitionedCall", ["h", "x"], f=callee)
        if not callees:
            _node(fdef, "assign", "AssignVariableOp", ["h", "x"])
    return gd


def test_a_3000_deep_call_chain_is_walked():
    n = 3000
    gd = _graph({f"f{i}": [f"f{i + 1}"] if i < n - 1 else [] for i in range(n)})
    assert restored_variables(gd, "restore") == {"v": "k"}


def test_calls_fanning_out_are_walked_once_per_binding():
    # each function calls the next twice with the same arguments: 2^40 paths, 41 bodies
    n = 40
    gd = _graph({f"f{i}": [f"f{i + 1}"] * 2 if i < n else [] for i in range(n + 1)})
    assert restored_variables(gd, "restore") == {"v": "k"}


@pytest.mark.parametrize("calls, through", [
    ({"f0": ["f0"]}, "'f0'"),
    ({"f0": ["f1"], "f1": ["f2"], "f2": ["f0"]}, "'f0' -> 'f1' -> 'f2'"),
])
def test_a_function_calling_itself_is_refused_at_once(calls, through):
    with pytest.raises(GraphError, match=f"function 'f0' calls itself \\(through {through}\\)"):
        restored_variables(_graph(calls), "restore")


_CYCLE = """
from tests.converter.savedmodel.test_restore import _graph, _node
from edgelite.converter.savedmodel.restore import restored_variables
from edgelite.errors import GraphError
gd = _graph({"f0": []})
gd.node[-1].input[1] = "id0"    # the call's value: Identity id0 <- id1 <- ... <- id0
for i in range(1000):
    _node(gd, f"id{i}", "Identity", [f"id{(i + 1) % 1000}"])
try:
    restored_variables(gd, "restore")
except GraphError as e:
    print(e)
"""


def test_an_identity_cycle_is_refused_at_once():
    run = run_bounded(_CYCLE, mem_bytes=1 << 30, timeout=30)
    assert run.returncode == 0, run.stderr
    assert "Identity nodes form a cycle through" in run.stdout and "malformed" in run.stdout
