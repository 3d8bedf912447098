"""The error one op adds by itself: replay a float reference op on the quantized model's
own (dequantized) inputs and compare with the quantized op's output.

A tensor's SQNR against the float model is cumulative: one badly quantized layer drags down
every layer after it, often further (later layers amplify the noise they receive), so the
lowest SQNR usually points downstream of the real culprit. The op SQNR isolates each op,
as TFLite's quantization debugger does in its layer-by-layer mode:

    op SQNR(T) = SQNR( float_op(dequantized quantized inputs),  dequantized quantized T )

Each reference op is cut out of the reference .tflite into a one-op model (schema object API,
constants kept) and run in the converter's model runner (runner.py).
"""

from __future__ import annotations

import copy

import numpy as np

from edgelite.errors import EdgeliteError
from ...schema import model_io
from ...schema import generated_tflite as tfl
from ..runner import ModelRunner


class OneOp:
    """One operator of a model, runnable alone. `inputs`: the original indices of its
    non-constant inputs; `outputs`: of its outputs (both in the original model)."""

    def __init__(self, model, k: int, shapes: dict[int, tuple[int, ...]]) -> None:
        sg = model.subgraphs[0]
        op = sg.operators[k]
        used = list(dict.fromkeys(t for t in [*(op.inputs if op.inputs is not None else []),
                                              *op.outputs] if t >= 0))
        new = {t: i for i, t in enumerate(used)}
        buffers, tensors, inputs = [tfl.BufferT()], [], []
        for t in used:
            tensor = copy.copy(sg.tensors[t])
            data = model.buffers[tensor.buffer].data if tensor.buffer else None
            if data is not None and len(data):
                buffers.append(model.buffers[tensor.buffer])
                tensor.buffer = len(buffers) - 1
            else:
                tensor.buffer = 0
                tensor.shape = list(shapes[t])
                tensor.shapeSignature = None
                if t in (op.inputs if op.inputs is not None else []):
                    inputs.append(t)
            tensors.append(tensor)
        one = copy.copy(op)
        one.opcodeIndex = 0
        one.inputs = [new[t] if t >= 0 else -1 for t in op.inputs]
        one.outputs = [new[t] for t in op.outputs]
        one.intermediates = None
        sub = tfl.SubGraphT()
        sub.tensors, sub.operators = tensors, [one]
        sub.inputs = [new[t] for t in inputs]
        sub.outputs = list(one.outputs)
        m = tfl.ModelT()
        m.version, m.description = 3, "edgelite: one op replayed"
        m.operatorCodes = [model.operatorCodes[op.opcodeIndex]]
        m.subgraphs, m.buffers = [sub], buffers
        self.inputs, self.outputs = inputs, list(op.outputs)
        self.runner = ModelRunner(model_io.pack_model(m), label=f"operator {k}")
        self._in = list(zip(inputs, self.runner.inputs))
        self._shapes = {t: tuple(int(s) for s in d["shape"]) for t, d in self._in}
        self._out = {t: new[t] for t in op.outputs}

    def run(self, values: dict[int, np.ndarray]) -> None:
        """Run on {original input index: value}."""
        for t, d in self._in:
            value = values[t]
            if value.dtype == d["dtype"] and value.shape == self._shapes[t]:
                self.runner.interp.set_tensor(d["index"], value)   # (as read: no conversion)
            else:
                self.runner.set_input(d, value)
        self.runner.interp.invoke()

    def output(self, t: int) -> np.ndarray:
        return self.runner.stored(self._out[t])


def one_op_models(content: bytes, ops: set[int],
                  shapes: dict[int, tuple[int, ...]]) -> dict[int, OneOp]:
    """{op index: OneOp} for the ops of `content` that can run alone (others -- ops with
    subgraphs, variables or custom kernels -- are left out: their op SQNR is not measured)."""
    model = tfl.ModelT.InitFromPackedBuf(content, 0)
    out = {}
    for k in sorted(ops):
        try:
            out[k] = OneOp(model, k, shapes)
        except (EdgeliteError, KeyError, IndexError, TypeError, ValueError):
            continue
    return out
