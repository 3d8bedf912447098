"""Build small .tflite files with the schema's object API (test helper).

    b = ModelBuilder()
    x = b.tensor("x", [1, 4, 4, 3])
    w = b.tensor("w", [8, 3, 3, 3], data=weights)
    y = b.tensor("y", [1, 4, 4, 8])
    b.op("CONV_2D", [x, w, -1], [y], stride_w=1, stride_h=1, padding="SAME")
    data = b.build(inputs=[x], outputs=[y])

Several subgraphs: build subgraph 0 first, ``b.finish_subgraph(inputs, outputs)``, then
the next one with the same calls (tensor indices restart at 0), and ``b.build(inputs,
outputs)`` for the last one (``b.subgraph_count`` is the index the next one gets).

Follows the format contract: buffers[0] is the empty sentinel, every constant gets its
own buffer, OperatorCode has deprecated_builtin_code = min(code, 127) and
builtin_code = code, and the file identifier is "TFL3".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from edgelite.interpreter import strings
from edgelite.schema import model_io
from edgelite.schema import ops as schema_ops
from edgelite.schema import generated_tflite as tfl


class ModelBuilder:
    def __init__(self) -> None:
        self.tensors: list[Any] = []
        self.buffers: list[Any] = [tfl.BufferT()]  # buffers[0]: the empty sentinel
        self.operators: list[Any] = []
        self.opcodes: list[Any] = []
        self._opcode_index: dict[tuple, int] = {}
        self.signatures: list[Any] = []
        self.subgraphs: list[Any] = []  # the finished ones

    @property
    def subgraph_count(self) -> int:
        return len(self.subgraphs)

    def tensor(self, name: str, shape, dtype=np.float32, data=None, *, scale=None,
               zero_point=None, quantized_dimension=0, shape_signature=None,
               type_code: int | None = None, is_variable: bool = False,
               sparsity=None, own_buffer: bool = False) -> int:
        """``type_code``: a TensorType the dtype cannot say (RESOURCE: 13, VARIANT: 15).
        ``sparsity``: a ``tfl.SparsityParametersT`` (``data`` is then the stored values).
        ``own_buffer``: without ``data``, an empty buffer of its own rather than buffer 0
        (TF's converter gives every tensor one)."""
        t = tfl.TensorT()
        t.name = name
        t.shape = [int(d) for d in shape]
        if shape_signature is not None:
            t.shapeSignature = [int(d) for d in shape_signature]
        t.type = schema_ops.tensor_type_of(dtype) if type_code is None else type_code
        t.isVariable = bool(is_variable)
        t.sparsity = sparsity
        t.buffer = 0
        if own_buffer and data is None:
            self.buffers.append(tfl.BufferT())
            t.buffer = len(self.buffers) - 1
        if data is not None:
            buf = tfl.BufferT()
            if t.type == tfl.TensorType.STRING:  # TFLite's packed string buffer
                buf.data = np.frombuffer(strings.encode(data), np.uint8)
            else:
                arr = np.ascontiguousarray(np.asarray(data, dtype=dtype))
                buf.data = arr.reshape(-1).view(np.uint8)
            self.buffers.append(buf)
            t.buffer = len(self.buffers) - 1
        if scale is not None:
            q = tfl.QuantizationParametersT()
            q.scale = [float(s) for s in np.atleast_1d(scale)]
            zp = np.zeros(len(q.scale), np.int64) if zero_point is None else zero_point
            q.zeroPoint = [int(z) for z in np.atleast_1d(zp)]
            q.quantizedDimension = quantized_dimension
            t.quantization = q
        self.tensors.append(t)
        return len(self.tensors) - 1

    def const(self, name: str, value, dtype=None) -> int:
        arr = np.asarray(value, dtype=dtype)
        return self.tensor(name, arr.shape, arr.dtype, data=arr)

    def op(self, op_name: str, inputs, outputs, *, version: int = 1, custom_code=None,
           builtin_code: int | None = None, intermediates=None, **options) -> int:
        code = schema_ops.BUILTIN_CODE[op_name] if builtin_code is None else builtin_code
        key = (code, custom_code, version)
        if key not in self._opcode_index:
            oc = tfl.OperatorCodeT()
            oc.deprecatedBuiltinCode = min(code, 127)
            oc.builtinCode = code
            oc.version = version
            if custom_code is not None:
                oc.customCode = custom_code
            self.opcodes.append(oc)
            self._opcode_index[key] = len(self.opcodes) - 1
        o = tfl.OperatorT()
        o.opcodeIndex = self._opcode_index[key]
        o.inputs = [int(i) for i in inputs]
        o.outputs = [int(i) for i in outputs]
        if intermediates is not None:
            o.intermediates = [int(i) for i in intermediates]
        if builtin_code is None and schema_ops.options_union(op_name) is not None:
            schema_ops.set_operator_options(o, op_name, options)
        self.operators.append(o)
        return len(self.operators) - 1

    def signature(self, key: str, inputs: dict[str, int], outputs: dict[str, int],
                  subgraph_index: int = 0) -> None:
        s = tfl.SignatureDefT()
        s.signatureKey = key
        s.subgraphIndex = subgraph_index
        s.inputs, s.outputs = [], []
        for names, target in ((inputs, s.inputs), (outputs, s.outputs)):
            for name, index in names.items():
                m = tfl.TensorMapT()
                m.name = name
                m.tensorIndex = index
                target.append(m)
        self.signatures.append(s)

    def _subgraph(self, inputs, outputs, name: str | None) -> Any:
        sg = tfl.SubGraphT()
        sg.tensors = self.tensors
        sg.inputs = [int(i) for i in inputs]
        sg.outputs = [int(i) for i in outputs]
        sg.operators = self.operators
        sg.name = name or ("main" if not self.subgraphs else f"subgraph{len(self.subgraphs)}")
        return sg

    def finish_subgraph(self, inputs, outputs, name: str | None = None) -> int:
        """Close the subgraph being built; the next tensor() / op() calls build the next
        one. Returns the closed subgraph's index."""
        self.subgraphs.append(self._subgraph(inputs, outputs, name))
        self.tensors, self.operators = [], []
        return len(self.subgraphs) - 1

    def build(self, inputs, outputs, *, file_identifier: bytes = b"TFL3",
              description: str = "edgelite test model") -> bytes:
        """The model: the finished subgraphs, then the one being built."""
        m = tfl.ModelT()
        m.version = 3
        m.description = description
        m.operatorCodes = self.opcodes
        m.subgraphs = self.subgraphs + [self._subgraph(inputs, outputs, None)]
        m.buffers = self.buffers
        if self.signatures:
            m.signatureDefs = self.signatures
        return model_io.pack_model(m, file_identifier=file_identifier)


def single_op_model(op_name: str, input_shapes, output_shape, *, consts=None,
                    dtype=np.float32, out_dtype=None, **options) -> bytes:
    """One op whose inputs are runtime inputs (shapes) or constants (``consts``).

    ``input_shapes`` lists one entry per op input: a shape for a runtime input, None for
    an omitted optional input (-1), or an int key into ``consts`` (index -> array).
    """
    consts = consts or {}
    b = ModelBuilder()
    op_inputs, graph_inputs = [], []
    for i, shape in enumerate(input_shapes):
        if i in consts:
            op_inputs.append(b.const(f"const{i}", consts[i]))
        elif shape is None:
            op_inputs.append(-1)
        else:
            t = b.tensor(f"input{i}", shape, dtype)
            op_inputs.append(t)
            graph_inputs.append(t)
    out = b.tensor("output", output_shape, out_dtype or dtype)
    b.op(op_name, op_inputs, [out], **options)
    return b.build(graph_inputs, [out])


class QuantModel:
    """ModelBuilder with shorthands for quantized operands."""

    def __init__(self) -> None:
        self.b = ModelBuilder()
        self.inputs: list[int] = []
        self.outputs: list[int] = []

    def input(self, name, shape, dtype, scale=None, zp=None) -> int:
        t = self.b.tensor(name, shape, dtype, scale=scale, zero_point=zp)
        self.inputs.append(t)
        return t

    def const(self, name, value, dtype, scale=None, zp=None, axis=0) -> int:
        value = np.asarray(value, dtype)
        return self.b.tensor(name, value.shape, dtype, data=value, scale=scale,
                             zero_point=zp, quantized_dimension=axis)

    def output(self, name, shape, dtype, scale=None, zp=None) -> int:
        t = self.b.tensor(name, shape, dtype, scale=scale, zero_point=zp)
        self.outputs.append(t)
        return t

    def op(self, name, inputs, outputs, version=1, **options) -> None:
        self.b.op(name, inputs, outputs, version=version, **options)

    def build(self) -> bytes:
        return self.b.build(self.inputs, self.outputs)
