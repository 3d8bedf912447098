"""A flatbuffers Builder that writes the same bytes as ``flatbuffers.Builder``, faster.

``flatbuffers.Builder`` (Python) spends most of a large model's packing time in per-value
method calls: ``Prep`` / ``Place`` / ``enforce_number`` for every scalar, vtable slot and
vector element. ``Builder`` here is a subclass whose hot methods keep the base class's
arithmetic exactly (alignment padding, ``minalign``, vtable de-duplication by content,
back-to-front layout) with fewer calls, and adds bulk helpers the converter's writer uses:

  ``table(spec, values)``  one table, as ``XStart`` + ``XAdd<Field>``... + ``XEnd`` write it,
                           in one struct pack (the table's _Layout)
  ``vectors4(items)``      int32 vectors and strings written back to back in one step
  ``vector(array)``        ``CreateNumpyVector`` (uint8 data aligned to ``byte_alignment``,
                           as TFLite's writer aligns constant buffers)
  ``CreateString``, ``PrependUOffsetTRelative``, ``WriteVtable``: same results, fewer steps

A ``TableSpec`` is read from the generated module's own builder functions
(``TableSpec(tfl.TensorStart, tfl.TensorAddShape, ...)``): slot numbers, value types and
defaults come from the bindings, never typed twice. tests/schema/test_writer.py checks the
bytes against ``flatbuffers.Builder`` and the generated object API's ``Pack``.
"""

from __future__ import annotations

import operator
import struct
import sys
from typing import Any, Callable, Sequence

import flatbuffers
import numpy as np
from flatbuffers.builder import OffsetArithmeticError

_U32 = struct.Struct("<I")
_ZEROS = (b"", b"\0", b"\0\0", b"\0\0\0")   # a 4-aligned vector's padding, by length
_I32 = struct.Struct("<i")

# Builder method a generated XAdd<Field> calls -> (struct format, bytes); None: an offset.
_SLOT_KINDS = {
    "PrependBoolSlot": ("<?", 1), "PrependInt8Slot": ("<b", 1), "PrependUint8Slot": ("<B", 1),
    "PrependByteSlot": ("<B", 1), "PrependInt16Slot": ("<h", 2),
    "PrependUint16Slot": ("<H", 2), "PrependInt32Slot": ("<i", 4),
    "PrependUint32Slot": ("<I", 4), "PrependInt64Slot": ("<q", 8),
    "PrependUint64Slot": ("<Q", 8), "PrependFloat32Slot": ("<f", 4),
    "PrependFloat64Slot": ("<d", 8), "PrependUOffsetTRelativeSlot": (None, 4),
}


class _Probe:
    """Stands in for a builder to learn what one generated function asks of it."""

    def __getattr__(self, method: str) -> Callable:
        def record(*args):
            self.call = (method, args)
        return record


def _probe(fn: Callable, *args) -> tuple[str, tuple]:
    p = _Probe()
    fn(p, *args)
    return p.call


class TableSpec:
    """One table's layout, from its generated ``XStart`` and ``XAdd<Field>`` functions in
    the order ``XT.Pack`` adds them: per field (slot, struct format or None for an offset,
    size, default)."""

    def __init__(self, start: Callable, *adders: Callable):
        method, (self.num_fields,) = _probe(start)
        if method != "StartObject":
            raise TypeError(f"{start.__name__} does not start a table")
        self.fields = []
        for add in adders:
            method, (slot, _, default) = _probe(add, 0)
            fmt, size = _SLOT_KINDS[method]
            self.fields.append((slot, None if fmt is None else struct.Struct(fmt), size,
                                default))
        self._derived()

    def _derived(self) -> None:
        """Per field the default a value is compared with (None for an offset: written
        whenever it is not None); and the table's _Layouts, made as they are first
        needed."""
        self.defaults = tuple(None if packer is None else default
                              for _, packer, _, default in self.fields)
        self.layouts: dict = {}

    def present(self, values: Sequence[Any]) -> tuple:
        """Which fields Builder.table writes: offsets not None, scalars not their default."""
        return tuple(map(operator.ne, values, self.defaults))


class _NotScalar(Exception):
    """A generated Pack asked for something other than a scalar slot."""


class _Recorder:
    """Stands in for a builder while a generated ``XT.Pack`` runs, keeping the scalar slots
    it adds in order; a vector, string or nested table (anything with an offset) stops it."""

    def __init__(self) -> None:
        self.num_fields, self.slots = 0, []

    def StartObject(self, n):  # noqa: N802 (flatbuffers API names)
        self.num_fields = n

    def EndObject(self):  # noqa: N802
        return 0

    def __getattr__(self, method: str) -> Callable:
        kind = _SLOT_KINDS.get(method)
        if kind is None or kind[0] is None:
            raise _NotScalar(method)
        return lambda slot, value, default: self.slots.append((method, slot, value, default))


_RECORDED_SPECS: dict[tuple, "TableSpec"] = {}


def scalar_table(obj: Any) -> Any:
    """A generated ``XT`` object (an options table) made of scalars only, as a ScalarTable
    writing the same bytes in one ``Builder.table`` call; any other object as it is."""
    rec = _Recorder()
    try:
        obj.Pack(rec)
    except _NotScalar:
        return obj
    layout = (rec.num_fields, tuple((m, slot, d) for m, slot, _, d in rec.slots))
    spec = _RECORDED_SPECS.get(layout)
    if spec is None:
        spec = _RECORDED_SPECS[layout] = TableSpec.__new__(TableSpec)
        spec.num_fields = rec.num_fields
        spec.fields = [(slot, struct.Struct(_SLOT_KINDS[m][0]), _SLOT_KINDS[m][1], d)
                       for m, slot, d in layout[1]]
        spec._derived()
    return ScalarTable(obj, spec, tuple(v for _, _, v, _ in rec.slots))


class ScalarTable:
    """A scalar-only table with its values read once (scalar_table): packs with
    ``Builder.table`` on a writer.Builder, the generated way on any other builder. The
    same object may be packed any number of times (options shared by many operators)."""

    __slots__ = ("obj", "spec", "values", "present")

    def __init__(self, obj: Any, spec: "TableSpec", values: tuple) -> None:
        self.obj, self.spec, self.values = obj, spec, values
        self.present = spec.present(values)

    def Pack(self, b):  # noqa: N802 (the generated API's name)
        if isinstance(b, Builder):
            return b.table(self.spec, self.values, self.present)
        return self.obj.Pack(b)


class Builder(flatbuffers.Builder):
    """flatbuffers.Builder, byte for byte, with fewer steps per value (module docstring)."""

    def __init__(self, initial_size: int = 1024, byte_alignment: int = 16):
        super().__init__(max(int(initial_size), 16))
        self.byte_alignment = byte_alignment

    # -- the base class's primitives, same arithmetic

    def Prep(self, size, additionalBytes):  # noqa: N802,N803 (flatbuffers API names)
        if size > self.minalign:
            self.minalign = size
        head = self.head
        align = (head - len(self.Bytes) - additionalBytes) & (size - 1)
        needed = align + size + additionalBytes
        while head < needed:
            old = len(self.Bytes)
            self.GrowByteBuffer()
            head += len(self.Bytes) - old
        if align:
            self.Bytes[head - align:head] = bytes(align)
            head -= align
        self.head = head

    def PrependUOffsetTRelative(self, off):  # noqa: N802
        self.Prep(4, 0)
        offset = len(self.Bytes) - self.head
        if off > offset:
            raise OffsetArithmeticError("flatbuffers: Offset arithmetic error.")
        self.head -= 4
        _U32.pack_into(self.Bytes, self.head, offset - off + 4)

    def WriteVtable(self):  # noqa: N802
        """The object's vtable, or a pointer to an equal one written before (the base
        class's de-duplication key: field offsets and object size)."""
        self.Prep(4, 0)
        self.head -= 4  # the object's vtable offset, written below
        object_offset = len(self.Bytes) - self.head
        vt = self.current_vtable
        used = len(vt)
        while used and vt[used - 1] == 0:
            used -= 1
        fields = [object_offset - e if e else 0 for e in vt[:used]]
        size = object_offset - self.objectEnd
        key = (*reversed(fields), size)
        found = self.vtables.get(key)
        if found is None:
            n = used + 2
            self.Prep(2, 2 * n - 2)
            self.head -= 2 * n
            struct.pack_into(f"<{n}H", self.Bytes, self.head, 2 * n, size, *fields)
            start = len(self.Bytes) - object_offset
            _I32.pack_into(self.Bytes, start, (len(self.Bytes) - self.head) - object_offset)
            self.vtables[key] = len(self.Bytes) - self.head
        else:
            _I32.pack_into(self.Bytes, self.head, found - object_offset)
        self.current_vtable = None
        return object_offset

    def CreateString(self, s, encoding="utf-8", errors="strict"):  # noqa: N802
        self.assertNotNested()
        x = s.encode(encoding, errors) if isinstance(s, str) else s
        if not isinstance(x, bytes):
            raise TypeError("non-string passed to CreateString")
        n = len(x)
        self.Prep(4, n + 1)
        head = self.head - n - 1
        self.Bytes[head:self.head] = x + b"\x00"
        self.head = head - 4
        _U32.pack_into(self.Bytes, self.head, n)
        return len(self.Bytes) - self.head

    def CreateNumpyVector(self, x):  # noqa: N802
        if isinstance(x, np.ndarray) and x.ndim == 1 and x.dtype.kind in "biuf":
            return self.vector(x)
        return super().CreateNumpyVector(x)

    # -- bulk helpers

    def vector(self, x: np.ndarray) -> int:
        """A 1-D numpy vector, as CreateNumpyVector writes it (StartVector, the raw
        little-endian bytes, the length); uint8 data is aligned to ``byte_alignment``."""
        alignment = self.byte_alignment if x.dtype == np.uint8 else x.dtype.alignment
        swap = x.dtype.byteorder == ">" or x.dtype.byteorder == "=" and sys.byteorder == "big"
        payload = x.astype(x.dtype.newbyteorder("<")).tobytes() if swap else x.tobytes()
        return self._payload(payload, x.size, alignment)

    def int32_vector(self, values) -> int:
        """A list of ints as an int32 vector (the same bytes as vector() of np.int32)."""
        return self._payload(struct.pack(f"<{len(values)}i", *values), len(values), 4)

    def int32_payload(self, payload: bytes) -> int:
        """An int32 vector from its little-endian bytes (as int32_vector packs them)."""
        return self._payload(payload, len(payload) >> 2, 4)

    def vectors4(self, items: Sequence[tuple[bytes, int]]) -> list[int]:
        """Vectors of 4-byte alignment written one after another in one step, each
        (payload, length) as _payload writes an int32 vector -- or, its payload ending
        in the terminating zero, as CreateString writes a string: Prep(4, payload) pads
        above it, the length word goes below. Returns their offsets."""
        self.assertNotNested()
        pos = len(self.Bytes) - self.head
        pieces, offsets = [], []
        for payload, n in items:
            pad = -(pos + len(payload)) & 3
            pos += pad + len(payload) + 4
            pieces.append(_U32.pack(n) + payload + _ZEROS[pad])
            offsets.append(pos)
        blob = b"".join(reversed(pieces))  # memory order: the last written lowest
        self._room(len(blob))
        self.Bytes[self.head - len(blob):self.head] = blob
        self.head -= len(blob)
        if self.minalign < 4:
            self.minalign = 4
        return offsets

    def _room(self, size: int) -> None:
        """Grow the buffer (GrowByteBuffer, as Prep grows it) until `size` bytes fit below
        head, so a bulk write needs no Prep."""
        while self.head < size:
            old = len(self.Bytes)
            self.GrowByteBuffer()
            self.head += len(self.Bytes) - old

    def _payload(self, payload: bytes, n: int, alignment: int) -> int:
        """StartVector(itemsize, n, alignment), the bytes, EndVector."""
        self.assertNotNested()
        self.Prep(4, len(payload))
        if alignment > 4:  # (after the first, a smaller alignment pads nothing)
            self.Prep(alignment, len(payload))
        head = self.head - len(payload)
        self.Bytes[head:self.head] = payload
        self.head = head - 4
        _U32.pack_into(self.Bytes, self.head, n)
        return len(self.Bytes) - self.head

    def offsets(self, offsets: Sequence[int]) -> int:
        """A vector of offsets to tables written before (StartVector(4, n, 4), then
        PrependUOffsetTRelative for each, last first, then EndVector)."""
        self.assertNotNested()
        n = len(offsets)
        self.Prep(4, 4 * n)
        self.Prep(4, 4 * n)
        end = len(self.Bytes) - self.head  # Offset() before the last element goes in
        rel = end + 4 * np.arange(n, 0, -1, dtype=np.int64) - np.asarray(offsets, np.int64)
        if n and (rel < 4).any():
            raise OffsetArithmeticError("flatbuffers: Offset arithmetic error.")
        head = self.head - 4 * n
        self.Bytes[head:self.head] = rel.astype("<u4").tobytes()
        self.head = head - 4
        _U32.pack_into(self.Bytes, self.head, n)
        return len(self.Bytes) - self.head

    def table(self, spec: TableSpec, values: Sequence[Any], present: tuple | None = None
              ) -> int:
        """One table: ``values`` in ``spec``'s field order, None for an offset field not
        added (an absent vector or table); a scalar equal to its default is left out, as the
        generated XAdd<Field> functions leave it. Its bytes are packed in one step by the
        _Layout of its present fields and start alignment (which fix every pad, field
        position and the vtable's content), then the vtable is found or written as
        WriteVtable does. (`present`: spec.present(values), if the caller keeps it.)"""
        self.assertNotNested()
        if present is None:
            present = spec.present(values)
        start = len(self.Bytes) - self.head
        layout = spec.layouts.get((present, start & 7))
        if layout is None:
            layout = spec.layouts[(present, start & 7)] = _Layout(spec, present, start)
        self._room(layout.size + layout.vtable_size)
        obj = start + layout.size  # the object's offset (its vtable soffset's position)
        args = [values[index] for index in layout.indices]
        for k, position in layout.offsets:  # PrependUOffsetTRelative's value at its position
            rel = start + position - args[k]
            if rel < 4:
                raise OffsetArithmeticError("flatbuffers: Offset arithmetic error.")
            args[k] = rel
        vtable = self.vtables.get(layout.vtable_key)
        self.head -= layout.size
        if vtable is None:  # a new vtable, just below the object
            vtable = obj + layout.vtable_size
            self.Bytes[self.head - layout.vtable_size:self.head] = layout.vtable
            self.head -= layout.vtable_size
            self.vtables[layout.vtable_key] = vtable
        layout.packer.pack_into(self.Bytes, len(self.Bytes) - obj, vtable - obj, *args)
        if layout.minalign > self.minalign:
            self.minalign = layout.minalign
        self.current_vtable, self.objectEnd = None, start
        return obj


class _Layout:
    """The bytes of one table for a set of present fields and a start offset (mod 8), as
    Builder.table's field loop and WriteVtable lay them out: each field padded to its size
    (Prep), then the vtable soffset aligned to 4. Every pad, position and the vtable depend
    only on those, so each table of the same shape is one struct pack.

    ``packer`` packs the object from its lowest byte: the soffset, then the present fields
    (``indices``: their value indices; ``offsets``: which of them are offsets, and where
    from the start); ``vtable`` is the vtable's bytes and ``vtable_key`` WriteVtable's
    de-duplication key."""

    def __init__(self, spec: TableSpec, present: tuple, start: int) -> None:
        pos, minalign, at = start, 4, {}  # at: value index -> (slot, position after it)
        for index, ((slot, packer, size, _), here) in enumerate(zip(spec.fields, present)):
            if here:
                pos += (-pos) & (size - 1)
                pos += size
                at[index] = (slot, pos)
                minalign = max(minalign, size)
        pos += (-pos) & 3
        obj = pos + 4
        self.size, self.minalign = obj - start, minalign
        vt = [0] * spec.num_fields
        for slot, position in at.values():
            vt[slot] = obj - position
        while vt and vt[-1] == 0:
            vt.pop()
        self.vtable_key = (*reversed(vt), self.size)
        self.vtable = struct.pack(f"<{len(vt) + 2}H", 2 * len(vt) + 4, self.size, *vt)
        self.vtable_size = len(self.vtable)
        fmt, offset = ["<i"], 4  # the soffset at the object's first byte
        self.indices, self.offsets = [], []
        for index, (slot, position) in sorted(at.items(), key=lambda item: -item[1][1]):
            field = spec.fields[index]
            fmt.append("x" * (obj - position - offset))
            fmt.append("I" if field[1] is None else field[1].format[1:])
            offset = obj - position + field[2]
            if field[1] is None:
                self.offsets.append((len(self.indices), position - start))
            self.indices.append(index)
        fmt.append("x" * (self.size - offset))
        self.packer = struct.Struct("".join(fmt))


# --------------------------------------------------------------------------- tflite tables

from . import generated_tflite as tfl  # noqa: E402 (the generic builder above needs none)

TENSOR = TableSpec(tfl.TensorStart, tfl.TensorAddShape, tfl.TensorAddType, tfl.TensorAddBuffer,
                   tfl.TensorAddName, tfl.TensorAddQuantization, tfl.TensorAddIsVariable,
                   tfl.TensorAddSparsity, tfl.TensorAddShapeSignature, tfl.TensorAddHasRank,
                   tfl.TensorAddVariantTensors, tfl.TensorAddExternalBuffer)
QUANTIZATION = TableSpec(
    tfl.QuantizationParametersStart, tfl.QuantizationParametersAddMin,
    tfl.QuantizationParametersAddMax, tfl.QuantizationParametersAddScale,
    tfl.QuantizationParametersAddZeroPoint, tfl.QuantizationParametersAddDetailsType,
    tfl.QuantizationParametersAddDetails, tfl.QuantizationParametersAddQuantizedDimension)
OPERATOR = TableSpec(
    tfl.OperatorStart, tfl.OperatorAddOpcodeIndex, tfl.OperatorAddInputs,
    tfl.OperatorAddOutputs, tfl.OperatorAddBuiltinOptionsType, tfl.OperatorAddBuiltinOptions,
    tfl.OperatorAddCustomOptions, tfl.OperatorAddCustomOptionsFormat,
    tfl.OperatorAddMutatingVariableInputs, tfl.OperatorAddIntermediates,
    tfl.OperatorAddLargeCustomOptionsOffset, tfl.OperatorAddLargeCustomOptionsSize,
    tfl.OperatorAddBuiltinOptions2Type, tfl.OperatorAddBuiltinOptions2,
    tfl.OperatorAddDebugMetadataIndex)
BUFFER = TableSpec(tfl.BufferStart, tfl.BufferAddData, tfl.BufferAddOffset, tfl.BufferAddSize)
SUBGRAPH = TableSpec(tfl.SubGraphStart, tfl.SubGraphAddTensors, tfl.SubGraphAddInputs,
                     tfl.SubGraphAddOutputs, tfl.SubGraphAddOperators, tfl.SubGraphAddName,
                     tfl.SubGraphAddDebugMetadataIndex)
MODEL = TableSpec(tfl.ModelStart, tfl.ModelAddVersion, tfl.ModelAddOperatorCodes,
                  tfl.ModelAddSubgraphs, tfl.ModelAddDescription, tfl.ModelAddBuffers,
                  tfl.ModelAddSignatureDefs)


def _vector(b: Builder, values, dtype) -> int | None:
    """A vector field as XT.Pack writes it: numpy arrays as they are, lists as ``dtype``."""
    if values is None:
        return None
    if type(values) is np.ndarray:
        return b.vector(values)
    if dtype is np.int32 and all(type(v) is int for v in values):
        return b.int32_vector(values)
    return b.vector(np.asarray(values, dtype))


def _packed(b: Builder, table) -> int | None:
    return None if table is None else table.Pack(b)


def _tables(b: Builder, tables) -> int | None:
    """A vector of tables as XT.Pack writes it: each table, then the vector of offsets."""
    return None if tables is None else b.offsets([t.Pack(b) for t in tables])


class QuantizationParametersT(tfl.QuantizationParametersT):
    """tfl.QuantizationParametersT whose Pack writes the same bytes in a few bulk steps (on a
    writer.Builder; a table with details goes the generated way)."""

    def Pack(self, b):  # noqa: N802
        if not isinstance(b, Builder) or self.details is not None:
            return super().Pack(b)
        vectors = (_vector(b, self.min, np.float32), _vector(b, self.max, np.float32),
                   _vector(b, self.scale, np.float32), _vector(b, self.zeroPoint, np.int64))
        return b.table(QUANTIZATION, (*vectors, self.detailsType, None,
                                      self.quantizedDimension))


_TENSOR_DEFAULTS = tfl.TensorT()      # the generated defaults of fields rows never set
_OPERATOR_DEFAULTS = tfl.OperatorT()


class TensorRow:
    """A tensor table's fields as the converter's export has them, without a TensorT: the
    shape (and shape signature) as int32 little-endian bytes, which export makes once per
    distinct shape. Packs, on a writer.Builder, the bytes tfl.TensorT.Pack writes for a dense
    tensor (the same writes in the same order); ``buffer`` may be renumbered before."""

    __slots__ = ("name", "shape", "type", "buffer", "isVariable", "quantization",
                 "shapeSignature")

    def __init__(self, name: str, shape: bytes, type_code: int, buffer: int,
                 is_variable: bool, quantization: Any, signature: bytes | None) -> None:
        self.name, self.shape, self.type, self.buffer = name, shape, type_code, buffer
        self.isVariable, self.quantization, self.shapeSignature = (is_variable, quantization,
                                                                   signature)

    def Pack(self, b: Builder) -> int:  # noqa: N802 (the generated API's name)
        name = self.name.encode("utf-8")
        shape, name = b.vectors4(((self.shape, len(self.shape) >> 2), (name + b"\0", len(name))))
        quantization = _packed(b, self.quantization)
        signature = None if self.shapeSignature is None else \
            b.int32_payload(self.shapeSignature)
        d = _TENSOR_DEFAULTS
        return b.table(TENSOR, (shape, self.type, self.buffer, name, quantization,
                                self.isVariable, None, signature, d.hasRank, None,
                                d.externalBuffer))


class OperatorRow:
    """An operator table's fields as the converter's export has them, without an
    OperatorT: operand indices as int32 little-endian bytes, builtin options as a table
    object (or None). Packs, on a writer.Builder, the bytes tfl.OperatorT.Pack writes."""

    __slots__ = ("opcodeIndex", "inputs", "outputs", "builtinOptionsType", "builtinOptions",
                 "intermediates")

    def __init__(self, opcode_index: int, inputs: bytes, outputs: bytes, options_type: int,
                 options: Any, intermediates: bytes | None) -> None:
        self.opcodeIndex, self.inputs, self.outputs = opcode_index, inputs, outputs
        self.builtinOptionsType, self.builtinOptions = options_type, options
        self.intermediates = intermediates

    def Pack(self, b: Builder) -> int:  # noqa: N802
        inputs, outputs = b.vectors4(((self.inputs, len(self.inputs) >> 2),
                                      (self.outputs, len(self.outputs) >> 2)))
        options = _packed(b, self.builtinOptions)
        intermediates = None if self.intermediates is None else \
            b.int32_payload(self.intermediates)
        d = _OPERATOR_DEFAULTS
        return b.table(OPERATOR, (
            self.opcodeIndex, inputs, outputs, self.builtinOptionsType, options, None,
            d.customOptionsFormat, None, intermediates, d.largeCustomOptionsOffset,
            d.largeCustomOptionsSize, d.builtinOptions2Type, None, d.debugMetadataIndex))


class BufferT(tfl.BufferT):
    """tfl.BufferT, packed in bulk."""

    def Pack(self, b):  # noqa: N802
        if not isinstance(b, Builder) or not (self.data is None or
                                              type(self.data) is np.ndarray):
            return super().Pack(b)
        return b.table(BUFFER, (_vector(b, self.data, np.uint8), self.offset, self.size))


class SubGraphT(tfl.SubGraphT):
    """tfl.SubGraphT, packed in bulk: its tensors and operators go in as
    vectors of offsets in one step each."""

    def Pack(self, b):  # noqa: N802
        if not isinstance(b, Builder):
            return super().Pack(b)
        tensors = _tables(b, self.tensors)
        inputs = _vector(b, self.inputs, np.int32)
        outputs = _vector(b, self.outputs, np.int32)
        operators = _tables(b, self.operators)
        name = None if self.name is None else b.CreateString(self.name)
        return b.table(SUBGRAPH, (tensors, inputs, outputs, operators, name,
                                  self.debugMetadataIndex))


class ModelT(tfl.ModelT):
    """tfl.ModelT, packed in bulk; metadata and external buffers go the
    generated way."""

    def Pack(self, b):  # noqa: N802
        if not isinstance(b, Builder) or self.metadataBuffer is not None or \
                self.metadata is not None or self.externalBufferGroups is not None or \
                self.externalBuffers is not None:
            return super().Pack(b)
        codes = _tables(b, self.operatorCodes)
        subgraphs = _tables(b, self.subgraphs)
        description = None if self.description is None else b.CreateString(self.description)
        buffers = _tables(b, self.buffers)
        signatures = _tables(b, self.signatureDefs)
        return b.table(MODEL, (self.version, codes, subgraphs, description, buffers,
                               signatures))


__all__ = ["Builder", "TableSpec", "SubGraphT", "ModelT", "ScalarTable", "scalar_table",
           "QuantizationParametersT", "BufferT", "TensorRow", "OperatorRow"]
