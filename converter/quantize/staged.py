"""Run a graph op by op over all samples, with a hook before each op.

Each op is exported alone and run in edgelite's interpreter (so integer ops run LiteRT's
integer arithmetic); every sample's tensors are kept, in their storage type, until their
last reader has run. A hook may change an op's constants before the op runs -- bias
correction uses this to correct layer k with its inputs already produced by the corrected
layers before it, in one pass (Gauss-Seidel order) instead of one full run per layer.
Memory: the live tensors of every sample at once (the calibration samples, batch 1).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ...interpreter import Interpreter
from ..export import export_tflite
from ..ir import Graph, Op, Tensor
from .params import round_half_away

Values = dict[int, list[np.ndarray]]       # id(tensor) -> one array per sample


def real(t: Tensor, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Stored values as real numbers: real = scale * (q - zero_point) (per tensor)."""
    if t.dtype == np.float32 or t.quant is None:
        return [a.astype(np.float64) for a in arrays]
    s, z = float(t.quant.scale.ravel()[0]), float(t.quant.zero_point.ravel()[0])
    return [s * (a.astype(np.float64) - z) for a in arrays]


def _stored(t: Tensor, x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float32).reshape(t.shape)
    if t.dtype == np.float32:
        return x
    s, z = float(t.quant.scale.ravel()[0]), int(t.quant.zero_point.ravel()[0])
    info = np.iinfo(t.dtype)
    return np.clip(round_half_away(x / s) + z, info.min, info.max).astype(t.dtype)


def run_staged(graph: Graph, samples: list[dict[str, np.ndarray]],
               before: Callable[[Op, Values], None] | None = None) -> list[list[np.ndarray]]:
    """Outputs (storage type) per sample, running `before(op, values)` ahead of each op."""
    values: Values = {id(t): [_stored(t, s[t.name]) for s in samples] for t in graph.inputs}
    left = {}
    for op in graph.ops:
        for t in op.inputs:
            if t is not None and not t.is_const:
                left[id(t)] = left.get(id(t), 0) + 1
    for t in graph.outputs:
        left[id(t)] = left.get(id(t), 0) + 1
    for op in graph.ops:
        if before is not None:
            before(op, values)
        feeds = list({id(t): t for t in op.inputs if t is not None and not t.is_const}.values())
        sub = Graph()
        sub.inputs, sub.ops, sub.outputs = feeds, [op.copy()], list(op.outputs)
        interp = Interpreter(model_content=export_tflite(sub))
        interp.allocate_tensors()
        ins = [d["index"] for d in interp.get_input_details()]
        outs = [d["index"] for d in interp.get_output_details()]
        results = [[] for _ in op.outputs]
        for k in range(len(samples)):
            for index, t in zip(ins, feeds):
                interp.set_tensor(index, values[id(t)][k])
            interp.invoke()
            for r, index in zip(results, outs):
                r.append(interp.get_tensor(index))
        for t, r in zip(op.outputs, results):
            values[id(t)] = r
        for t in feeds:
            left[id(t)] -= 1
            if left[id(t)] == 0:
                del values[id(t)]
    return [[values[id(t)][k] for t in graph.outputs] for k in range(len(samples))]
