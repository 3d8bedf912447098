"""Write fewer constant tensors: equal constants become one, an all-zero integer
FULLY_CONNECTED bias is omitted.

Every tensor of a .tflite costs TFLite Micro arena bytes whatever its size (a TfLiteEvalTensor
in the persistent tail, 12 bytes on a 32-bit target, 24 on a 64-bit host, plus its
quantization record), as TensorFlow's converter knows: it writes one tensor for equal
constants (two MEANs' axes) and no bias for a FULLY_CONNECTED whose bias is zero (the
kernels read an omitted bias as zeros: fully_connected.cc, reference_integer_ops). Here:

  * constants with the same dtype, shape, bytes and quantization (none, or equal scales,
    zero points and axis) that are no graph input or output share the first one;
  * a FULLY_CONNECTED's bias that is an all-zero integer constant (int32 / int64, a
    quantized model's) becomes an omitted input (None); a float bias is left alone, so a
    float graph keeps its bias for quantization.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph, QuantParams, Tensor

SMALL = 4096


def _quant_key(q: QuantParams | None):
    if q is None:
        return None
    return (np.asarray(q.scale).tobytes(), np.asarray(q.zero_point).tobytes(), q.axis)


def _key(t: Tensor):
    data = np.ascontiguousarray(t.data)
    return (data.dtype.str, data.shape, t.shape, t.shape_signature, data.tobytes(),
            _quant_key(t.quant))


def run(graph: Graph) -> int:
    changed = 0
    for op in graph.ops_of("FULLY_CONNECTED"):
        if len(op.inputs) > 2:
            bias = op.inputs[2]
            if bias is not None and bias.is_const and bias.data.dtype.kind == "i" \
                    and not graph.is_output(bias) and not np.any(bias.data):
                op.inputs[2] = None
                changed += 1
    first: dict = {}
    for op in list(graph.ops):
        for i, t in enumerate(op.inputs):
            if t is None or not t.is_const or t.is_variable or t.data.nbytes > SMALL \
                    or graph.is_input(t) or graph.is_output(t):
                continue
            keep = first.setdefault(_key(t), t)
            if keep is not t:
                op.inputs[i] = keep
                changed += 1
    return changed
