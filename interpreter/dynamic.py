"""Ops that touch dynamic tensors: run with the shapes they get at invoke.

TFLite's dynamic tensors (kTfLiteDynamic) are tensors whose shape only an invoke tells:
the outputs of a WHILE whose loop-carried tensor changes shape, of an IF whose branches
give different shapes, of a READ_VARIABLE of unknown rank. TFLite allocates them on the
heap when the op producing them resizes them, and prepares again every op after one
before running it (subgraph.cc, PrepareOpsStartingAt / tensor_resized_since_op_invoked_).

edgelite does the same, only for the ops concerned (allocation.py decides which):

* an op prepared at allocate time whose outputs are dynamic (OutputSpec.dynamic) runs
  its eval with ``outputs`` a list it fills with new arrays (kernels/base.py);
* an op reading a dynamic tensor is prepared at invoke, for the shapes of its inputs
  then, and the result is cached per input-shape signature (MAX_VARIANTS, oldest
  dropped); its outputs are new arrays each invoke, dynamic in turn.

Either way the op's step is ``(run_dynamic, DynamicOp, (), ())``: it reads its inputs
from, and stores its outputs into, the allocation's table of current arrays. Static ops
never read dynamic tensors, so a graph without any runs exactly as before.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .errors import DTypeError, ShapeError
from .model import MAX_RANK, MAX_TENSOR_BYTES
from .model_objects import num_elements

MAX_VARIANTS = 8  # input-shape signatures prepared per op (see the module docstring)

# (eval, record, output specs); specs None: the outputs are dynamic (eval fills a list)
Prepared = tuple[Callable, object, tuple | None]


class DynamicOp:
    """One op around dynamic tensors (see the module docstring)."""

    __slots__ = ("describe", "arrays", "inputs", "outputs", "dtypes", "fixed", "prepare",
                 "variants")

    def __init__(self, describe: str, arrays: list, inputs: tuple[int, ...],
                 outputs: tuple[int, ...], dtypes: tuple, fixed: Prepared | None = None,
                 prepare: Callable[[tuple], Prepared] | None = None):
        self.describe = describe  # "operator 3 WHILE (output 'y')", for messages
        self.arrays = arrays  # the allocation's current array of every tensor
        self.inputs = inputs
        self.outputs = outputs
        self.dtypes = dtypes  # the dtype each output must have
        self.fixed = fixed  # prepared at allocate time (its outputs are dynamic)
        self.prepare = prepare  # prepares the op for its current input arrays
        self.variants: dict[tuple, Prepared] = {}

    def prepared(self, inputs: tuple) -> Prepared:
        if self.fixed is not None:
            return self.fixed
        key = tuple(None if a is None else a.shape for a in inputs)
        entry = self.variants.get(key)
        if entry is None:
            entry = self.prepare(inputs)
            if len(self.variants) >= MAX_VARIANTS:
                del self.variants[next(iter(self.variants))]
            self.variants[key] = entry
        return entry


def run_dynamic(op: DynamicOp, _inputs, _outputs) -> None:
    arrays = op.arrays
    inputs = tuple(arrays[t] if t >= 0 else None for t in op.inputs)
    eval_fn, record, specs = op.prepared(inputs)
    if specs is None:
        outputs: list | tuple = [None] * len(op.outputs)
        eval_fn(record, inputs, outputs)
        for value, dtype in zip(outputs, op.dtypes, strict=True):
            _check_output(op, value, dtype)
    else:
        outputs = tuple(np.empty(spec.shape, spec.dtype) for spec in specs)
        eval_fn(record, inputs, outputs)
    for t, value in zip(op.outputs, outputs, strict=True):
        arrays[t] = value


def _check_output(op: DynamicOp, value, dtype) -> None:
    """A kernel's dynamic output: an array of the declared dtype, within the limits."""
    if not isinstance(value, np.ndarray) or value.dtype != dtype:
        got = type(value).__name__ if not isinstance(value, np.ndarray) else value.dtype.name
        raise DTypeError(f"{op.describe}: computed {got} for a {np.dtype(dtype).name} output")
    if value.ndim > MAX_RANK or value.nbytes > MAX_TENSOR_BYTES:
        raise ShapeError(
            f"{op.describe}: an output grew to shape {list(value.shape)} "
            f"({num_elements(value.shape) * value.itemsize} bytes), over the "
            f"{MAX_TENSOR_BYTES}-byte limit per tensor")
