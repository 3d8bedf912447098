"""A small, bounds-checked reader of flatbuffer tables, for model.py.

The generated accessors (schema/generated_tflite.py, on the flatbuffers package) cost
several Python calls per field -- a Table object, an Offset() lookup through the vtable,
number-type checks -- which made reading a 100,000-op .tflite take seconds. This reader
unpacks a table's whole vtable with one struct call and reads fields and vectors with
one more each; a table is a ``(pos, slots)`` tuple.

Every position is checked before it is read: a table, its vtable, a vector's elements
and a string's bytes all lie inside the buffer, else ``FlatbufferError`` (model.py turns
it into ModelFormatError naming the part of the file). Python's struct would read a
negative offset from the end of the buffer, so negative positions are refused too.
Field slots are given by index in the schema's field order (a union takes two: its
type, then its value), as in tflite.fbs; tests check them against the generated code.
"""

from __future__ import annotations

import struct
import numpy as np


class FlatbufferError(ValueError):
    """A position or length in the buffer points outside it."""


_U8 = struct.Struct("<B").unpack_from
_I8 = struct.Struct("<b").unpack_from
_U16X2 = struct.Struct("<HH").unpack_from
_I32 = struct.Struct("<i").unpack_from
_U32 = struct.Struct("<I").unpack_from
_U64 = struct.Struct("<Q").unpack_from
SCALARS = {"u8": (_U8, 1), "i8": (_I8, 1), "i32": (_I32, 4), "u32": (_U32, 4),
           "u64": (_U64, 8)}
_SMALL_VECTOR = 64  # up to this many elements one cached struct call, else numpy
_STRUCTS: dict[tuple[int, str], struct.Struct] = {}


def _vector_struct(count: int, code: str) -> struct.Struct:
    s = _STRUCTS.get((count, code))
    if s is None:
        s = _STRUCTS[count, code] = struct.Struct(f"<{count}{code}")
    return s


# A table is a tuple (pos, slots): where it starts, and its vtable entries (the offset
# of each field from pos, 0 if absent).
Table = tuple[int, tuple[int, ...]]


class Reader:
    def __init__(self, data: bytes):
        self.data = data
        self.size = len(data)

    def _outside(self, pos: int, nbytes: int, what: str) -> FlatbufferError:
        return FlatbufferError(
            f"{what} at bytes {pos}..{pos + nbytes} lies outside the {self.size}-byte buffer"
        )

    # ------------------------------------------------------------------ tables

    def table(self, pos: int) -> Table:
        data, size = self.data, self.size
        if pos < 0 or pos + 4 > size:
            raise self._outside(pos, 4, "a table")
        vtable = pos - _I32(data, pos)[0]
        if vtable < 0 or vtable + 4 > size:
            raise self._outside(vtable, 4, "a vtable")
        vt_size, table_size = _U16X2(data, vtable)
        if vt_size < 4 or vt_size % 2 or vtable + vt_size > size:
            raise FlatbufferError(f"a vtable at byte {vtable} has size {vt_size}")
        if pos + table_size > size:
            raise self._outside(pos, table_size, "a table")
        return pos, _vector_struct((vt_size - 4) // 2, "H").unpack_from(data, vtable + 4)

    def root(self) -> Table:
        if self.size < 4:
            raise self._outside(0, 4, "the root offset")
        return self.table(_U32(self.data, 0)[0])

    @staticmethod
    def has(t: Table, slot: int) -> bool:
        slots = t[1]
        return slot < len(slots) and slots[slot] != 0

    def scalar(self, t: Table, slot: int, kind: str, default=0):
        pos, slots = t
        off = slots[slot] if slot < len(slots) else 0
        if not off:
            return default
        unpack, width = SCALARS[kind]
        if pos + off + width > self.size:
            raise self._outside(pos + off, width, "a field")
        return unpack(self.data, pos + off)[0]

    def subtable(self, t: Table, slot: int) -> Table | None:
        pos, slots = t
        off = slots[slot] if slot < len(slots) else 0
        if not off:
            return None
        at = pos + off
        if at + 4 > self.size:
            raise self._outside(at, 4, "an offset")
        return self.table(at + _U32(self.data, at)[0])

    # ------------------------------------------------------------------ vectors

    def vector(self, t: Table, slot: int, elem_size: int) -> tuple[int, int]:
        """(start of the elements, count); (0, 0) when the field is absent."""
        pos, slots = t
        off = slots[slot] if slot < len(slots) else 0
        if not off:
            return 0, 0
        data, size = self.data, self.size
        at = pos + off
        if at + 4 > size:
            raise self._outside(at, 4, "an offset")
        at += _U32(data, at)[0]
        if at + 4 > size:
            raise self._outside(at, 4, "a vector length")
        count = _U32(data, at)[0]
        if at + 4 + count * elem_size > size:
            raise self._outside(at + 4, count * elem_size, f"a vector of {count} elements")
        return at + 4, count

    def ints(self, start: int, count: int, code: str = "i") -> tuple[int, ...]:
        """``count`` little-endian integers (struct ``code``) at ``start``, as Python ints."""
        if count <= _SMALL_VECTOR:
            return _vector_struct(count, code).unpack_from(self.data, start)
        return tuple(np.frombuffer(self.data, f"<{code}", count, start).tolist())

    def array(self, start: int, count: int, dtype) -> np.ndarray:
        """A read-only numpy view of ``count`` elements at ``start``."""
        return np.frombuffer(self.data, np.dtype(dtype).newbyteorder("<"), count, start)

    def tables(self, start: int, count: int) -> list[int]:
        """Positions of the tables a vector of ``count`` offsets at ``start`` points to."""
        if count == 0:
            return []
        offsets = np.frombuffer(self.data, "<u4", count, start).astype(np.int64)
        return (offsets + np.arange(start, start + 4 * count, 4, dtype=np.int64)).tolist()

    def string(self, t: Table, slot: int) -> bytes | None:
        start, count = self.vector(t, slot, 1)
        if start == 0:
            return None
        return self.data[start:start + count]
