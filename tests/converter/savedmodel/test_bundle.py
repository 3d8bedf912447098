"""bundle.py: TensorFlow's checkpoint (tensor bundle) read without TensorFlow -- every value
TF reads back (models/savedmodel/bundle_dtypes.json), and damaged bundles refused in one line,
never a wrong value."""

import dataclasses
import json
import os
import shutil
import tracemalloc

import numpy as np
import pytest

from edgelite.converter.savedmodel.bundle import Bundle
from edgelite.errors import ModelFormatError
from edgelite.schema import graph_pb2 as pb
from tests.bounded import run_bounded
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
    with pytest.raises(ModelFormatError, match="cannot read checkpoint index .*no such file"):
        Bundle(copy / "variables" / "other")


# Every file of a bundle is read as a regular file, bounded, in a child process whose
# address space and time are bounded: /dev/zero would be read until memory runs out, a named
# pipe would block forever.
_OPEN = """
import sys
from edgelite.converter.savedmodel.bundle import Bundle
from edgelite.errors import EdgeliteError
try:
    print(Bundle(sys.argv[1])[sys.argv[2]].shape)
except EdgeliteError as e:
    print(type(e).__name__, e)
"""


@pytest.mark.parametrize("target", ["index", "data"])
@pytest.mark.parametrize("kind", ["fifo", "/dev/zero"])
def test_special_files_are_refused_without_reading(copy, target, kind):
    path = copy / "variables" / ("variables.index" if target == "index" else DATA)
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(kind)
    run = run_bounded(_OPEN, str(copy / "variables" / "variables"),
                      "w/.ATTRIBUTES/VARIABLE_VALUE", mem_bytes=1 << 30, timeout=60)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    assert run.stdout.startswith("ModelFormatError cannot read "), run.stdout
    assert path.name in run.stdout and "it is not a regular file" in run.stdout
    assert run.stdout.count("\n") == 1


@pytest.mark.parametrize("field, message", [
    ("size", "4294967296 bytes for shape"),               # size against shape and dtype
    ("shape", "lie past the end of"),                     # a shape to match, but no bytes
])
def test_a_4_gib_entry_is_refused_before_reading(copy, field, message):
    bundle = _bundle(copy)
    key = "w/.ATTRIBUTES/VARIABLE_VALUE"
    e = bundle.entries[key]
    itemsize = e.size // max(1, int(np.prod(e.shape)))
    claim = {"size": 4 << 30} if field == "size" else {"size": 4 << 30,
                                                       "shape": ((4 << 30) // itemsize,)}
    bundle.entries[key] = dataclasses.replace(e, **claim)
    tracemalloc.start()
    try:
        with pytest.raises(ModelFormatError, match=message):
            bundle[key]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_a_string_entry_too_small_for_its_strings(copy):
    bundle = _bundle(copy)
    key = "words/.ATTRIBUTES/VARIABLE_VALUE"
    bundle.entries[key] = dataclasses.replace(bundle.entries[key], shape=(10**9,))
    with pytest.raises(ModelFormatError, match="cannot hold 1000000000 strings"):
        bundle[key]
