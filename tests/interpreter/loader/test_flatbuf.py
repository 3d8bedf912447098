"""interpreter/loader/flatbuf.py: the bounds-checked flatbuffer reader model.py uses -- fields,
strings, vectors and sub-tables of a buffer written by the flatbuffers package, and one
FlatbufferError for every position outside the buffer."""

import flatbuffers
import numpy as np
import pytest

from edgelite.interpreter.loader.flatbuf import FlatbufferError, Reader


def _buffer(long: int = 100) -> bytes:
    """Root table: slot 0 int32 -7, slot 1 string "name", slot 2 [int32] 1..3, slot 3 a
    table {slot 0: u8 9}, slot 4 [int32] of ``long`` elements, slot 5 [tables] of two."""
    b = flatbuffers.Builder(256)

    def child(value):
        b.StartObject(1)
        b.PrependUint8Slot(0, value, 0)
        return b.EndObject()

    sub, k1, k2 = child(9), child(1), child(2)
    name = b.CreateString("name")
    short = b.CreateNumpyVector(np.int32([1, 2, 3]))
    many = b.CreateNumpyVector(np.arange(long, dtype=np.int32))
    b.StartVector(4, 2, 4)
    b.PrependUOffsetTRelative(k2)
    b.PrependUOffsetTRelative(k1)
    kids = b.EndVector()
    b.StartObject(6)
    b.PrependInt32Slot(0, -7, 0)
    b.PrependUOffsetTRelativeSlot(1, name, 0)
    b.PrependUOffsetTRelativeSlot(2, short, 0)
    b.PrependUOffsetTRelativeSlot(3, sub, 0)
    b.PrependUOffsetTRelativeSlot(4, many, 0)
    b.PrependUOffsetTRelativeSlot(5, kids, 0)
    b.Finish(b.EndObject())
    return bytes(b.Output())


def test_fields_strings_vectors_and_subtables():
    r = Reader(_buffer())
    root = r.root()
    assert r.scalar(root, 0, "i32") == -7 and r.has(root, 0) and not r.has(root, 9)
    assert r.scalar(root, 9, "i32", default=5) == 5     # a slot past the vtable: default
    assert r.string(root, 1) == b"name"
    start, count = r.vector(root, 2, 4)
    assert r.ints(start, count) == (1, 2, 3)
    start, count = r.vector(root, 4, 4)                 # long: read through numpy
    assert r.ints(start, count) == tuple(range(100))
    assert r.array(start, count, np.int32)[-1] == 99
    assert r.scalar(r.subtable(root, 3), 0, "u8") == 9
    start, count = r.vector(root, 5, 4)
    assert [r.scalar(r.table(p), 0, "u8") for p in r.tables(start, count)] == [1, 2]
    assert r.vector(root, 9, 4) == (0, 0) and r.subtable(root, 9) is None


def test_positions_outside_the_buffer_are_one_error():
    data = _buffer()
    with pytest.raises(FlatbufferError, match=r"^the root offset at bytes 0\.\.4 lies outside "
                                              r"the 2-byte buffer$"):
        Reader(data[:2]).root()
    with pytest.raises(FlatbufferError, match=r"^a table at bytes .* lies outside"):
        Reader(data).table(len(data) - 2)
    with pytest.raises(FlatbufferError, match=r"lies outside"):
        Reader(data).table(-4)
    r = Reader(data)
    root = r.root()
    # a vector whose length runs past the end: cut the buffer inside the long vector
    start, _ = r.vector(root, 4, 4)
    cut = Reader(data[:start + 40])
    with pytest.raises(FlatbufferError, match=r"a vector of 100 elements at bytes .* lies "
                                              r"outside"):
        cut.vector(cut.root(), 4, 4)
