"""IR Graph -> .tflite bytes (TFLite schema v3, file identifier "TFL3").

Layout follows what TFLite's own converter writes, for interop: buffers[0] is the empty
sentinel every non-constant tensor points at, each constant owns one buffer, operator codes
carry deprecated_builtin_code = min(code, 127) next to the full builtin_code, and the subgraph
gets a "serving_default" signature so `get_signature_runner()` works in LiteRT and here.
"""

from __future__ import annotations

import numpy as np

from ..interpreter.errors import EdgeliteError, UnsupportedOpError
from ..schema import ops as schema_ops
from ..schema import generated_tflite as tfl
from ..schema.model_io import SCHEMA_VERSION, pack_model
from .ir import PSEUDO_OPS, Graph, Tensor

SIGNATURE_KEY = "serving_default"


def export_tflite(graph: Graph, description: str = "edgelite") -> bytes:
    """Serialise `graph` (after passes: only TFLite builtin / CUSTOM ops) to .tflite bytes."""
    leftover = sorted({op.type for op in graph.ops if op.type in PSEUDO_OPS})
    if leftover:
        raise EdgeliteError(f"internal: converter-only ops {leftover} survived the passes")
    tensors = graph.tensors()
    index = {id(t): i for i, t in enumerate(tensors)}
    model = tfl.ModelT()
    model.version = SCHEMA_VERSION
    model.description = description
    model.buffers = [tfl.BufferT()]
    model.operatorCodes, codes = [], {}

    sub = tfl.SubGraphT()
    sub.name = "main"
    sub.tensors = [_tensor(t, model.buffers) for t in tensors]
    sub.operators = []
    for op in graph.ops:
        key = (op.type, op.custom_code)
        if key not in codes:
            codes[key] = len(model.operatorCodes)
            model.operatorCodes.append(_opcode(op.type, op.custom_code))
        o = tfl.OperatorT()
        o.opcodeIndex = codes[key]
        o.inputs = [index[id(t)] if t is not None else -1 for t in op.inputs]
        o.outputs = [index[id(t)] for t in op.outputs]
        if op.type != "CUSTOM":
            o.builtinOptionsType, o.builtinOptions = schema_ops.options_from_dict(
                op.type, {k: _plain(v) for k, v in op.options.items()})
        sub.operators.append(o)
    sub.inputs = [index[id(t)] for t in graph.inputs]
    sub.outputs = [index[id(t)] for t in graph.outputs]
    model.subgraphs = [sub]
    model.signatureDefs = [_signature(graph, index)]

    return pack_model(model)


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


def _opcode(name: str, custom_code: str | None):
    if name not in schema_ops.BUILTIN_CODE:
        raise UnsupportedOpError(f"{name} is not a TFLite builtin op")
    return schema_ops.operator_code(name, version=1, custom_code=custom_code)


def _tensor(t: Tensor, buffers: list) -> object:
    if t.shape is None:
        raise EdgeliteError(f"internal: tensor {t.name!r} has no shape at export")
    tt = tfl.TensorT()
    tt.name = t.name
    tt.shape = np.asarray(t.shape, np.int32)
    if t.shape_signature is not None and tuple(t.shape_signature) != tuple(t.shape):
        tt.shapeSignature = np.asarray(t.shape_signature, np.int32)
    try:
        tt.type = schema_ops.NUMPY_TO_TENSOR_TYPE[np.dtype(t.dtype)]
    except KeyError:
        raise UnsupportedOpError(f"tensor {t.name!r} has dtype {np.dtype(t.dtype).name}, "
                                 "which TFLite cannot store") from None
    tt.buffer = 0
    if t.is_const:
        b = tfl.BufferT()
        b.data = np.ascontiguousarray(t.data, dtype=t.dtype)  # pack_model takes its bytes
        tt.buffer = len(buffers)
        buffers.append(b)
    if t.quant is not None:
        q = tfl.QuantizationParametersT()
        q.scale = np.asarray(t.quant.scale, np.float32).reshape(-1)
        q.zeroPoint = np.asarray(t.quant.zero_point, np.int64).reshape(-1)
        q.quantizedDimension = int(t.quant.axis)
        if t.quant.min is not None:
            q.min = np.asarray(t.quant.min, np.float32).reshape(-1)
            q.max = np.asarray(t.quant.max, np.float32).reshape(-1)
        tt.quantization = q
    return tt


def _signature(graph: Graph, index: dict) -> object:
    sig = tfl.SignatureDefT()
    sig.signatureKey = SIGNATURE_KEY
    sig.subgraphIndex = 0
    sig.inputs = [_tensor_map(t.name, index[id(t)]) for t in graph.inputs]
    sig.outputs = [_tensor_map(t.name, index[id(t)]) for t in graph.outputs]
    return sig


def _tensor_map(name: str, i: int):
    m = tfl.TensorMapT()
    m.name, m.tensorIndex = name, i
    return m

