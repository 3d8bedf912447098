"""The interpreter's Model of an IR graph, built without writing a file.

Shape inference prepares the whole graph in edgelite's interpreter (shape_inference.py).
Exporting the graph to .tflite bytes and parsing them back for that was half the time of
converting a 100,000-node graph, so ``interpreter_model(graph)`` builds the same
``interpreter.model_objects.Model`` directly -- what ``load_model(export_tflite(graph))``
reads: the tensors in export's order with their int32 shapes, types, constants (read-only
views), quantization (float32 scales, int64 zero points) and names; the operators with
their options, which go through their own flatbuffer table and are read back by the
generated API exactly as from a file (float32 floats, tuples, defaults). Two fields differ
and nothing reads them when preparing: operator versions are 1 and every constant has a
buffer of its own (the file shares identical ones).

A graph it does not cover -- subgraphs, CUSTOM or converter-only ops, a type or shape only
the file's checks refuse -- gives None, and the caller takes the file path, which reports
what is wrong.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping

import numpy as np

from ..interpreter import Interpreter
from ..interpreter.loader.model import MAX_RANK, MAX_TENSOR_BYTES
from ..interpreter.loader.model_objects import (Model, Operator, Quantization, SignatureDef,
                                                Subgraph, Tensor, check_execution_order,
                                                num_elements)
from ..schema import ops as schema_ops
from ..schema.model_io import SCHEMA_VERSION
from ..schema.writer import Builder
from .export import SIGNATURE_KEY, check_model_size, export_tflite, plain_options
from .ir import PSEUDO_OPS, Graph, QuantParams
from .ir import Tensor as IRTensor
from .tf_tensor import INT32_MAX

_EMPTY: Mapping[str, Any] = MappingProxyType({})
# (op type, options as a hashable key) -> the options as a file reads them back
_OPTIONS: dict[tuple, Mapping[str, Any]] = {}


def graph_interpreter(graph: Graph, tensors: list[IRTensor] | None = None) -> Interpreter:
    """An interpreter over `graph` (not allocated): its Model built directly, or read from
    the exported file where interpreter_model does not cover the graph. `tensors`:
    graph.tensors(), when the caller has it."""
    model = interpreter_model(graph, tensors=tensors)
    return Interpreter(model_content=export_tflite(graph) if model is None else model)


def interpreter_model(graph: Graph, description: str = "edgelite",
                      tensors: list[IRTensor] | None = None) -> Model | None:
    """``load_model(export_tflite(graph))`` without the file (module docstring), or None.
    `tensors`: graph.tensors(), when the caller has it."""
    if any(op.subgraphs or op.type in PSEUDO_OPS or op.type == "CUSTOM" or
           op.type not in schema_ops.OPTIONS_OF and op.type in schema_ops.OPTIONS2_OF or
           op.type not in schema_ops.BUILTIN_CODE for op in graph.ops):
        return None
    tensors = graph.tensors() if tensors is None else tensors
    check_model_size(tensors, len(graph.ops))  # (export's refusal, before anything is built)
    index = {id(t): i for i, t in enumerate(tensors)}
    written = {id(t) for t in graph.inputs}
    written.update(id(t) for op in graph.ops for t in op.outputs)
    model_tensors = []
    layouts: dict = {}
    for i, t in enumerate(tensors):
        mt = _tensor(t, i, id(t) in written, layouts)
        if mt is None:
            return None
        model_tensors.append(mt)
    def at(ts):
        return tuple(index[id(t)] if t is not None else -1 for t in ts)

    operators = []
    for k, op in enumerate(graph.ops):
        operators.append(Operator(k, op.type, schema_ops.BUILTIN_CODE[op.type], None, 1,
                                  at(op.inputs), at(op.outputs), at(op.intermediates),
                                  _options(op.type, op.options), None))
    inputs = tuple(index[id(t)] for t in graph.inputs)
    outputs = tuple(index[id(t)] for t in graph.outputs)
    sg = Subgraph(0, graph.name, tuple(model_tensors), tuple(operators), inputs, outputs)
    check_execution_order(sg)
    return Model(SCHEMA_VERSION, description, (sg,), (_signature(graph, inputs, outputs),),
                 _EMPTY, True)


def _tensor(t: IRTensor, i: int, written: bool, layouts: dict) -> Tensor | None:
    """Tensor i as model.py reads it from export's file; None when that path must judge.
    `layouts`: _layout's answers by (dtype, shape, signature), kept for one model."""
    sig = t.shape_signature
    key = (t.dtype, None if t.shape is None else tuple(t.shape),
           None if sig is None else tuple(sig))
    layout = layouts.get(key)
    if layout is None:
        layout = layouts[key] = _layout(*key)
    if layout is False:
        return None
    code, dtype, shape, sig = layout
    data = None
    if t.is_const:
        value = np.ascontiguousarray(t.data, dtype=dtype)
        if value.size != num_elements(shape):
            return None
        if value.size:
            data = value.reshape(shape)
            data.setflags(write=False)
        elif not written:  # an empty constant needs no bytes; one an op writes is not one
            data = np.zeros(shape, dtype)
            data.setflags(write=False)
    quant = None
    if t.quant is not None:
        quant = _quantization(t.quant)
        if quant is False:
            return None
    return Tensor(i, t.name, code, dtype, shape, sig, i + 1 if t.is_const else 0, data, quant,
                  bool(t.is_variable), False)


def _layout(ir_dtype, ir_shape, ir_signature) -> tuple | bool:
    """(type code, storage dtype, int shape, int signature) as the file gives them for a
    tensor of this dtype, shape and signature; False where the file's checks must judge
    (a large graph repeats a few of these: each is worked out once)."""
    dtype = np.dtype(ir_dtype)
    code = schema_ops.NUMPY_TO_TENSOR_TYPE.get(dtype)
    if ir_shape is None or code is None or dtype.kind == "O":
        return False
    shape = tuple(map(int, ir_shape))
    sig = shape
    if ir_signature is not None and tuple(ir_signature) != shape:
        sig = tuple(map(int, ir_signature)) or shape  # (an empty one reads so)
    dtype = schema_ops.TENSOR_TYPE_TO_NUMPY[code]
    if len(shape) > MAX_RANK or len(sig) > MAX_RANK or \
            shape and (min(shape) < 0 or max(shape) > INT32_MAX) or \
            sig and (min(sig) < -1 or max(sig) > INT32_MAX) or \
            num_elements(shape) * dtype.itemsize > MAX_TENSOR_BYTES:
        return False
    return code, dtype, shape, sig


def _quantization(q: QuantParams) -> Quantization | None | bool:
    """What model.py reads back from export's table (empty vectors are absent); False: the
    file's check (as many zero points as scales) must speak."""
    def vector(values, dtype):
        if values is None:
            return None
        v = np.array(values, dtype).reshape(-1)
        v.setflags(write=False)
        return v if v.size else None
    scale, zero_point = vector(q.scale, np.float32), vector(q.zero_point, np.int64)
    qmin = qmax = None
    if q.min is not None:  # (export writes max only beside min)
        qmin, qmax = vector(q.min, np.float32), vector(q.max, np.float32)
    if scale is None and zero_point is None and qmin is None and qmax is None:
        return None
    scale = np.zeros(0, np.float32) if scale is None else scale
    zero_point = np.zeros(0, np.int64) if zero_point is None else zero_point
    if len(zero_point) and len(zero_point) != len(scale):
        return False
    return Quantization(scale, zero_point, int(q.axis), qmin, qmax)


def _options(op_type: str, options: dict) -> Mapping[str, Any]:
    """The options as model.py reads them from the op's table (packed and read back once
    per distinct value)."""
    values = plain_options(options)
    try:
        key = (op_type, tuple(sorted((k, _frozen(v)) for k, v in values.items())))
        hash(key)
    except TypeError:
        key = None
    found = _OPTIONS.get(key) if key is not None else None
    if found is not None:
        return found
    _, obj = schema_ops.options_from_dict(op_type, values)
    if obj is None:
        return _EMPTY
    b = Builder(256)
    b.Finish(obj.Pack(b))
    mapping = options_mapping(type(obj).InitFromPackedBuf(bytes(b.Output()), 0))
    if key is not None:
        _OPTIONS[key] = mapping
    return mapping


def _frozen(v):
    return tuple(map(_frozen, v)) if isinstance(v, list) else v


def _signature(graph: Graph, inputs, outputs) -> SignatureDef:
    source = graph.signature
    key = source.key if source else SIGNATURE_KEY
    in_names = [n for n, _ in source.inputs] if source else [t.name for t in graph.inputs]
    out_names = [n for n, _ in source.outputs] if source else [t.name for t in graph.outputs]
    return SignatureDef(key, 0, MappingProxyType(dict(zip(in_names, inputs, strict=True))),
                        MappingProxyType(dict(zip(out_names, outputs, strict=True))))


_SNAKE_KEYS: dict[type, dict[str, str]] = {}  # options class -> attribute -> option key


def _option_value(value: Any) -> Any:
    """numpy scalars / arrays and lists as Python scalars and tuples (frozen)."""
    if isinstance(value, np.ndarray):
        return _option_value(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return tuple(_option_value(v) for v in value)
    return value


def options_mapping(obj) -> Mapping[str, Any]:
    """An options table read by the generated object API (``XOptionsT``) as the read-only
    snake_case mapping ``Operator.options`` holds (the interpreter's reader gives the same:
    tests/schema/test_layout_gen.py)."""
    cls = type(obj)
    keys = _SNAKE_KEYS.get(cls)
    if keys is None:  # the option names, as schema_ops.options_to_dict spells them
        keys = _SNAKE_KEYS[cls] = dict(zip(vars(cls()), schema_ops.options_to_dict(cls())))
    return MappingProxyType({keys[k]: _option_value(v) for k, v in vars(obj).items()})
