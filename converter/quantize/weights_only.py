"""Weights-only modes: `dynamic` (int8 weights) and `float16` (float16 weights).

Each quantized weight is stored small and turned back into float32 by a DEQUANTIZE op; the
interpreter (like LiteRT) evaluates a DEQUANTIZE of a constant once, at allocation.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Op, QuantParams, Tensor
from .params import quantize, symmetric_weights
from .rules import WEIGHT_AXIS

# float16: every float constant at least this big is stored as float16 (small vectors such
# as biases stay float32, as TF's converter leaves them).
MIN_FLOAT16_ELEMENTS = 16


def dequantized(graph: Graph, op: Op, i: int, stored: np.ndarray) -> Tensor:
    """Input i of `op` (a float constant) stored as `stored`, read through a DEQUANTIZE;
    the stored constant."""
    w = op.inputs[i]
    stored_t = graph.const(f"{w.name}_{np.dtype(stored.dtype).name}", stored)
    out = graph.tensor(w.name, np.float32, w.shape)
    graph.insert_op(Op("DEQUANTIZE", [stored_t], [out], {}, w.name), before=op)
    op.inputs[i] = out
    return stored_t


def dynamic_range(graph: Graph, per_channel: bool = True) -> int:
    """int8 symmetric weights (per output channel) for CONV / DEPTHWISE / FULLY_CONNECTED."""
    n = 0
    for op in list(graph.ops):
        w = op.inputs[1] if op.type in WEIGHT_AXIS and len(op.inputs) > 1 else None
        if w is None or not w.is_const or w.data.dtype != np.float32:
            continue
        p = symmetric_weights(w.data, WEIGHT_AXIS[op.type] if per_channel else None)
        stored = dequantized(graph, op, 1, quantize(w.data, p, np.int8, -127, 127))
        stored.quant = QuantParams(p.scale, p.zero_point, p.axis)
        n += 1
    return n


FLOAT16_MAX = float(np.finfo(np.float16).max)  # 65504


def _fits_float16(data: np.ndarray) -> bool:
    """No finite value beyond float16's range: a -1e9 attention mask stays float32 rather
    than turn into -inf (and NaN after a multiply by 0)."""
    finite = data[np.isfinite(data)]
    return finite.size == 0 or float(np.abs(finite).max()) <= FLOAT16_MAX


def float16(graph: Graph) -> int:
    n = 0
    for op in list(graph.ops):
        if op.type == "DEQUANTIZE":
            continue
        for i, t in enumerate(op.inputs):
            if t is not None and t.is_const and t.data.dtype == np.float32 \
                    and t.data.size >= MIN_FLOAT16_ELEMENTS and _fits_float16(t.data):
                dequantized(graph, op, i, t.data.astype(np.float16))
                n += 1
    return n
