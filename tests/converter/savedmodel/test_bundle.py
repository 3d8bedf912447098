"""bundle.py: TensorFlow's checkpoint (tensor bundle) read without TensorFlow -- every value
TF reads back (models/savedmodel/bundle_dtypes.json), and damaged bundles refused in one line,
never a wrong value."""

import json
import shutil

import numpy as np
import pytest

from edgelite.converter.savedmodel.bundle import Bundle
from edgelite.interpreter.errors import ModelFormatError
from edgelite.schema import graph_pb2 as pb
from tests.conftest import MODELS

SAVED = MODELS / "savedmodel" / "bundle_dtypes"
EXPECTED = json.loads((MODELS / "savedmodel" / "bundle_dtypes.json").read_text())
KEYS = EXPECTED["checkpoint_keys"]
DATA = "variables.data-00000-of-00001"


def _bundle(folder=SAVED) -> Bundle:
    return Bundle(folder / "variables" / "variables")


def test_keys():
    assert sorted(_bundle().keys()) == sorted(KEYS)


@pytest.mark.parametrize("key", sorted(k for k in KEYS if "values" in KEYS[k]))
def test_values_equal_tensorflows(key):
    got = _bundle()[key]
    want = KEYS[key]
    assert list(got.shape) == want["shape"]
    if want["dtype"] == "string":
        assert [v.decode() for v in got.ravel()] == want["values"]
    else:
        assert got.dtype == np.dtype(want["dtype"])
        np.testing.assert_array_equal(got.ravel(), np.array(want["values"], want["dtype"]))


def test_object_graph_names_every_variable():
    graph = pb.TrackableObjectGraph()
    graph.ParseFromString(_bundle()["_CHECKPOINTABLE_OBJECT_GRAPH"].item())
    keys = {a.checkpoint_key for n in graph.nodes for a in n.attributes}
    assert keys == set(KEYS) - {"_CHECKPOINTABLE_OBJECT_GRAPH"}


@pytest.fixture
def copy(tmp_path):
    shutil.copytree(SAVED, tmp_path / "m")
    return tmp_path / "m"


def _edit(path, fn):
    data = bytearray(path.read_bytes())
    fn(data)
    path.write_bytes(bytes(data))


def _entry(key):
    """Where TF put the key's bytes (read from TF's index by our reader)."""
    return _bundle().entries[key]


@pytest.mark.parametrize("key", ["w/.ATTRIBUTES/VARIABLE_VALUE", "words/.ATTRIBUTES/VARIABLE_VALUE",
                                 "_CHECKPOINTABLE_OBJECT_GRAPH"])
def test_a_flipped_data_byte_fails_the_crc(copy, key):
    e = _entry(key)

    def flip(d):
        d[e.offset + e.size - 1] ^= 1
    _edit(copy / "variables" / DATA, flip)
    with pytest.raises(ModelFormatError, match="CRC-32C"):
        _bundle(copy)[key]
    _bundle(copy)["i8/.ATTRIBUTES/VARIABLE_VALUE"]  # the others still read


def test_a_truncated_data_shard_is_named(copy):
    _edit(copy / "variables" / DATA, lambda d: d.__delitem__(slice(len(d) // 2, None)))
    last = max(_entry(k).offset + _entry(k).size for k in KEYS)
    key = next(k for k in KEYS if _entry(k).offset + _entry(k).size == last)
    with pytest.raises(ModelFormatError, match="the data file is truncated"):
        _bundle(copy)[key]


def test_a_flipped_index_byte_is_refused(copy):
    def flip(d):
        d[40] ^= 0x01
    _edit(copy / "variables" / "variables.index", flip)
    with pytest.raises(ModelFormatError, match="CRC-32C"):
        _bundle(copy)


def test_missing_files_and_keys(copy):
    (copy / "variables" / DATA).unlink()
    with pytest.raises(ModelFormatError, match="cannot read"):
        _bundle(copy)["w/.ATTRIBUTES/VARIABLE_VALUE"]
    with pytest.raises(ModelFormatError, match="has no tensor 'nope'"):
        _bundle(copy)["nope"]
    with pytest.raises(ModelFormatError, match="cannot read the checkpoint index"):
        Bundle(copy / "variables" / "other")
