"""allocate_tensors(): prepare every op once, plan the arena, build the invoke() list.

Steps, in order (the interpreter's public class only wraps this):

1. ``check_supported``: every op has a kernel and every tensor an element type numpy can
   hold -- otherwise one UnsupportedOpError lists *all* offending ops.
2. Shape propagation: ops are prepared in execution order; each prepare() sees the
   current shapes of its inputs (after resize_tensor_input) and returns its output
   shapes. Kernels' temporaries (im2col matrices, accumulators) come from one Workspace
   shared by all ops (kernels/base.py), persistent buffers from scratch(). An op whose
   inputs are all constants is evaluated right away and its outputs become constants
   (TFLite does the same for e.g. DEQUANTIZE and CONCATENATION of constants) -- when
   its outputs are small (FOLD_ALWAYS_BYTES, FOLD_GROWTH below); it then costs nothing
   per invoke().
3. Arena: lifetimes and offsets from planner.py; one aligned uint8 buffer; every
   non-constant tensor is a numpy view into it. Folded constants, work buffers and the
   arena together stay under the memory limit (memory.py), each checked before it is
   allocated.
4. The flat list of ``(eval, record, input arrays, output arrays)`` tuples that
   invoke() runs without any lookup.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from . import planner
from .errors import DTypeError, EdgeliteError, ShapeError, UnsupportedOpError
from .kernels import KERNELS, OpContext, TensorInfo
from .kernels.base import Chosen, Workspace
from .memory import (MemoryBudget, check_limit, default_memory_limit, gc_paused,
                     out_of_memory_as_error)
from .model import MAX_RANK, MAX_TENSOR_BYTES, Operator, Subgraph
from .model_objects import num_elements
from .names import quoted
from .kernel_set import DEFAULT_CONFIG, QuantConfig

# Folding an all-constant op at allocate time turns its outputs into constants (kernels
# that need a constant operand, e.g. a convolution's filter behind a DEQUANTIZE, rely on
# it). A tiny file can declare huge outputs (FILL of a 2**29-element shape from 12
# bytes), so an op is folded only when its outputs take at most FOLD_ALWAYS_BYTES, or at
# most FOLD_GROWTH times the bytes of the file constants they are computed from (int8
# -> float32 DEQUANTIZE is 4x, float16 -> float32 2x). Other all-constant ops run on
# every invoke() like any op: their outputs live in the arena, under the memory limit.
FOLD_ALWAYS_BYTES = 2**20
FOLD_GROWTH = 8

# Ops that call other subgraphs; edgelite executes subgraph 0 only.
CONTROL_FLOW_OPS = {"WHILE", "IF", "CALL_ONCE", "CALL", "STABLEHLO_WHILE", "STABLEHLO_CASE",
                    "STABLEHLO_COMPOSITE"}

Step = tuple[Callable, Any, tuple, tuple]


@dataclass(frozen=True)
class Allocation:
    shapes: tuple[tuple[int, ...], ...]  # current shape of every tensor
    arrays: tuple[np.ndarray | None, ...]  # arena view or constant per tensor (None: unused)
    constants: frozenset[int]  # tensors read-only to the user (file constants + folded)
    steps: tuple[Step, ...]  # what invoke() runs, in order
    step_ops: tuple[int, ...]  # the operator index of each step (for the profiler)
    arena: np.ndarray | None
    arena_size: int  # planned bytes (high-water mark)
    offsets: dict[int, int]  # tensor -> arena offset


def _describe(op: Operator, subgraph: Subgraph) -> str:
    outs = [subgraph.tensors[t].name for t in op.outputs if t >= 0]
    target = f" (output {quoted(outs[0])})" if outs else ""
    name = f"CUSTOM {quoted(op.custom_code)}" if op.name == "CUSTOM" else op.name
    return f"operator {op.index} {name}{target}"


def check_supported(subgraph: Subgraph) -> None:
    problems = []
    for op in subgraph.operators:
        reason = None
        if op.name in CONTROL_FLOW_OPS:
            reason = "calls other subgraphs; only subgraph 0 is executed"
        elif op.name.startswith("UNKNOWN_BUILTIN_"):
            reason = f"unknown builtin code {op.builtin_code} (newer schema than edgelite's?)"
        elif op.name not in KERNELS:
            reason = "custom op, no kernel" if op.name == "CUSTOM" else "no kernel"
        elif -1 in op.outputs:
            reason = "an output is omitted (-1)"
        else:
            for t in op.inputs + op.outputs:
                tensor = subgraph.tensors[t] if t >= 0 else None
                if tensor is None:
                    continue
                if tensor.dtype is None or tensor.dtype.kind == "O":
                    reason = f"tensor {quoted(tensor.name)} has type {tensor.type_name}"
                elif tensor.is_sparse:
                    reason = f"tensor {quoted(tensor.name)} is sparse"
                if reason:
                    break
        if reason:
            problems.append(f"  {_describe(op, subgraph)}: {reason}")
    for t in subgraph.inputs + subgraph.outputs:
        tensor = subgraph.tensors[t]
        if tensor.dtype is None or tensor.dtype.kind == "O":
            problems.append(f"  model input/output tensor {t} {quoted(tensor.name)} has type "
                            f"{tensor.type_name}")
    if problems:
        raise UnsupportedOpError(
            f"edgelite's interpreter cannot run this model ({len(problems)} unsupported "
            "item(s)):\n" + "\n".join(problems)
        )


def _prepare_op(op: Operator, subgraph: Subgraph, shapes, values, infos,
                quant: QuantConfig = DEFAULT_CONFIG, threads: int = 1,
                workspace: Workspace | None = None):
    """``infos``: the TensorInfo of each tensor, made on first use (None: not yet, or
    stale since its shape or value changed)."""
    def info(t: int) -> TensorInfo | None:
        if t < 0:
            return None
        cached = infos[t]
        if cached is None:
            tensor = subgraph.tensors[t]
            cached = infos[t] = TensorInfo(t, tensor.name, shapes[t], tensor.dtype,
                                           values.get(t), tensor.quantization,
                                           is_variable=tensor.is_variable)
        return cached

    ctx = OpContext(op.index, op.name, op.options, tuple(info(t) for t in op.inputs),
                    tuple(info(t) for t in op.outputs), quant, threads, workspace,
                    intermediates=tuple(info(t) for t in op.intermediates))
    if workspace is not None:
        workspace.begin_op()
    kernel = KERNELS[op.name]
    try:
        specs, record = kernel.prepare(ctx)
    except EdgeliteError:
        raise
    except Exception as exc:  # a kernel bug or an odd shape numpy refuses: name the op
        raise ShapeError(f"{ctx.describe()}: prepare failed: {type(exc).__name__}: {exc}") \
            from exc
    for t, spec in zip(op.outputs, specs, strict=True):
        tensor = subgraph.tensors[t]
        if spec.dtype != tensor.dtype:
            raise DTypeError(
                f"{ctx.describe()}: computes {spec.dtype.name} but the file declares tensor "
                f"{quoted(tensor.name)} as {tensor.dtype.name}"
            )
        if len(spec.shape) > MAX_RANK:
            raise ShapeError(
                f"{ctx.describe()}: output {quoted(tensor.name)} would have "
                f"{len(spec.shape)} dimensions, more than the {MAX_RANK} numpy supports"
            )
        nbytes = num_elements(spec.shape) * spec.dtype.itemsize
        if nbytes > MAX_TENSOR_BYTES:
            raise ShapeError(
                f"{ctx.describe()}: output shape {_dims(spec.shape)} needs {nbytes} bytes, "
                f"over the {MAX_TENSOR_BYTES}-byte limit per tensor"
            )
    return kernel, specs, record


def _dims(shape) -> str:
    """A shape for a message, cut short when a file declares thousands of dimensions."""
    dims = [int(d) for d in shape]
    return str(dims) if len(dims) <= 8 else f"[{', '.join(map(str, dims[:8]))}, ...] " \
        f"({len(dims)} dimensions)"


def _check_inputs(subgraph: Subgraph, input_shapes: dict[int, tuple[int, ...]]) -> None:
    tensors = subgraph.tensors
    for index, shape in input_shapes.items():
        name = quoted(tensors[index].name)
        if any(d < 0 for d in shape):
            raise ShapeError(
                f"input tensor {name} (index {index}) has unknown dimensions "
                f"{_dims(shape)}; call resize_tensor_input({index}, shape) first"
            )
        if len(shape) > MAX_RANK:
            raise ShapeError(
                f"input tensor {name} (index {index}) has {len(shape)} dimensions, more than "
                f"the {MAX_RANK} numpy supports"
            )
        nbytes = num_elements(shape) * tensors[index].dtype.itemsize
        if nbytes > MAX_TENSOR_BYTES:
            raise ShapeError(
                f"input tensor {name} (index {index}) of shape {_dims(shape)} needs {nbytes} "
                f"bytes, over the {MAX_TENSOR_BYTES}-byte limit per tensor"
            )


def _all_empty(op: Operator, sizes: dict[int, int]) -> bool:
    """True when op has outputs and every one of them holds zero bytes (ops without
    outputs, e.g. ASSIGN_VARIABLE, always run)."""
    return bool(op.outputs) and all(sizes.get(t, 1) == 0 for t in op.outputs)


@dataclass
class _Prepared:
    ops: list  # (op, kernel, record) of the ops invoke() runs
    folded: dict[int, int]  # folded constant -> bytes of file constants it comes from


def _prepare_all(subgraph: Subgraph, shapes: list, values: dict, budget: MemoryBudget,
                 quant: QuantConfig, threads: int) -> _Prepared:
    """Prepare every op in order (shape propagation) and fold the all-constant ops whose
    outputs are small, or not much bigger than the file constants they come from."""
    prepared = _Prepared([], {})
    infos: list[TensorInfo | None] = [None] * len(subgraph.tensors)
    workspace = Workspace(budget)  # the ops' temporaries share memory
    for op in subgraph.operators:
        kernel, specs, record = _prepare_op(op, subgraph, shapes, values, infos, quant,
                                            threads, workspace)
        for t, spec in zip(op.outputs, specs, strict=True):
            if shapes[t] != tuple(spec.shape):
                shapes[t] = tuple(spec.shape)
                infos[t] = None
        live_inputs = {t for t in op.inputs if t >= 0}
        if live_inputs and all(t in values for t in live_inputs):
            source = sum(prepared.folded.get(t, values[t].nbytes) for t in live_inputs)
            nbytes = sum(num_elements(spec.shape) * spec.dtype.itemsize for spec in specs)
            if nbytes <= max(FOLD_ALWAYS_BYTES, FOLD_GROWTH * source):
                budget.take_constant(_describe(op, subgraph), nbytes)
                outs = tuple(np.zeros(spec.shape, spec.dtype) for spec in specs)
                kernel.eval(record, tuple(values.get(t) for t in op.inputs), outs)
                for t, arr in zip(op.outputs, outs, strict=True):
                    arr.setflags(write=False)
                    values[t] = arr
                    infos[t] = None
                    prepared.folded[t] = source
                continue
        prepared.ops.append((op, kernel, record))
    return prepared


def reset_variables(subgraph: Subgraph, arrays) -> None:
    """Every variable tensor back to its initial value, as TFLite's ResetVariableTensor
    (tensorflow/lite/core/api/tensor_utils.cc) does after allocating and on
    ResetVariableTensors(): each byte set to the zero point for int8 tensors (an LSTM's
    output state starts at real 0), to 0 for every other type."""
    for tensor in subgraph.tensors:
        array = arrays[tensor.index]
        if not tensor.is_variable or array is None or not array.flags.writeable:
            continue
        fill = 0
        if tensor.dtype == np.int8 and tensor.quantization is not None \
                and len(tensor.quantization.zero_point):
            fill = int(tensor.quantization.zero_point[0]) & 0xFF  # memset's byte
        array.reshape(-1).view(np.uint8).fill(fill)


@out_of_memory_as_error("allocate_tensors()")
@gc_paused()
def allocate(subgraph: Subgraph, input_shapes: dict[int, tuple[int, ...]],
             preserve_all_tensors: bool = False, keep_alive=(),
             quant: QuantConfig = DEFAULT_CONFIG, threads: int = 1,
             memory_limit: int | None = None) -> Allocation:
    """(With the garbage collector paused: memory.gc_paused.)

    ``keep_alive``: more tensors (signature outputs) that must survive invoke()
    like graph outputs; ``quant``: which LiteRT integer arithmetic the kernels follow;
    ``threads``: how many threads big kernels may split their work over;
    ``memory_limit``: bytes the arena, folded constants and kernels' work buffers may
    take together (None: default_memory_limit()); a plan over it is refused before
    anything is allocated."""
    check_supported(subgraph)
    _check_inputs(subgraph, input_shapes)
    tensors = subgraph.tensors
    shapes: list[tuple[int, ...]] = [t.shape for t in tensors]
    values: dict[int, np.ndarray] = {t.index: t.data for t in tensors if t.data is not None}
    for index, shape in input_shapes.items():
        shapes[index] = tuple(shape)
    memory_limit = check_limit(memory_limit)
    budget = MemoryBudget(default_memory_limit() if memory_limit is None else memory_limit)

    # 1. Prepare every op in order (shape propagation); fold all-constant ops.
    prepared = _prepare_all(subgraph, shapes, values, budget, quant, threads)
    ops = prepared.ops

    # 2. Plan the arena over the ops that remain.
    planned = {t for op, _, _ in ops for t in op.inputs + op.outputs if t >= 0}
    planned.update(subgraph.inputs)
    planned.difference_update(values)
    sizes = {t: num_elements(shapes[t]) * tensors[t].dtype.itemsize for t in planned}
    # Inputs and (non-constant) variables are allocated first and never freed.
    persistent = list(subgraph.inputs) + [t.index for t in tensors if t.is_variable]
    lifetimes = planner.compute_lifetimes(
        [op.inputs for op, _, _ in ops], [op.outputs for op, _, _ in ops],
        persistent, list(subgraph.outputs) + list(keep_alive), planned, preserve_all_tensors)
    plan = planner.plan_arena(lifetimes, sizes)
    names = {t: tensors[t].name for t in list(sizes) + list(prepared.folded)}
    budget.check_arena(plan.size, names, sizes,
                       {t: values[t].nbytes for t in prepared.folded})

    # 3. One aligned buffer; every planned tensor is a view into it.
    arena = np.zeros(plan.size + planner.ALIGNMENT, dtype=np.uint8)
    base = (-arena.ctypes.data) % planner.ALIGNMENT
    arrays: list[np.ndarray | None] = [None] * len(tensors)
    for t, offset in plan.offsets.items():
        dtype = tensors[t].dtype
        if sizes[t] == 0:
            arrays[t] = np.zeros(shapes[t], dtype)
            continue
        arrays[t] = np.ndarray(shapes[t], dtype, buffer=arena, offset=base + offset)
    for t, value in values.items():
        arrays[t] = value
    reset_variables(subgraph, arrays)

    # 4. The flat invoke() list (a Chosen record names the implementation to call). An op
    # whose outputs are all empty (a batch of 0) has nothing to compute and is left out.
    ops = [entry for entry in ops if not _all_empty(entry[0], sizes)]
    steps = tuple(
        (*((record.eval, record.record) if isinstance(record, Chosen) else (kernel.eval,
                                                                             record)),
         tuple(arrays[t] if t >= 0 else None for t in op.inputs),
         tuple(arrays[t] for t in op.outputs))
        for op, kernel, record in ops)
    step_ops = tuple(op.index for op, _, _ in ops)
    return Allocation(tuple(shapes), tuple(arrays), frozenset(values), steps, step_ops, arena,
                      plan.size, dict(plan.offsets))
