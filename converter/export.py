"""IR Graph -> .tflite bytes (TFLite schema v3, file identifier "TFL3").

Layout follows what TFLite's own converter writes, for interop: buffers[0] is the empty
sentinel every non-constant tensor points at, constants with equal bytes share one buffer
(shared_buffers.py), operator codes carry deprecated_builtin_code = min(code, 127) next to
the full builtin_code, and the subgraph gets a "serving_default" signature so
`get_signature_runner()` works in LiteRT and here.

Operator versions are TensorFlow's: each operator's version comes from its signature (operand
types, shapes, quantization, options) by its op's rule (``OpDef.version``, op_version.cc), and,
as TF's writer does (flatbuffer_export.cc, one OperatorCode per op; UpdateOpVersion), the op
code of an op carries the highest version of the operators that use it. CUSTOM ops are 1.
"""

from __future__ import annotations

import struct

import numpy as np

from flatbuffers.builder import Builder, BuilderSizeError

from edgelite.errors import EdgeliteError, ModelFormatError, ShapeError, UnsupportedOpError
from ..interpreter.kernels import OPS
from ..interpreter.kernels.versions import (OMITTED, OpSignature, TensorSig, tensor_sig,
                                             with_defaults)
from edgelite.names import quoted
from ..schema import ops as schema_ops
from ..schema import generated_tflite as tfl
from ..schema import writer
from ..schema.model_io import SCHEMA_VERSION, pack_model
from .ir import PSEUDO_OPS, Graph, Tensor, all_graphs
from .shared_buffers import share_identical_buffers
from .tf_tensor import INT32_MAX, num_elements

SIGNATURE_KEY = "serving_default"
# flatbuffers' Builder cannot grow past 2 GiB (32-bit offsets), so neither can a .tflite.
MAX_MODEL_BYTES = Builder.MAX_BUFFER_SIZE
BUFFER_ALIGNMENT = 16   # pack_model aligns every constant buffer to 16 bytes
TABLE_BYTES = 16        # at least a vtable offset and a few fields per tensor / operator


# The option fields naming the subgraphs a control-flow op calls, by role (op.subgraphs keys).
SUBGRAPH_OPTIONS = {n: dict(op.subgraphs) for n, op in OPS.items() if op.subgraphs}


def export_tflite(graph: Graph | list[Graph], description: str = "edgelite") -> bytes:
    """Serialise `graph` (after passes: only TFLite builtin / CUSTOM ops) to .tflite bytes.

    `graph` is subgraph 0; the graphs its WHILE / IF ops call (op.subgraphs) follow, numbered
    callers first (ir.all_graphs), and each op's options name their indices. A list of
    graphs (one per SavedModel signature) makes a multi-signature model as TF's converter
    writes it: the entry graphs first, in order, each with its signature, then the graphs
    they call."""
    entries = graph if isinstance(graph, list) else [graph]
    graphs = _numbered(entries)
    leftover = sorted({op.type for g in graphs for op in g.ops if op.type in PSEUDO_OPS})
    if leftover:
        raise EdgeliteError(f"internal: converter-only ops {leftover} survived the passes")
    tensor_lists = [g.tensors() for g in graphs]
    check_model_size([t for ts in tensor_lists for t in ts], sum(len(g.ops) for g in graphs))
    numbers = {id(g): k for k, g in enumerate(graphs)}
    model = writer.ModelT()
    model.version = SCHEMA_VERSION
    model.description = description
    model.buffers = [writer.BufferT()]
    model.operatorCodes = []
    codes: dict = {}
    tables = _OptionTables()
    indices = [{id(t): i for i, t in enumerate(ts)} for ts in tensor_lists]  # id -> index
    model.subgraphs = [_subgraph(g, ts, index, model, codes, numbers, tables)
                       for g, ts, index in zip(graphs, tensor_lists, indices)]
    model.signatureDefs = [_signature(g, k, indices[k]) for k, g in enumerate(entries)]
    keys = [s.signatureKey for s in model.signatureDefs]
    if len(set(keys)) != len(keys):
        raise EdgeliteError(f"internal: signature keys {keys} repeat in one model")
    share_identical_buffers(model)

    try:
        return pack_model(model)
    except BuilderSizeError:  # the estimate below is a lower bound; this is the backstop
        raise ModelFormatError(_too_large(tensor_lists[0], "the model")) from None


def _numbered(entries: list[Graph]) -> list[Graph]:
    """The entry graphs, then every graph they call (each once, callers first)."""
    seen = {id(g) for g in entries}
    called = []
    for entry in entries:
        for g in all_graphs(entry)[1:]:
            if id(g) not in seen:
                seen.add(id(g))
                called.append(g)
    return [*entries, *called]


def _subgraph(graph: Graph, tensors: list[Tensor], index: dict, model, codes: dict,
              numbers: dict, tables: "_OptionTables"):
    """One SubGraphT of `tensors` (`index`: id -> their index); operator codes are shared by
    the model (`codes`: (type, custom) -> index). Its tensors and operators are
    writer.TensorRow / OperatorRow: a large graph's tables go from the IR to the builder
    with no object-API object per tensor or operator."""
    rows = _TensorRows(model.buffers)
    sub = writer.SubGraphT()
    sub.name = graph.name
    sub.tensors = [rows.row(t) for t in tensors]
    sub.operators = []
    for op in graph.ops:
        key = (op.type, op.custom_code)
        if key not in codes:
            codes[key] = len(model.operatorCodes)
            model.operatorCodes.append(_opcode(op.type, op.custom_code))
        inputs = [index[id(t)] if t is not None else -1 for t in op.inputs]
        outputs = [index[id(t)] for t in op.outputs]
        intermediates = _int32_bytes([index[id(t)] for t in op.intermediates]) \
            if op.intermediates else None
        options_type, table, options = 0, None, None
        if op.type != "CUSTOM":
            options = op.options
            if op.subgraphs or op.type in SUBGRAPH_OPTIONS:
                options = {**options, **_subgraph_indices(op, numbers)}
            options_type, table, options = tables.get(op.type, options)
        code = model.operatorCodes[codes[key]]
        code.version = max(code.version, _version(op.type, inputs, outputs, rows, options,
                                                  tables.versions))
        sub.operators.append(writer.OperatorRow(codes[key], _int32_bytes(inputs),
                                                _int32_bytes(outputs), options_type, table,
                                                intermediates))
    sub.inputs = [index[id(t)] for t in graph.inputs]
    sub.outputs = [index[id(t)] for t in graph.outputs]
    return sub


def _int32_bytes(values: list[int]) -> bytes:
    """Tensor indices as an int32 vector's little-endian bytes (writer.OperatorRow)."""
    packer = _INT32S.get(len(values))
    if packer is None:
        packer = _INT32S[len(values)] = struct.Struct(f"<{len(values)}i")
    return packer.pack(*values)


_INT32S: dict[int, struct.Struct] = {}   # vector length -> its struct


def _subgraph_indices(op, numbers: dict) -> dict[str, int]:
    fields = SUBGRAPH_OPTIONS.get(op.type, {})
    if set(op.subgraphs) != set(fields):
        raise EdgeliteError(f"internal: {op.type} ({quoted(op.name)}) calls subgraphs "
                            f"{sorted(op.subgraphs)}, expected {sorted(fields)}")
    return {fields[role]: numbers[id(g)] for role, g in op.subgraphs.items()}


def check_model_size(tensors: list[Tensor], n_ops: int) -> None:
    """Refuse, before building anything, a model whose flatbuffer would pass 2 GiB.

    The estimate is a lower bound of the file size: every constant's bytes plus its buffer
    alignment, every name, and a few bytes per tensor / operator table.
    """
    size = TABLE_BYTES * (len(tensors) + n_ops)
    for t in tensors:
        size += len(t.name.encode("utf-8", "replace")) + 4 * len(t.shape or ())
        if t.is_const:
            size += _nbytes(t) + BUFFER_ALIGNMENT
    if size > MAX_MODEL_BYTES:
        raise ModelFormatError(_too_large(tensors, f"the model needs at least {size} bytes, "
                                                   "which"))


def _too_large(tensors: list[Tensor], what: str) -> str:
    consts = sorted((t for t in tensors if t.is_const), key=_nbytes, reverse=True)
    largest = ", ".join(f"{quoted(t.name)} ({_nbytes(t)} bytes)" for t in consts[:3])
    return (f"{what} exceeds the 2 GiB a .tflite file can hold (flatbuffers' limit); largest "
            f"constants: {largest or 'none'}")


def _nbytes(t: Tensor) -> int:
    return num_elements(t.data.shape) * np.dtype(t.dtype).itemsize


def plain_options(options: dict) -> dict:
    """An op's options as the flatbuffer builder takes them (plain Python values)."""
    return {k: _plain(v) for k, v in options.items()}


def _plain(v):
    """Enum members and numpy scalars -> plain Python values for the flatbuffer builder."""
    if isinstance(v, (list, tuple, np.ndarray)):
        return [_plain(x) for x in v]
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    return v


class _OptionTables:
    """Each distinct (op type, options) of a model converted once: its options table (packed
    in one step, writer.scalar_table) and the options as the version rules read them. A
    large graph repeats a few kinds of op many times; `versions` caches the rules' answers
    by op type, options and operand signatures."""

    def __init__(self) -> None:
        self.entries: dict = {}
        self.versions: dict = {}

    def get(self, op_type: str, options: dict) -> tuple:
        """(options union type, options table, (frozen key, options for the version rule))."""
        try:
            key = (op_type, _frozen(options))
            entry = self.entries.get(key)
        except TypeError:  # an unhashable option value: converted every time
            key = entry = None
        if entry is None:
            union, obj = schema_ops.options_from_dict(op_type, plain_options(options))
            for_rule = with_defaults(op_type, schema_ops.options_to_dict(obj))
            table = None if obj is None else writer.scalar_table(obj)
            entry = (union, table, (key, for_rule))
            if key is not None:
                self.entries[key] = entry
        return entry


def _frozen(value):
    """A hashable stand-in for an option value, its type included (True and 1 are equal
    keys to a dict, but not to every version rule)."""
    if isinstance(value, dict):
        return tuple((k, _frozen(v)) for k, v in value.items())
    if isinstance(value, (list, tuple, np.ndarray)):
        return (type(value), tuple(_frozen(v) for v in value))
    hash(value)
    return type(value), value


def _version(name: str, inputs: list[int], outputs: list[int], rows: "_TensorRows",
             options: tuple, cache: dict) -> int:
    """The version TF's converter gives an operator over tensors `inputs` / `outputs` (indices
    into `rows`; -1 an omitted operand): its record's rule applied to its signature; 1 for
    CUSTOM. `options` is (key, options) from _OptionTables.get; with a key, `cache` keeps the
    rule's answer by the key and the operands' signature numbers (small ints: cheaper to hash
    than the signatures)."""
    record = OPS.get(name)
    if record is None:
        return 1
    key, values = options
    numbers = rows.numbers
    ins = tuple([numbers[i] if i >= 0 else 0 for i in inputs])  # 0: OMITTED (_TensorRows)
    outs = tuple([numbers[i] for i in outputs])
    found = None if key is None else cache.get((key, ins, outs))
    if found is None:
        sigs = rows.sigs
        found = record.version(OpSignature(tuple([sigs[n] for n in ins]),
                                           tuple([sigs[n] for n in outs]), values))
        if key is not None:
            cache[(key, ins, outs)] = found
    return found


def _opcode(name: str, custom_code: str | None):
    if name not in schema_ops.BUILTIN_CODE:
        raise UnsupportedOpError(f"{name} is not a TFLite builtin op")
    return schema_ops.operator_code(name, version=1, custom_code=custom_code)


class _TensorRows:
    """A subgraph's tensors as writer.TensorRow, and their signatures for the version rules.

    A large graph has few distinct shapes and signatures, so each distinct shape's int32
    bytes are made (and checked) once, and each distinct signature gets a number
    (`numbers`: tensor index -> number; `sigs`: number -> TensorSig, 0 is OMITTED)."""

    def __init__(self, buffers: list) -> None:
        self.buffers = buffers
        self.shapes: dict = {}   # (shape, lowest dim allowed) -> int32 bytes
        self.by_sig: dict = {OMITTED: 0}
        self.by_type_shape: dict = {}   # (type code, shape) -> number, unquantized tensors
        self.sigs: list[TensorSig] = [OMITTED]
        self.numbers: list[int] = []

    def row(self, t: Tensor) -> writer.TensorRow:
        """Tensor `t`'s row (its constant data appended to the model's buffers), its
        signature numbered."""
        if t.shape is None:
            raise EdgeliteError(f"internal: tensor {quoted(t.name)} has no shape at export")
        shape, signature = self._dims(t, t.shape, 0), None  # (errors: shape first, as before)
        if t.shape_signature is not None and tuple(t.shape_signature) != tuple(t.shape):
            signature = self._dims(t, t.shape_signature, -1)
        try:
            type_code = schema_ops.NUMPY_TO_TENSOR_TYPE[np.dtype(t.dtype)]
        except KeyError:
            raise UnsupportedOpError(f"tensor {quoted(t.name)} has dtype "
                                     f"{np.dtype(t.dtype).name}, which TFLite cannot store") \
                from None
        buffer = 0
        if t.is_const:
            b = writer.BufferT()
            b.data = np.ascontiguousarray(t.data, dtype=t.dtype)  # pack_model takes its bytes
            buffer = len(self.buffers)
            self.buffers.append(b)
        quantization = None if t.quant is None else _quantization(t.quant)
        self.numbers.append(self._number(t, type_code, quantization))
        return writer.TensorRow(t.name, shape, type_code, buffer, t.is_variable, quantization,
                                signature)

    def _dims(self, t: Tensor, dims, lowest: int) -> bytes:
        """A shape's int32 bytes; ShapeError naming the tensor if a dim does not fit."""
        key = (tuple(dims), lowest)
        found = self.shapes.get(key)
        if found is None:
            found = self.shapes[key] = _int32_dims(t, dims, lowest).astype("<i4").tobytes()
        return found

    def _number(self, t: Tensor, type_code: int, q) -> int:
        """The number of `t`'s signature (tensor_sig of what the file stores for it)."""
        if q is None:
            key = (type_code, tuple(t.shape))
            found = self.by_type_shape.get(key)
            if found is None:
                found = self.by_type_shape[key] = self._numbered(tensor_sig(type_code,
                                                                             t.shape))
            return found
        return self._numbered(tensor_sig(type_code, t.shape, q.scale, q.quantizedDimension))

    def _numbered(self, sig: TensorSig) -> int:
        found = self.by_sig.get(sig)
        if found is None:
            found = self.by_sig[sig] = len(self.sigs)
            self.sigs.append(sig)
        return found


def _int32_dims(t: Tensor, dims, lowest: int) -> np.ndarray:
    """A shape as TFLite's int32 vector; ShapeError naming the tensor if a dim does not fit."""
    bad = next((d for d in dims if not lowest <= int(d) <= INT32_MAX), None)
    if bad is not None:
        raise ShapeError(f"tensor {quoted(t.name)} has shape {list(dims)[:8]}: dimension {bad} "
                         f"does not fit TFLite's int32 shapes ({lowest}..{INT32_MAX}); give "
                         "the graph a smaller shape")
    return np.asarray(dims, np.int32)


def _quantization(quant) -> writer.QuantizationParametersT:
    """A tensor's quantization table: scales, zero points, axis and the optional range."""
    q = writer.QuantizationParametersT()
    q.scale = np.asarray(quant.scale, np.float32).reshape(-1)
    q.zeroPoint = np.asarray(quant.zero_point, np.int64).reshape(-1)
    q.quantizedDimension = int(quant.axis)
    if quant.min is not None:
        q.min = np.asarray(quant.min, np.float32).reshape(-1)
        q.max = np.asarray(quant.max, np.float32).reshape(-1)
    return q


def _signature(graph: Graph, subgraph: int, index: dict) -> object:
    """The SavedModel signature converted (its key and names), else "serving_default" with
    the tensors' own names."""
    sig = tfl.SignatureDefT()
    sig.subgraphIndex = subgraph
    source = graph.signature
    sig.signatureKey = source.key if source else SIGNATURE_KEY
    in_names = [n for n, _ in source.inputs] if source else [t.name for t in graph.inputs]
    out_names = [n for n, _ in source.outputs] if source else [t.name for t in graph.outputs]
    sig.inputs = [_tensor_map(n, index[id(t)]) for n, t in zip(in_names, graph.inputs,
                                                               strict=True)]
    sig.outputs = [_tensor_map(n, index[id(t)]) for n, t in zip(out_names, graph.outputs,
                                                                strict=True)]
    return sig


def _tensor_map(name: str, i: int):
    m = tfl.TensorMapT()
    m.name, m.tensorIndex = name, i
    return m

