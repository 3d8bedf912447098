"""Read and validate a .tflite file into plain frozen objects.

``load_model(data)`` walks the flatbuffer once with the generated accessors and returns
a ``Model`` made of frozen dataclasses, tuples and read-only numpy views of the file's
bytes -- no flatbuffer object leaks out. Everything is checked before use, because a
.tflite file is untrusted input:

* size, file identifier ("TFL3"; a file without it is accepted only if it parses, as
  TFLite does) and schema version 3;
* every count read from the file is bounded by the file size, and the total work of the
  walk is bounded by a budget proportional to the file size, so a few crafted bytes can
  neither hang the reader nor make it allocate much;
* every index (opcode, tensor, buffer, subgraph) is in range, every buffer (inline or at
  an external offset) lies inside the file, constant data holds exactly
  elements * itemsize bytes, dimensions are >= -1 and no tensor exceeds
  MAX_TENSOR_BYTES;
* each subgraph reads only constants, its inputs, or tensors produced by an earlier op,
  and each tensor is produced at most once (which also rules out cycles).

Any parse failure (struct.error, IndexError, ValueError, ...) becomes ModelFormatError
naming the part of the file being read. Unknown builtin codes are kept (as
"UNKNOWN_BUILTIN_<code>") and reported by the interpreter as unsupported ops.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping

import numpy as np

from ..schema import ops as schema_ops
from ..schema import generated_tflite as tfl
from .errors import ModelFormatError
from .model_objects import (
    Model,
    Operator,
    Quantization,
    SignatureDef,
    Subgraph,
    Tensor,
    check_execution_order,
)

FILE_IDENTIFIER = b"TFL3"
SCHEMA_VERSION = 3  # TFLITE_SCHEMA_VERSION; TFLite refuses other versions
MIN_FILE_SIZE = 8  # root offset + file identifier
MAX_TENSOR_BYTES = 2**31  # no single tensor may need more (a safety limit, like 2 GiB)

__all__ = ["load_model", "Model", "Subgraph", "Tensor", "Operator", "Quantization",
           "SignatureDef", "MAX_TENSOR_BYTES"]


# --------------------------------------------------------------------------- helpers


class _Reader:
    """Bounds every count against the file and charges the walk against a budget."""

    def __init__(self, data: bytes):
        self.data = data
        self.size = len(data)
        # Each table slot / vector element read costs at least its bytes in a well-formed
        # file; 4x the file size plus slack leaves room for shared strings and vtables.
        self.budget = 4 * self.size + 65536
        self.where = "the file header"

    def charge(self, nbytes: int) -> None:
        self.budget -= max(int(nbytes), 1)
        if self.budget < 0:
            raise ModelFormatError(
                f"malformed .tflite file: {self.where} refers to more data than the "
                f"{self.size}-byte file can hold (shared or overlapping tables?)"
            )

    def count(self, n: int, elem_size: int, what: str) -> int:
        n = int(n)
        if n < 0 or n * elem_size > self.size:
            raise ModelFormatError(
                f"malformed .tflite file: {self.where} claims {n} {what}, more than the "
                f"{self.size}-byte file can hold"
            )
        self.charge(n * elem_size)
        return n

    def ints(self, length: int, as_numpy, what: str) -> tuple[int, ...]:
        n = self.count(length, 4, what)
        if n == 0:
            return ()
        return tuple(int(v) for v in as_numpy())

    def floats(self, length: int, as_numpy, elem: int, what: str) -> np.ndarray | None:
        n = self.count(length, elem, what)
        return None if n == 0 else np.array(as_numpy())


def _text(raw: bytes | None) -> str:
    return "" if raw is None else bytes(raw).decode("utf-8", errors="replace")


def _freeze(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


# --------------------------------------------------------------------------- readers


def _read_buffers(r: _Reader, fb_model) -> list[np.ndarray | None]:
    n = r.count(fb_model.BuffersLength(), 4, "buffers")
    buffers: list[np.ndarray | None] = []
    for i in range(n):
        r.where = f"buffer {i}"
        b = fb_model.Buffers(i)
        r.charge(8)
        offset, size = int(b.Offset()), int(b.Size())
        if offset > 1:
            # Data stored after the flatbuffer (files over 2 GB use this layout).
            if offset + size > r.size:
                raise ModelFormatError(
                    f"malformed .tflite file: buffer {i} claims bytes {offset}..{offset + size}"
                    f" of a {r.size}-byte file"
                )
            buffers.append(np.frombuffer(r.data, np.uint8, count=size, offset=offset))
        elif not b.DataIsNone() and b.DataLength() > 0:
            r.count(b.DataLength(), 1, "data bytes")
            buffers.append(b.DataAsNumpy())  # np.frombuffer view: bounds-checked, no copy
        else:
            buffers.append(None)
    return buffers


def _read_quantization(r: _Reader, q) -> Quantization | None:
    if q is None:
        return None
    r.charge(8)
    scale = r.floats(q.ScaleLength(), q.ScaleAsNumpy, 4, "scales")
    zero_point = r.floats(q.ZeroPointLength(), q.ZeroPointAsNumpy, 8, "zero points")
    qmin = r.floats(q.MinLength(), q.MinAsNumpy, 4, "min values")
    qmax = r.floats(q.MaxLength(), q.MaxAsNumpy, 4, "max values")
    if q.DetailsType() != 0:
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
    return Quantization(scale, zero_point, int(q.QuantizedDimension()), qmin, qmax)


def _read_tensor(r: _Reader, fb_t, index: int, buffers, sg_index: int) -> Tensor:
    r.charge(16)
    name = _text(fb_t.Name())
    r.charge(len(name))
    shape = r.ints(fb_t.ShapeLength(), fb_t.ShapeAsNumpy, "dimensions")
    signature = r.ints(fb_t.ShapeSignatureLength(), fb_t.ShapeSignatureAsNumpy, "dimensions")
    signature = signature or shape
    type_code = int(fb_t.Type())
    dtype = schema_ops.TENSOR_TYPE_TO_NUMPY.get(type_code)
    label = f"tensor {index} '{name}'"
    where = f"subgraph {sg_index}"
    if type_code not in schema_ops.TENSOR_TYPE_NAME:
        raise ModelFormatError(f"{where}: {label} has unknown type code {type_code}")
    if any(d < -1 for d in shape + signature):
        raise ModelFormatError(f"{where}: {label} has a negative dimension {list(shape)}")
    if fb_t.ExternalBuffer() != 0:
        raise ModelFormatError(f"{where}: {label} uses an external buffer (not supported)")
    elements = 1
    for d in shape:
        elements *= max(d, 1)
    itemsize = dtype.itemsize if dtype is not None and dtype.kind != "O" else 1
    if elements * itemsize > MAX_TENSOR_BYTES:
        raise ModelFormatError(
            f"{where}: {label} has shape {list(shape)} ({elements * itemsize} bytes), over "
            f"the {MAX_TENSOR_BYTES}-byte limit per tensor"
        )
    buffer = int(fb_t.Buffer())
    if not 0 <= buffer < len(buffers):
        raise ModelFormatError(
            f"{where}: {label} refers to buffer {buffer}, the file has {len(buffers)}"
        )
    is_sparse = fb_t.Sparsity() is not None
    raw = buffers[buffer]
    data = None
    if raw is not None and not is_sparse and dtype is not None and dtype.kind != "O":
        if -1 in shape:
            raise ModelFormatError(f"{where}: constant {label} has an unknown dimension")
        if raw.nbytes != elements * itemsize:
            raise ModelFormatError(
                f"{where}: constant {label} of shape {list(shape)} {dtype.name} needs "
                f"{elements * itemsize} bytes, its buffer {buffer} holds {raw.nbytes}"
            )
        data = raw.view(dtype.newbyteorder("<")).reshape(shape)
    elif raw is None and 0 in shape and dtype is not None and dtype.kind != "O":
        data = np.zeros(shape, dtype)  # an empty constant needs no bytes
    if data is not None:
        data.setflags(write=False)
    quantization = _read_quantization(r, fb_t.Quantization())
    return Tensor(index, name, type_code, dtype, shape, signature, buffer, data,
                  quantization, bool(fb_t.IsVariable()), is_sparse)


def _read_opcodes(r: _Reader, fb_model) -> list[tuple[str, int, str | None, int]]:
    n = r.count(fb_model.OperatorCodesLength(), 4, "operator codes")
    codes = []
    for i in range(n):
        r.where = f"operator code {i}"
        oc = fb_model.OperatorCodes(i)
        r.charge(8)
        code = schema_ops.builtin_code_of(oc)
        name = schema_ops.BUILTIN_NAME.get(code, f"UNKNOWN_BUILTIN_{code}")
        custom = _text(oc.CustomCode()) if name == "CUSTOM" else None
        codes.append((name, code, custom, int(oc.Version())))
    return codes


def _read_options(r: _Reader, fb_op) -> Mapping[str, Any]:
    for kind, creator in ((fb_op.BuiltinOptionsType(), tfl.BuiltinOptionsCreator),
                          (fb_op.BuiltinOptions2Type(), tfl.BuiltinOptions2Creator)):
        if kind:
            table = fb_op.BuiltinOptions() if creator is tfl.BuiltinOptionsCreator \
                else fb_op.BuiltinOptions2()
            obj = creator(kind, table) if table is not None else None
            if obj is not None:
                r.charge(32)
                return MappingProxyType({k: _freeze(v)
                                         for k, v in schema_ops.options_to_dict(obj).items()})
    return MappingProxyType({})


def _read_operator(r: _Reader, fb_op, index: int, opcodes, num_tensors: int) -> Operator:
    r.charge(16)
    opcode_index = int(fb_op.OpcodeIndex())
    if not 0 <= opcode_index < len(opcodes):
        raise ModelFormatError(
            f"{r.where}: opcode index {opcode_index} is out of range ({len(opcodes)} codes)"
        )
    name, code, custom, version = opcodes[opcode_index]
    inputs = r.ints(fb_op.InputsLength(), fb_op.InputsAsNumpy, "inputs")
    outputs = r.ints(fb_op.OutputsLength(), fb_op.OutputsAsNumpy, "outputs")
    intermediates = r.ints(fb_op.IntermediatesLength(), fb_op.IntermediatesAsNumpy,
                           "intermediates")
    for role, indices in (("input", inputs), ("output", outputs),
                          ("intermediate", intermediates)):
        for t in indices:
            if not -1 <= t < num_tensors:
                raise ModelFormatError(
                    f"{r.where} ({name}): {role} tensor index {t} is out of range "
                    f"({num_tensors} tensors)"
                )
    custom_options = None
    if fb_op.CustomOptionsLength() > 0:
        r.count(fb_op.CustomOptionsLength(), 1, "custom option bytes")
        custom_options = fb_op.CustomOptionsAsNumpy().tobytes()
    return Operator(index, name, code, custom, version, inputs, outputs, intermediates,
                    _read_options(r, fb_op), custom_options)


def _read_subgraph(r: _Reader, fb_sg, index: int, opcodes, buffers) -> Subgraph:
    r.where = f"subgraph {index}"
    r.charge(16)
    name = _text(fb_sg.Name())
    n_tensors = r.count(fb_sg.TensorsLength(), 4, "tensors")
    tensors = []
    for i in range(n_tensors):
        r.where = f"subgraph {index} tensor {i}"
        tensors.append(_read_tensor(r, fb_sg.Tensors(i), i, buffers, index))
    r.where = f"subgraph {index}"
    inputs = r.ints(fb_sg.InputsLength(), fb_sg.InputsAsNumpy, "inputs")
    outputs = r.ints(fb_sg.OutputsLength(), fb_sg.OutputsAsNumpy, "outputs")
    for role, indices in (("input", inputs), ("output", outputs)):
        for t in indices:
            if not 0 <= t < n_tensors:
                raise ModelFormatError(
                    f"subgraph {index}: {role} tensor index {t} is out of range "
                    f"({n_tensors} tensors)"
                )
    n_ops = r.count(fb_sg.OperatorsLength(), 4, "operators")
    operators = []
    for i in range(n_ops):
        r.where = f"subgraph {index} operator {i}"
        operators.append(_read_operator(r, fb_sg.Operators(i), i, opcodes, n_tensors))
    sg = Subgraph(index, name, tuple(tensors), tuple(operators), inputs, outputs)
    check_execution_order(sg)
    return sg


def _read_signatures(r: _Reader, fb_model, subgraphs) -> tuple[SignatureDef, ...]:
    n = r.count(fb_model.SignatureDefsLength(), 4, "signature defs")
    signatures = []
    for i in range(n):
        r.where = f"signature def {i}"
        s = fb_model.SignatureDefs(i)
        r.charge(16)
        key = _text(s.SignatureKey())
        sg_index = int(s.SubgraphIndex())
        if not 0 <= sg_index < len(subgraphs):
            raise ModelFormatError(
                f"signature '{key}' refers to subgraph {sg_index}; the file has "
                f"{len(subgraphs)}"
            )
        maps = []
        for length, get in ((s.InputsLength(), s.Inputs), (s.OutputsLength(), s.Outputs)):
            entries = {}
            for j in range(r.count(length, 4, "signature tensors")):
                m = get(j)
                r.charge(8)
                t = int(m.TensorIndex())
                if not 0 <= t < len(subgraphs[sg_index].tensors):
                    raise ModelFormatError(
                        f"signature '{key}' names tensor index {t}, out of range for "
                        f"subgraph {sg_index}"
                    )
                entries[_text(m.Name())] = t
            maps.append(MappingProxyType(entries))
        signatures.append(SignatureDef(key, sg_index, maps[0], maps[1]))
    return tuple(signatures)


def _read_metadata(r: _Reader, fb_model, buffers) -> Mapping[str, bytes]:
    entries = {}
    for i in range(r.count(fb_model.MetadataLength(), 4, "metadata entries")):
        r.where = f"metadata {i}"
        m = fb_model.Metadata(i)
        r.charge(8)
        b = int(m.Buffer())
        if not 0 <= b < len(buffers):
            raise ModelFormatError(f"metadata {i} refers to buffer {b}, out of range")
        entries[_text(m.Name())] = b"" if buffers[b] is None else buffers[b].tobytes()
    return MappingProxyType(entries)


def _parse(r: _Reader) -> Model:
    fb_model = tfl.Model.GetRootAs(r.data, 0)
    version = int(fb_model.Version())
    if version != SCHEMA_VERSION:
        raise ModelFormatError(
            f"not a TFLite model: schema version {version}, expected {SCHEMA_VERSION}"
        )
    description = _text(fb_model.Description())
    buffers = _read_buffers(r, fb_model)
    opcodes = _read_opcodes(r, fb_model)
    n_subgraphs = r.count(fb_model.SubgraphsLength(), 4, "subgraphs")
    if n_subgraphs == 0:
        raise ModelFormatError("the model has no subgraphs")
    subgraphs = tuple(_read_subgraph(r, fb_model.Subgraphs(i), i, opcodes, buffers)
                      for i in range(n_subgraphs))
    signatures = _read_signatures(r, fb_model, subgraphs)
    metadata = _read_metadata(r, fb_model, buffers)
    has_id = r.data[4:8] == FILE_IDENTIFIER
    return Model(version, description, subgraphs, signatures, metadata, has_id)


def load_model(data: bytes) -> Model:
    """Parse and validate .tflite bytes (raises ModelFormatError on any defect)."""
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise TypeError(f"load_model expects bytes, got {type(data).__name__}")
    if len(data) < MIN_FILE_SIZE:
        raise ModelFormatError(
            f"not a TFLite model: the file has {len(data)} bytes, a .tflite has at least "
            f"{MIN_FILE_SIZE}"
        )
    r = _Reader(data)
    has_id = data[4:8] == FILE_IDENTIFIER
    try:
        return _parse(r)
    except ModelFormatError as exc:
        if has_id:
            raise
        raise ModelFormatError(
            f"not a TFLite model: no 'TFL3' file identifier (bytes 4..8 are "
            f"{data[4:8]!r}) and it does not parse as one ({exc})"
        ) from None
    except Exception as exc:  # any flatbuffers read past the end / garbage offset
        hint = "" if has_id else f" (no 'TFL3' file identifier; bytes 4..8 are {data[4:8]!r})"
        kind = type(exc).__name__
        if type(exc).__module__ not in ("builtins", "__main__"):
            kind = f"{type(exc).__module__}.{kind}"
        raise ModelFormatError(
            f"malformed or truncated .tflite file{hint}: failed while reading {r.where}: "
            f"{kind}: {exc}"
        ) from None
