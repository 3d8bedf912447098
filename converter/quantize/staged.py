"""Run a graph op by op over all samples, with a hook before each op.

Each op is exported alone and run in edgelite's interpreter (so integer ops run LiteRT's
integer arithmetic); every sample's tensors are kept, in their storage type, until their
last reader has run. A hook sees each op's inputs before the op runs; it may change the
op's constants and return the op's outputs itself (it ran the op already) -- bias
correction uses this to correct layer k on the inputs produced by the corrected layers
before it, in one pass (Gauss-Seidel order) instead of one full run per layer.
Memory: the live tensors of every sample at once (the calibration samples, batch 1). An
integer op runs all the samples in one invoke (runner.ModelRunner's exact batches), a float
op one sample at a time.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from edgelite.names import quoted
from ...interpreter.quant_math import quantize
from ..export import export_tflite
from ..ir import Graph, Op, Tensor
from .qarith import dequantize
from ..runner import ModelRunner, as_input

Values = dict[int, list[np.ndarray]]       # id(tensor) -> one array per sample


def real(t: Tensor, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Stored values as real numbers in float64: real = scale * (q - zero_point)."""
    if t.dtype == np.float32 or t.quant is None:
        return [a.astype(np.float64) for a in arrays]
    return [dequantize(a, t.quant.scale, t.quant.zero_point, t.quant.axis) for a in arrays]


def _stored(t: Tensor, x: np.ndarray) -> np.ndarray:
    """A graph input's sample as stored: quantized as TFLite's QUANTIZE op does; token ids
    and indices (an integer input without quantization parameters) as they are."""
    if t.dtype != np.float32 and t.quant is None:
        return np.asarray(x).reshape(t.shape).astype(t.dtype)
    x = np.asarray(x, np.float32).reshape(t.shape)
    if t.dtype == np.float32:
        return x
    return quantize(x, t.quant.scale.ravel()[0], t.quant.zero_point.ravel()[0], t.dtype)


Outputs = list[list[np.ndarray]]            # per op output, one array per sample
Hook = Callable[[Op, Values], "Outputs | None"]


def feeds(op: Op) -> list[Tensor]:
    """The op's distinct non-constant inputs, in order (not its state: variable tensors)."""
    return list({id(t): t for t in op.inputs
                 if t is not None and not t.is_const and not t.is_variable}.values())


def run_op(op: Op, arrays: list[list[np.ndarray]], samples: int,
           folded: dict[int, np.ndarray] | None = None) -> Outputs:
    """Run `op` alone on each of `samples` samples: arrays[i][k] is feed i's value
    (feeds(op), less the ``folded`` ones) for sample k, stored as the op takes it; outputs
    in their storage type. ``folded``: inputs computed from constants only (a DEQUANTIZE of
    int8 weights), by tensor id, given to the op as constants -- as the interpreter folds
    them at allocation."""
    sub = Graph()
    alone = op.copy()
    for i, t in enumerate(alone.inputs):
        if t is not None and folded and id(t) in folded:
            alone.inputs[i] = sub.const(t.name, folded[id(t)])
    sub.inputs, sub.ops, sub.outputs = feeds(alone), [alone], list(op.outputs)
    runner = ModelRunner(export_tflite(sub), label=f"op {quoted(op.name)}", batch=samples)
    results: Outputs = [[] for _ in op.outputs]
    if runner.batch > 1:    # an integer op: all the samples in one invoke, exactly
        for d, values in zip(runner.inputs, arrays):
            one = (1, *d["shape"][1:])
            runner.interp.set_tensor(d["index"], np.concatenate(
                [as_input(np.asarray(v).reshape(one), d) for v in values]))
        runner.interp.invoke()
        for r, d in zip(results, runner.outputs):
            batch = runner.stored(d["index"])
            r.extend(batch[k:k + 1].copy() for k in range(samples))
        return results
    for k in range(samples):
        runner.interp.reset_all_variables()   # each sample from zero state (a sequence LSTM)
        for d, values in zip(runner.inputs, arrays):
            runner.set_input(d, values[k])
        runner.interp.invoke()
        for r, d in zip(results, runner.outputs):
            r.append(runner.stored(d["index"]))
    return results


def _constant_only(op: Op) -> bool:
    return bool(op.inputs) and all(t is None or t.is_const for t in op.inputs)


def run_staged(graph: Graph, samples: list[dict[str, np.ndarray]],
               before: Hook | None = None) -> list[list[np.ndarray]]:
    """Outputs (storage type) per sample, running `before(op, values)` ahead of each op; when
    it returns the op's outputs, the op is not run again. Ops on constants only (the
    DEQUANTIZE of a weights-only LSTM's weights) run once, up front, and are no feeds."""
    folded = {id(t): r[0] for op in graph.ops if _constant_only(op)
              for t, r in zip(op.outputs, run_op(op, [], 1))}
    values: Values = {id(t): [_stored(t, s[t.name]) for s in samples] for t in graph.inputs}
    left = {}
    for op in graph.ops:
        for t in op.inputs:
            if t is not None and not t.is_const:
                left[id(t)] = left.get(id(t), 0) + 1
    for t in graph.outputs:
        left[id(t)] = left.get(id(t), 0) + 1
    for op in graph.ops:
        if _constant_only(op):
            continue
        results = before(op, values) if before is not None else None
        inputs = [t for t in feeds(op) if id(t) not in folded]
        if results is None:
            results = run_op(op, [values[id(t)] for t in inputs], len(samples), folded)
        for t, r in zip(op.outputs, results):
            values[id(t)] = r
        for t in inputs:
            left[id(t)] -= 1
            if left[id(t)] == 0:
                del values[id(t)]
    for t in graph.outputs:   # (an output computed from constants only)
        values.setdefault(id(t), [folded.get(id(t))] * len(samples))
    return [[values[id(t)][k] for t in graph.outputs] for k in range(len(samples))]
