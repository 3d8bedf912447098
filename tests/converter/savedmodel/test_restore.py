"""restore.py: the checkpoint key of each variable, read off TF's own restore ops (TF2's
traced restore function, TF1's save/restore_all), and the layouts it refuses."""

import pytest

from edgelite.converter.savedmodel.restore import restored_variables
from edgelite.interpreter.errors import GraphError, UnsupportedOpError
from edgelite.schema import graph_pb2 as pb
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
