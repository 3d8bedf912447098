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

* an op whose output shape depends on the *values* of an input (SHAPE_OPERANDS: a
  RESHAPE's shape, a FILL's dims, a TILE's multiples ...) that is not a constant after
  allocate_tensors() folded what it could is prepared at invoke too, with those inputs'
  current values given to its prepare() as constants; the cache key then holds the
  values as well as the shapes. TFLite does the same: each of these kernels' Prepare
  calls SetTensorToDynamic(output) when the operand is not constant (reshape.cc,
  fill.cc, range.cc, tile.cc, broadcast_to.cc, strided_slice.cc, pad.cc, mirror_pad.cc,
  resize_bilinear.cc, resize_nearest_neighbor.cc, expand_dims.cc, one_hot.cc,
  transpose.cc, reduce.cc, split.cc, split_v.cc, arg_min_max.cc, space_to_batch_nd.cc,
  batch_to_space_nd.cc, topk_v2.cc, transpose_conv.cc, rfft2d.cc) and resizes it in Eval.

Either way the op's step is ``(run_dynamic, DynamicOp, (), ())``: it reads its inputs
from, and stores its outputs into, the allocation's table of current arrays. Static ops
never read dynamic tensors, so a graph without any runs exactly as before.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from edgelite.errors import DTypeError, ShapeError
from .memory import DynamicMemory
from .loader.model import MAX_RANK, MAX_TENSOR_BYTES
from .loader.model_objects import num_elements
from .kernels import OPS

MAX_VARIANTS = 8  # input-shape signatures prepared per op (see the module docstring)

# Inputs whose values fix an op's output shape (see the module docstring): op name ->
# input positions (OpDef.shape_operands). SLICE has none: its kernel reads a computed
# begin / size itself (kernels/slicing.py).
SHAPE_OPERANDS: dict[str, tuple[int, ...]] = {
    name: op.shape_operands for name, op in OPS.items() if op.shape_operands}

# Ops whose outputs depend on their input's shape only: allocate_tensors() folds them
# whenever that shape is known (TFLite's shape.cc computes SHAPE in Prepare, as a
# kTfLitePersistentRo tensor later ops treat as a constant).
SHAPE_ONLY = frozenset(name for name, op in OPS.items() if op.shape_only)


def computed_operands(name: str, inputs: tuple[int, ...], constants) -> tuple[int, ...]:
    """Positions of an op's SHAPE_OPERANDS that are present and not in ``constants``."""
    return tuple(i for i in SHAPE_OPERANDS.get(name, ())
                 if i < len(inputs) and inputs[i] >= 0 and inputs[i] not in constants)


# (eval, record, output specs); specs None: the outputs are dynamic (eval fills a list)
Prepared = tuple[Callable, object, tuple | None]


class DynamicOp:
    """One op around dynamic tensors (see the module docstring)."""

    __slots__ = ("describe", "arrays", "inputs", "outputs", "dtypes", "fixed", "prepare",
                 "variants", "keyed", "memory")

    def __init__(self, describe: str, arrays: list, inputs: tuple[int, ...],
                 outputs: tuple[int, ...], dtypes: tuple, fixed: Prepared | None = None,
                 prepare: Callable[[tuple], Prepared] | None = None,
                 keyed: tuple[int, ...] = (), memory: DynamicMemory | None = None):
        self.describe = describe  # "operator 3 WHILE (output 'y')", for messages
        self.arrays = arrays  # the allocation's current array of every tensor
        self.inputs = inputs
        self.outputs = outputs
        self.dtypes = dtypes  # the dtype each output must have
        self.fixed = fixed  # prepared at allocate time (its outputs are dynamic)
        self.prepare = prepare  # prepares the op for its current input arrays
        self.variants: dict[tuple, Prepared] = {}
        self.keyed = keyed  # input positions whose values prepare() reads (SHAPE_OPERANDS)
        self.memory = memory  # the allocation's running total (memory.DynamicMemory)

    def prepared(self, inputs: tuple) -> Prepared:
        if self.fixed is not None:
            return self.fixed
        key = tuple(None if a is None else a.shape for a in inputs)
        if self.keyed:  # small int vectors and scalars (shapes, axes, paddings)
            key += tuple(inputs[i].tobytes() for i in self.keyed)
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
        if op.memory is not None:  # the kernel made them: charged as soon as they exist
            op.memory.charge(op.describe, op.outputs, [v.nbytes for v in outputs])
    else:
        if op.memory is not None:  # charged before they are allocated
            op.memory.charge(op.describe, op.outputs,
                             [num_elements(s.shape) * np.dtype(s.dtype).itemsize for s in specs])
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
