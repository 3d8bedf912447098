"""One-op models with operands of mixed types, checked against LiteRT (test helper).

    check_op("GATHER", [x, const(idx)], [(out_shape, np.float32)], axis=1)

Each operand is a numpy array fed as a runtime input, ``const(array)`` for a constant
tensor, or None for an omitted optional input (-1). Outputs are (declared shape, dtype)
pairs; both interpreters recompute the shapes, so the declared shape only has to be
plausible.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tests.support import assert_all_close, run_edgelite, run_litert

from .tflite_builder import ModelBuilder


@dataclass(frozen=True)
class Const:
    value: np.ndarray


def const(value, dtype=None) -> Const:
    return Const(np.asarray(value, dtype=dtype))


def op_model(op: str, operands, outputs, *, version: int = 1,
             **options) -> tuple[bytes, list[np.ndarray]]:
    """(model bytes, values of the runtime inputs in order)."""
    b = ModelBuilder()
    op_inputs, graph_inputs, feeds = [], [], []
    for i, operand in enumerate(operands):
        if operand is None:
            op_inputs.append(-1)
        elif isinstance(operand, Const):
            op_inputs.append(b.const(f"const{i}", operand.value))
        else:
            arr = np.asarray(operand)
            t = b.tensor(f"input{i}", arr.shape, arr.dtype)
            op_inputs.append(t)
            graph_inputs.append(t)
            feeds.append(arr)
    outs = [b.tensor(f"output{i}", shape, dtype) for i, (shape, dtype) in enumerate(outputs)]
    b.op(op, op_inputs, outs, version=version, **options)
    return b.build(graph_inputs, outs), feeds


def check_op(op: str, operands, outputs, **options) -> list[np.ndarray]:
    """Run the one-op model in edgelite and LiteRT (BUILTIN_REF); outputs must match."""
    tolerances = {k: options.pop(k) for k in ("rtol", "atol_factor") if k in options}
    model, feeds = op_model(op, operands, outputs, **options)
    ours = run_edgelite(model, feeds)
    assert_all_close(ours, run_litert(model, feeds), **tolerances)
    return ours


NOT_IN_REF_RESOLVER = {"CEIL", "ROUND", "ELU"}  # LiteRT's BUILTIN_REF lacks these


def check_op_default(op: str, operands, outputs, **options) -> list[np.ndarray]:
    """Like check_op, against LiteRT's default kernels (for ops its reference resolver
    lacks, or whose optimized kernels compute differently)."""
    tolerances = {k: options.pop(k) for k in ("rtol", "atol_factor") if k in options}
    model, feeds = op_model(op, operands, outputs, **options)
    ours = run_edgelite(model, feeds)
    assert_all_close(ours, run_litert(model, feeds, "default"), **tolerances)
    return ours


def run_op(op: str, operands, outputs, **options) -> list[np.ndarray]:
    """edgelite only (for behaviour LiteRT refuses or does differently)."""
    model, feeds = op_model(op, operands, outputs, **options)
    return run_edgelite(model, feeds)
