"""Read and validate a .tflite file into plain frozen objects.

``load_model(data)`` walks the flatbuffer once with flatbuf.py's bounds-checked reader
(the generated accessors read only the per-op options tables) and returns a ``Model``
made of frozen dataclasses, tuples and read-only numpy views of the file's bytes -- no
flatbuffer object leaks out. ``read_model_file(path)`` reads a file for it, refusing
directories, pipes and unreadable paths in one line. Everything is checked before use, because a
.tflite file is untrusted input:

* size, file identifier ("TFL3"; a file without it is accepted only if it parses, as
  TFLite does) and schema version 3;
* every count read from the file is bounded by the file size, and the total work of the
  walk is bounded by a budget proportional to the file size, so a few crafted bytes can
  neither hang the reader nor make it allocate much;
* every index (opcode, tensor, buffer, subgraph) is in range, every buffer (inline or at
  an external offset) lies inside the file, constant data holds exactly
  elements * itemsize bytes (counted in Python ints, which do not wrap), dimensions
  are >= -1, no tensor has more than MAX_RANK (numpy's limit) and none exceeds
  MAX_TENSOR_BYTES;
* each subgraph reads only constants, its inputs, or tensors produced by an earlier op,
  and each tensor is produced at most once (which also rules out cycles);
* a sparse constant (SparsityParameters) is checked against its shape and expanded to its
  dense value here (sparsity.py), so every op reads it like any constant; a file may
  expand to at most sparsity.dense_budget(file size) bytes in all.

Any parse failure (struct.error, IndexError, ValueError, ...) becomes ModelFormatError
naming the part of the file being read. Unknown builtin codes are kept (as
"UNKNOWN_BUILTIN_<code>") and reported by the interpreter as unsupported ops.
"""

from __future__ import annotations


import os
import struct
from dataclasses import replace
from types import MappingProxyType
from typing import Any, Mapping, NamedTuple

import numpy as np

from ...schema import layout, ops as schema_ops
from . import flatbuf
from .. import strings
from edgelite.errors import ModelFormatError
from ..memory import gc_paused
from edgelite.fileio import read_regular
from edgelite.names import quoted
from .model_objects import (DimensionMetadata, Model, Operator, Quantization, SignatureDef,
                            Sparsity, Subgraph, Tensor, check_execution_order, num_elements)
from .sparsity import dense_budget, densify

FILE_IDENTIFIER = b"TFL3"
SCHEMA_VERSION = 3  # TFLITE_SCHEMA_VERSION; TFLite refuses other versions
MIN_FILE_SIZE = 8  # root offset + file identifier
MAX_TENSOR_BYTES = 2**31  # no single tensor may need more (a safety limit, like 2 GiB)
# numpy arrays have at most 64 dimensions (NPY_MAXDIMS; 32 before numpy 2.0)
MAX_RANK = 64 if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else 32

__all__ = ["load_model", "read_model_file", "Model", "Subgraph", "Tensor", "Operator",
           "Quantization", "SignatureDef", "MAX_TENSOR_BYTES", "MAX_RANK"]


# --------------------------------------------------------------------------- helpers

# Field slots (schema field order, a union takes two; see flatbuf.py), per table.
MODEL_VERSION, MODEL_OPCODES, MODEL_SUBGRAPHS, MODEL_DESCRIPTION, MODEL_BUFFERS = 0, 1, 2, 3, 4
MODEL_METADATA, MODEL_SIGNATURES = 6, 7
STRING_TYPE = schema_ops.TensorType.STRING
SUBGRAPH_TENSORS, SUBGRAPH_INPUTS, SUBGRAPH_OUTPUTS, SUBGRAPH_OPERATORS, SUBGRAPH_NAME = range(5)
TENSOR_SHAPE, TENSOR_TYPE, TENSOR_BUFFER, TENSOR_NAME, TENSOR_QUANTIZATION = range(5)
TENSOR_IS_VARIABLE, TENSOR_SPARSITY, TENSOR_SHAPE_SIGNATURE, TENSOR_EXTERNAL_BUFFER = 5, 6, 7, 10
OPERATOR_OPCODE, OPERATOR_INPUTS, OPERATOR_OUTPUTS = 0, 1, 2
OPERATOR_OPTIONS_TYPE, OPERATOR_OPTIONS, OPERATOR_CUSTOM_OPTIONS = 3, 4, 5
OPERATOR_INTERMEDIATES, OPERATOR_OPTIONS2_TYPE, OPERATOR_OPTIONS2 = 8, 11, 12
BUFFER_DATA, BUFFER_OFFSET, BUFFER_SIZE = 0, 1, 2
OPCODE_DEPRECATED_CODE, OPCODE_CUSTOM_CODE, OPCODE_VERSION, OPCODE_CODE = 0, 1, 2, 3
QUANT_MIN, QUANT_MAX, QUANT_SCALE, QUANT_ZERO_POINT, QUANT_DETAILS_TYPE = range(5)
QUANT_DIMENSION = 6
SIGNATURE_INPUTS, SIGNATURE_OUTPUTS, SIGNATURE_KEY, SIGNATURE_SUBGRAPH = 0, 1, 2, 4
TENSOR_MAP_NAME, TENSOR_MAP_INDEX = 0, 1
METADATA_NAME, METADATA_BUFFER = 0, 1
SPARSITY_TRAVERSAL_ORDER, SPARSITY_BLOCK_MAP, SPARSITY_DIM_METADATA = 0, 1, 2
DIM_FORMAT, DIM_DENSE_SIZE, DIM_SEGMENTS_TYPE, DIM_SEGMENTS = 0, 1, 2, 3
DIM_INDICES_TYPE, DIM_INDICES, INDEX_VECTOR_VALUES = 4, 5, 0
# SparseIndexVector union: Int32Vector, Uint16Vector, Uint8Vector -> element type
INDEX_VECTOR_DTYPE = {1: np.dtype("<i4"), 2: np.dtype("<u2"), 3: np.dtype("u1")}


class _Reader(flatbuf.Reader):
    """Bounds every count against the file and charges the walk against a budget."""

    def __init__(self, data: bytes):
        super().__init__(data)
        # Each table slot / vector element read costs at least its bytes in a well-formed
        # file; 4x the file size plus slack leaves room for shared strings and vtables.
        self.budget = 4 * self.size + 65536
        self.where = "the file header"
        self.options: dict[tuple[str, int], Mapping[str, Any]] = {}  # by table position
        self.dense_left = dense_budget(self.size)  # bytes sparse constants may expand to

    def charge(self, nbytes: int) -> None:
        self.budget -= max(int(nbytes), 1)
        if self.budget < 0:
            raise ModelFormatError(
                f"malformed .tflite file: {self.where} refers to more data than the "
                f"{self.size}-byte file can hold (shared or overlapping tables?)"
            )

    def counted(self, table, slot: int, elem_size: int) -> tuple[int, int]:
        """A vector's (start, count), charged (flatbuf.Reader checked it is in the file)."""
        start, n = self.vector(table, slot, elem_size)
        self.budget -= n * elem_size or 1
        if self.budget < 0:
            self.charge(0)  # raises
        return start, n

    def int_vector(self, table, slot: int) -> tuple[int, ...]:
        start, n = self.vector(table, slot, 4)  # (counted(), inlined: the hot path)
        self.budget -= 4 * n or 1
        if self.budget < 0:
            self.charge(0)  # raises
        return self.ints(start, n) if n else ()

    def floats(self, table, slot: int, dtype) -> np.ndarray | None:
        dtype = np.dtype(dtype)
        start, n = self.counted(table, slot, dtype.itemsize)
        return None if n == 0 else self.array(start, n, dtype).copy()

    def table_vector(self, table, slot: int) -> list[int]:
        return self.tables(*self.counted(table, slot, 4))

    def text(self, table, slot: int) -> str:
        start, n = self.counted(table, slot, 1)
        return self.data[start:start + n].decode("utf-8", errors="replace") if n else ""


# --------------------------------------------------------------------------- readers


def _read_buffers(r: _Reader, root) -> list[np.ndarray | None]:
    buffers: list[np.ndarray | None] = []
    for i, pos in enumerate(r.table_vector(root, MODEL_BUFFERS)):
        r.where = f"buffer {i}"
        b = r.table(pos)
        r.charge(8)
        offset = r.scalar(b, BUFFER_OFFSET, "u64")
        size = r.scalar(b, BUFFER_SIZE, "u64")
        if offset > 1:
            # Data stored after the flatbuffer (files over 2 GB use this layout).
            if offset + size > r.size:
                raise ModelFormatError(
                    f"malformed .tflite file: buffer {i} claims bytes {offset}..{offset + size}"
                    f" of a {r.size}-byte file"
                )
            buffers.append(np.frombuffer(r.data, np.uint8, count=size, offset=offset))
            continue
        start, n = r.counted(b, BUFFER_DATA, 1)
        # a read-only view of the file's bytes, no copy
        buffers.append(r.array(start, n, np.uint8) if n else None)
    return buffers


def _read_quantization(r: _Reader, q) -> Quantization | None:
    if q is None:
        return None
    r.charge(8)
    scale = r.floats(q, QUANT_SCALE, np.float32)
    zero_point = r.floats(q, QUANT_ZERO_POINT, np.int64)
    qmin = r.floats(q, QUANT_MIN, np.float32)
    qmax = r.floats(q, QUANT_MAX, np.float32)
    if r.scalar(q, QUANT_DETAILS_TYPE, "u8") != 0:
        raise ModelFormatError(f"{r.where}: custom quantization details are not supported")
    if scale is None and zero_point is None and qmin is None and qmax is None:
        return None
    scale = np.zeros(0, np.float32) if scale is None else scale.astype(np.float32)
    zero_point = np.zeros(0, np.int64) if zero_point is None else zero_point.astype(np.int64)
    if len(zero_point) and len(zero_point) != len(scale):
        raise ModelFormatError(
            f"{r.where}: {len(scale)} quantization scales but {len(zero_point)} zero points"
        )
    for arr in (scale, zero_point, qmin, qmax):
        if arr is not None:
            arr.setflags(write=False)
    return Quantization(scale, zero_point, r.scalar(q, QUANT_DIMENSION, "i32"), qmin, qmax)


class _TensorLabel(NamedTuple):
    """"tensor 3 'name'" in a message, formatted only when a message is made."""

    index: int
    name: str

    def __str__(self) -> str:
        return f"tensor {self.index} {quoted(self.name)}"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def _read_tensor(r: _Reader, t, index: int, buffers, sg_index: int) -> Tensor:
    r.charge(16)
    name = r.text(t, TENSOR_NAME)
    shape = r.int_vector(t, TENSOR_SHAPE)
    signature = r.int_vector(t, TENSOR_SHAPE_SIGNATURE) or shape
    type_code = r.scalar(t, TENSOR_TYPE, "i8")
    dtype = schema_ops.TENSOR_TYPE_TO_NUMPY.get(type_code)
    where = f"subgraph {sg_index}"
    label = _TensorLabel(index, name)
    if type_code not in schema_ops.TENSOR_TYPE_NAME:
        raise ModelFormatError(f"{where}: {label} has unknown type code {type_code}")
    if len(shape) > MAX_RANK or len(signature) > MAX_RANK:
        raise ModelFormatError(
            f"{where}: {label} has {max(len(shape), len(signature))} dimensions, more than "
            f"the {MAX_RANK} numpy supports"
        )
    if min(shape + signature, default=0) < -1:
        raise ModelFormatError(f"{where}: {label} has a negative dimension {list(shape)}")
    if r.scalar(t, TENSOR_EXTERNAL_BUFFER, "u32") != 0:
        raise ModelFormatError(f"{where}: {label} uses an external buffer (not supported)")
    itemsize = dtype.itemsize if dtype is not None and dtype.kind != "O" else 1
    nbytes = num_elements(1 if d == -1 else d for d in shape) * itemsize
    if nbytes > MAX_TENSOR_BYTES:
        raise ModelFormatError(
            f"{where}: {label} has shape {list(shape)} ({nbytes} bytes), over the "
            f"{MAX_TENSOR_BYTES}-byte limit per tensor"
        )
    buffer = r.scalar(t, TENSOR_BUFFER, "u32")
    if not 0 <= buffer < len(buffers):
        raise ModelFormatError(
            f"{where}: {label} refers to buffer {buffer}, the file has {len(buffers)}"
        )
    is_sparse = r.has(t, TENSOR_SPARSITY)
    raw = buffers[buffer]
    data = None
    sparsity = None
    if is_sparse:
        sparsity = _read_sparsity(r, r.subtable(t, TENSOR_SPARSITY), f"{where}: {label}")
        if dtype is not None and dtype.kind != "O":
            data = _densified(r, raw, dtype, shape, sparsity, f"{where}: {label}", nbytes)
            stored = raw.view(dtype.newbyteorder("<")) if raw is not None and \
                raw.nbytes % dtype.itemsize == 0 else np.zeros(0, dtype)
            stored.setflags(write=False)
            sparsity = replace(sparsity, values=stored)
    if raw is not None and not is_sparse and dtype is not None and dtype.kind != "O":
        if -1 in shape:
            raise ModelFormatError(f"{where}: constant {label} has an unknown dimension")
        if raw.nbytes != nbytes:
            raise ModelFormatError(
                f"{where}: constant {label} of shape {list(shape)} {dtype.name} needs "
                f"{nbytes} bytes, its buffer {buffer} holds {raw.nbytes}"
            )
        data = raw.view(dtype.newbyteorder("<")).reshape(shape)
    elif raw is None and buffer != 0 and 0 in shape and dtype is not None and dtype.kind != "O":
        data = np.zeros(shape, dtype)  # an empty constant needs no bytes
    elif raw is not None and not is_sparse and type_code == STRING_TYPE:
        if -1 in shape:
            raise ModelFormatError(f"{where}: constant {label} has an unknown dimension")
        r.charge(raw.nbytes)
        data = strings.decode(raw, shape, f"{where}: constant {label}")
    if data is not None:
        data.setflags(write=False)
    quantization = _read_quantization(r, r.subtable(t, TENSOR_QUANTIZATION))
    return Tensor(index, name, type_code, dtype, shape, signature, buffer, data,
                  quantization, bool(r.scalar(t, TENSOR_IS_VARIABLE, "u8")), is_sparse,
                  sparsity)


def _index_vector(r: _Reader, dm, type_slot: int, slot: int) -> np.ndarray | None:
    """A SparseIndexVector union's values as int64 (None when absent or of no known type)."""
    dtype = INDEX_VECTOR_DTYPE.get(r.scalar(dm, type_slot, "u8"))
    table = r.subtable(dm, slot)
    if dtype is None or table is None:
        return None
    start, n = r.counted(table, INDEX_VECTOR_VALUES, dtype.itemsize)
    values = r.array(start, n, dtype).astype(np.int64) if n else np.zeros(0, np.int64)
    values.setflags(write=False)
    return values


def _read_sparsity(r: _Reader, sp, where: str) -> Sparsity:
    """SparsityParameters, read as stored (sparsity.densify checks them against the shape)."""
    r.charge(16)
    dims = []
    for pos in r.table_vector(sp, SPARSITY_DIM_METADATA):
        dm = r.table(pos)
        r.charge(16)
        dim_format = r.scalar(dm, DIM_FORMAT, "i8")
        if dim_format not in (0, 1):  # DimensionType DENSE, SPARSE_CSR
            raise ModelFormatError(f"{where}: sparse encoding: unknown dimension format "
                                   f"{dim_format}")
        dims.append(DimensionMetadata(
            dim_format == 1, r.scalar(dm, DIM_DENSE_SIZE, "i32"),
            _index_vector(r, dm, DIM_SEGMENTS_TYPE, DIM_SEGMENTS),
            _index_vector(r, dm, DIM_INDICES_TYPE, DIM_INDICES)))
    return Sparsity(r.int_vector(sp, SPARSITY_TRAVERSAL_ORDER),
                    r.int_vector(sp, SPARSITY_BLOCK_MAP), tuple(dims))


def _densified(r: _Reader, raw, dtype, shape, sparsity: Sparsity, where: str,
               nbytes: int) -> np.ndarray:
    """The dense value of a sparse constant (checked; charged against r.dense_left)."""
    if raw is None:  # no stored values: all zeros (densify checks the encoding agrees)
        raw = np.zeros(0, np.uint8)
    if raw.nbytes % dtype.itemsize:
        raise ModelFormatError(f"{where}: its sparse buffer holds {raw.nbytes} bytes, not a "
                               f"whole number of {dtype.name} values")
    if nbytes > r.dense_left:
        raise ModelFormatError(
            f"{where}: sparse constant of shape {list(shape)} would expand to {nbytes} "
            f"bytes, more than a {r.size}-byte file may expand to in all "
            f"({dense_budget(r.size)} bytes)")
    r.dense_left -= nbytes
    r.charge(raw.nbytes)
    return densify(raw.view(dtype.newbyteorder("<")), shape, sparsity, where)


def _read_opcodes(r: _Reader, root) -> list[tuple[str, int, str | None, int]]:
    codes = []
    for i, pos in enumerate(r.table_vector(root, MODEL_OPCODES)):
        r.where = f"operator code {i}"
        oc = r.table(pos)
        r.charge(8)
        # the larger of the two fields: old files only set the deprecated one
        code = max(r.scalar(oc, OPCODE_CODE, "i32"),
                   r.scalar(oc, OPCODE_DEPRECATED_CODE, "i8"))
        name = schema_ops.BUILTIN_NAME.get(code, f"UNKNOWN_BUILTIN_{code}")
        custom = r.text(oc, OPCODE_CUSTOM_CODE) if name == "CUSTOM" else None
        codes.append((name, code, custom, r.scalar(oc, OPCODE_VERSION, "i32", 1)))
    return codes


_EMPTY_OPTIONS: Mapping[str, Any] = MappingProxyType({})
# (type slot, value slot, union value -> options table name) of Operator's two unions
_OPTION_UNIONS = ((OPERATOR_OPTIONS_TYPE, OPERATOR_OPTIONS, layout.UNIONS["BuiltinOptions"]),
                  (OPERATOR_OPTIONS2_TYPE, OPERATOR_OPTIONS2, layout.UNIONS["BuiltinOptions2"]))
_UNPACK = {}  # struct code -> (unpack_from, width)


def _option_field(r: _Reader, table, slot: int, kind: str, default: Any) -> Any:
    """One options field (schema/layout.py: a struct code, "str" or "[" + a code), as
    the flatc object API gives it, frozen (vectors as tuples, absent ones None)."""
    if kind == "str":
        return r.string(table, slot)
    if kind[0] == "[":
        size = struct.calcsize(kind[1])
        start, n = r.counted(table, slot, size)
        return None if start == 0 else r.ints(start, n, kind[1]) if n else ()
    pos, slots = table
    off = slots[slot] if slot < len(slots) else 0
    if not off:
        return default
    unpack = _UNPACK.get(kind)
    if unpack is None:
        unpack = _UNPACK[kind] = (struct.Struct("<" + kind).unpack_from,
                                  struct.calcsize(kind))
    if pos + off + unpack[1] > r.size:
        raise ModelFormatError(f"{r.where}: an options field lies outside the file")
    return unpack[0](r.data, pos + off)[0]


def _read_options(r: _Reader, op) -> Mapping[str, Any]:
    for type_slot, slot, union in _OPTION_UNIONS:
        kind = r.scalar(op, type_slot, "u8")
        name = union.get(kind) if kind else None
        if name is None or not r.has(op, slot):
            continue
        table = r.subtable(op, slot)
        r.charge(32)
        if (name, table[0]) in r.options:  # a table several operators share
            return r.options[name, table[0]]
        options = r.options[name, table[0]] = MappingProxyType(
            {key: _option_field(r, table, field_slot, field_kind, default)
             for key, field_slot, field_kind, default in layout.TABLES[name]})
        return options
    return _EMPTY_OPTIONS


def _read_operator(r: _Reader, op, index: int, opcodes, num_tensors: int) -> Operator:
    r.charge(16)
    opcode_index = r.scalar(op, OPERATOR_OPCODE, "u32")
    if not 0 <= opcode_index < len(opcodes):
        raise ModelFormatError(
            f"{r.where}: opcode index {opcode_index} is out of range ({len(opcodes)} codes)"
        )
    name, code, custom, version = opcodes[opcode_index]
    inputs = r.int_vector(op, OPERATOR_INPUTS)
    outputs = r.int_vector(op, OPERATOR_OUTPUTS)
    intermediates = r.int_vector(op, OPERATOR_INTERMEDIATES)
    for role, indices in (("input", inputs), ("output", outputs),
                          ("intermediate", intermediates)):
        if indices and not (-1 <= min(indices) and max(indices) < num_tensors):
            t = next(t for t in indices if not -1 <= t < num_tensors)
            raise ModelFormatError(
                f"{r.where} ({name}): {role} tensor index {t} is out of range "
                f"({num_tensors} tensors)"
            )
    custom_options = None
    start, n = r.counted(op, OPERATOR_CUSTOM_OPTIONS, 1)
    if n > 0:
        custom_options = r.data[start:start + n]
    return Operator(index, name, code, custom, version, inputs, outputs, intermediates,
                    _read_options(r, op), custom_options)


def _read_subgraph(r: _Reader, pos: int, index: int, opcodes, buffers) -> Subgraph:
    r.where = f"subgraph {index}"
    sg = r.table(pos)
    r.charge(16)
    name = r.text(sg, SUBGRAPH_NAME)
    tensors = []
    for i, t_pos in enumerate(r.table_vector(sg, SUBGRAPH_TENSORS)):
        r.where = f"subgraph {index} tensor {i}"
        tensors.append(_read_tensor(r, r.table(t_pos), i, buffers, index))
    n_tensors = len(tensors)
    r.where = f"subgraph {index}"
    inputs = r.int_vector(sg, SUBGRAPH_INPUTS)
    outputs = r.int_vector(sg, SUBGRAPH_OUTPUTS)
    for role, indices in (("input", inputs), ("output", outputs)):
        for t in indices:
            if not 0 <= t < n_tensors:
                raise ModelFormatError(
                    f"subgraph {index}: {role} tensor index {t} is out of range "
                    f"({n_tensors} tensors)"
                )
    operators = []
    for i, op_pos in enumerate(r.table_vector(sg, SUBGRAPH_OPERATORS)):
        r.where = f"subgraph {index} operator {i}"
        operators.append(_read_operator(r, r.table(op_pos), i, opcodes, n_tensors))
    tensors = _written_empties_are_activations(tensors, inputs, operators)
    subgraph = Subgraph(index, name, tuple(tensors), tuple(operators), inputs, outputs)
    check_execution_order(subgraph)
    return subgraph


def _written_empties_are_activations(tensors: list[Tensor], inputs, operators) -> list[Tensor]:
    """A zero-element tensor on a buffer of its own reads as an empty constant (it needs no
    bytes) -- unless an operator writes it or it is a subgraph input: TF's converter gives
    every tensor a buffer, and a SPLIT_V piece of size 0 is an activation. LiteRT makes
    no tensor without bytes read-only (interpreter_builder.cc, GetBuffer: only a buffer
    with data sets kTfLiteMmapRo)."""
    written = set(inputs).union(t for op in operators for t in op.outputs if t >= 0)
    return [replace(t, data=None) if t.index in written and t.data is not None
            and t.data.size == 0 and not t.is_sparse else t for t in tensors]


def _read_signatures(r: _Reader, root, subgraphs) -> tuple[SignatureDef, ...]:
    signatures = []
    for i, pos in enumerate(r.table_vector(root, MODEL_SIGNATURES)):
        r.where = f"signature def {i}"
        s = r.table(pos)
        r.charge(16)
        key = r.text(s, SIGNATURE_KEY)
        sg_index = r.scalar(s, SIGNATURE_SUBGRAPH, "u32")
        if not 0 <= sg_index < len(subgraphs):
            raise ModelFormatError(
                f"signature {quoted(key)} refers to subgraph {sg_index}; the file has "
                f"{len(subgraphs)}"
            )
        maps = []
        for slot in (SIGNATURE_INPUTS, SIGNATURE_OUTPUTS):
            entries = {}
            for m_pos in r.table_vector(s, slot):
                m = r.table(m_pos)
                r.charge(8)
                t = r.scalar(m, TENSOR_MAP_INDEX, "u32")
                if not 0 <= t < len(subgraphs[sg_index].tensors):
                    raise ModelFormatError(
                        f"signature {quoted(key)} names tensor index {t}, out of range for "
                        f"subgraph {sg_index}"
                    )
                entries[r.text(m, TENSOR_MAP_NAME)] = t
            maps.append(MappingProxyType(entries))
        signatures.append(SignatureDef(key, sg_index, maps[0], maps[1]))
    return tuple(signatures)


def _read_metadata(r: _Reader, root, buffers) -> Mapping[str, bytes]:
    entries = {}
    for i, pos in enumerate(r.table_vector(root, MODEL_METADATA)):
        r.where = f"metadata {i}"
        m = r.table(pos)
        r.charge(8)
        b = r.scalar(m, METADATA_BUFFER, "u32")
        if not 0 <= b < len(buffers):
            raise ModelFormatError(f"metadata {i} refers to buffer {b}, out of range")
        entries[r.text(m, METADATA_NAME)] = b"" if buffers[b] is None else buffers[b].tobytes()
    return MappingProxyType(entries)


def _parse(r: _Reader) -> Model:
    root = r.root()
    version = r.scalar(root, MODEL_VERSION, "u32")
    if version != SCHEMA_VERSION:
        raise ModelFormatError(
            f"not a TFLite model: schema version {version}, expected {SCHEMA_VERSION}"
        )
    description = r.text(root, MODEL_DESCRIPTION)
    buffers = _read_buffers(r, root)
    opcodes = _read_opcodes(r, root)
    subgraph_positions = r.table_vector(root, MODEL_SUBGRAPHS)
    if not subgraph_positions:
        raise ModelFormatError("the model has no subgraphs")
    subgraphs = tuple(_read_subgraph(r, pos, i, opcodes, buffers)
                      for i, pos in enumerate(subgraph_positions))
    signatures = _read_signatures(r, root, subgraphs)
    metadata = _read_metadata(r, root, buffers)
    has_id = r.data[4:8] == FILE_IDENTIFIER
    return Model(version, description, subgraphs, signatures, metadata, has_id)


def _as_bytes(data) -> bytes:
    """The bytes of a bytes-like ``data`` (bytes, bytearray, memoryview, numpy uint8...)."""
    if isinstance(data, bytes):
        return data
    if isinstance(data, str):
        raise ModelFormatError(
            "model content is a str, not bytes: pass the .tflite file's bytes, or its path "
            "as model_path"
        )
    try:
        return memoryview(data).cast("B").tobytes()
    except (TypeError, ValueError) as exc:
        raise ModelFormatError(
            f"model content must be bytes-like (the .tflite file's bytes), got "
            f"{type(data).__name__} ({exc})"
        ) from None


def read_model_file(path) -> bytes:
    """The bytes of the .tflite file at ``path``; ModelFormatError naming the path when it
    is not a readable regular file (a directory, a device or pipe that might never end,
    a missing or unreadable file): fileio.py."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise ModelFormatError(f"model_path must be a path (str or os.PathLike), got "
                               f"{type(path).__name__}")
    return read_regular(path, f"model {quoted(os.fsdecode(path))}", ModelFormatError)


def load_model(data: bytes) -> Model:
    """Parse and validate .tflite bytes (raises ModelFormatError on any defect)."""
    data = _as_bytes(data)
    if len(data) < MIN_FILE_SIZE:
        raise ModelFormatError(
            f"not a TFLite model: the file has {len(data)} bytes, a .tflite has at least "
            f"{MIN_FILE_SIZE}"
        )
    r = _Reader(data)
    has_id = data[4:8] == FILE_IDENTIFIER
    hint = "" if has_id else f" (no 'TFL3' file identifier; bytes 4..8 are {data[4:8]!r})"
    try:
        with gc_paused():
            return _parse(r)
    except ModelFormatError as exc:
        if has_id:
            raise
        raise ModelFormatError(
            f"not a TFLite model: no 'TFL3' file identifier (bytes 4..8 are "
            f"{data[4:8]!r}) and it does not parse as one ({exc})"
        ) from None
    except flatbuf.FlatbufferError as exc:  # an offset or a length points outside the file
        raise ModelFormatError(
            f"malformed or truncated .tflite file{hint}: {r.where}: {exc}"
        ) from None
    except Exception as exc:  # anything else a garbage file makes the reader trip on
        kind = type(exc).__name__
        if type(exc).__module__ not in ("builtins", "__main__"):
            kind = f"{type(exc).__module__}.{kind}"
        raise ModelFormatError(
            f"malformed or truncated .tflite file{hint}: failed while reading {r.where}: "
            f"{kind}: {exc}"
        ) from None
