"""loader.py: the meta graph by tags, the signature by key (errors list what the model has),
the variables the signature needs, checked against the graph's declared dtype and shape."""

import shutil

import numpy as np
import pytest

from edgelite.converter.savedmodel import load_source
from edgelite.converter.savedmodel.bundle import Bundle
from edgelite.errors import GraphError, ModelFormatError
from tests.conftest import MODELS

SAVED = MODELS / "savedmodel"


def test_default_signature_and_its_names():
    loaded = load_source(SAVED / "sm_module_two")
    assert loaded.signature.key == "serving_default"
    assert loaded.signature.inputs == (("x", "serving_default_x:0"),)
    assert loaded.signature.outputs == (("y", "StatefulPartitionedCall_1:0"),)
    assert loaded.variables == {"w": "w/.ATTRIBUTES/VARIABLE_VALUE"}  # not the table
    assert {n.op for n in loaded.graph_def.node} == {"Const", "Placeholder",
                                                      "StatefulPartitionedCall"}


def test_the_saved_model_file_itself_works_too():
    loaded = load_source(SAVED / "sm_module_two" / "saved_model.pb", signature="encode")
    assert [n for n, _ in loaded.signature.inputs] == ["bias", "ids"]


@pytest.mark.parametrize("kwargs, message", [
    ({"signature": "nope"}, "its signatures: ['encode', 'serving_default']"),
    ({"tags": ("train",)}, "no meta graph tagged train; its tag sets are: serve"),
])
def test_wrong_choices_list_the_models_own(kwargs, message):
    with pytest.raises(GraphError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_source(SAVED / "sm_module_two", **kwargs)


def test_a_folder_without_saved_model(tmp_path):
    with pytest.raises(ModelFormatError, match="is a directory without saved_model.pb"):
        load_source(tmp_path)
    (tmp_path / "saved_model.cpb").write_bytes(b"chunks")
    with pytest.raises(ModelFormatError, match="holds a chunked SavedModel"):
        load_source(tmp_path)


def test_signature_options_on_a_frozen_graph():
    with pytest.raises(GraphError, match="is a frozen GraphDef: --signature and --tag apply"):
        load_source(MODELS / "tf1_cnn.pb", signature="serving_default")


def test_a_checkpoint_of_another_model_is_refused(tmp_path, monkeypatch):
    def wrong(self, key):
        return np.zeros((2, 2), np.float32)
    monkeypatch.setattr(Bundle, "__getitem__", wrong)
    with pytest.raises(ModelFormatError, match="holds shape \\[2, 2\\], the graph declares"):
        load_source(SAVED / "sm_tf1_builder")


def test_missing_variables_folder(tmp_path):
    shutil.copytree(SAVED / "sm_tf1_builder", tmp_path / "m")
    shutil.rmtree(tmp_path / "m" / "variables")
    with pytest.raises(ModelFormatError, match="cannot read checkpoint index .*no such file"):
        load_source(tmp_path / "m")
