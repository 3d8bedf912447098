"""allocate_tensors(): prepare every op once, plan the arena, build the invoke() list.

Steps, in order (the interpreter's public class only wraps this):

1. ``check_supported``: every op has a kernel and every tensor an element type numpy can
   hold -- otherwise one UnsupportedOpError lists *all* offending ops.
2. Shape propagation: ops are prepared in execution order; each prepare() sees the
   current shapes of its inputs (after resize_tensor_input) and returns its output
   shapes. Kernels' temporaries (im2col matrices, accumulators) come from one Workspace
   shared by all ops (kernels/base.py), persistent buffers from scratch(). An op whose inputs are all constants is evaluated right away and its outputs
   become constants (TFLite does the same for e.g. DEQUANTIZE and CONCATENATION of
   constants); it then costs nothing per invoke().
3. Arena: lifetimes and offsets from planner.py; one aligned uint8 buffer; every
   non-constant tensor is a numpy view into it.
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
from .kernels.base import Chosen, Workspace, num_elements
from .model import MAX_TENSOR_BYTES, Operator, Subgraph
from .quant_config import DEFAULT_CONFIG, QuantConfig

MAX_ARENA_BYTES = 2**33  # 8 GiB: refuse plans beyond this instead of trying to allocate

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
    target = f" (output '{outs[0]}')" if outs else ""
    name = f"CUSTOM '{op.custom_code}'" if op.name == "CUSTOM" else op.name
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
                    reason = f"tensor '{tensor.name}' has type {tensor.type_name}"
                elif tensor.is_sparse:
                    reason = f"tensor '{tensor.name}' is sparse"
                if reason:
                    break
        if reason:
            problems.append(f"  {_describe(op, subgraph)}: {reason}")
    for t in subgraph.inputs + subgraph.outputs:
        tensor = subgraph.tensors[t]
        if tensor.dtype is None or tensor.dtype.kind == "O":
            problems.append(f"  model input/output tensor {t} '{tensor.name}' has type "
                            f"{tensor.type_name}")
    if problems:
        raise UnsupportedOpError(
            f"edgelite's interpreter cannot run this model ({len(problems)} unsupported "
            "item(s)):\n" + "\n".join(problems)
        )


def _prepare_op(op: Operator, subgraph: Subgraph, shapes, values,
                quant: QuantConfig = DEFAULT_CONFIG, threads: int = 1,
                workspace: Workspace | None = None):
    def info(t: int) -> TensorInfo | None:
        if t < 0:
            return None
        tensor = subgraph.tensors[t]
        return TensorInfo(t, tensor.name, shapes[t], tensor.dtype, values.get(t),
                          tensor.quantization)

    ctx = OpContext(op.index, op.name, op.options, tuple(info(t) for t in op.inputs),
                    tuple(info(t) for t in op.outputs), quant, threads, workspace)
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
        declared = subgraph.tensors[t].dtype
        if spec.dtype != declared:
            raise DTypeError(
                f"{ctx.describe()}: computes {spec.dtype.name} but the file declares tensor "
                f"'{subgraph.tensors[t].name}' as {declared.name}"
            )
        nbytes = num_elements(spec.shape) * spec.dtype.itemsize
        if nbytes > MAX_TENSOR_BYTES:
            raise ShapeError(
                f"{ctx.describe()}: output shape {list(spec.shape)} needs {nbytes} bytes, "
                f"over the {MAX_TENSOR_BYTES}-byte limit per tensor"
            )
    return kernel, specs, record


def allocate(subgraph: Subgraph, input_shapes: dict[int, tuple[int, ...]],
             preserve_all_tensors: bool = False, keep_alive=(),
             quant: QuantConfig = DEFAULT_CONFIG, threads: int = 1) -> Allocation:
    """``keep_alive``: more tensors (signature outputs) that must survive invoke()
    like graph outputs; ``quant``: which LiteRT integer arithmetic the kernels follow;
    ``threads``: how many threads big kernels may split their work over."""
    check_supported(subgraph)
    tensors = subgraph.tensors
    shapes: list[tuple[int, ...]] = [t.shape for t in tensors]
    values: dict[int, np.ndarray] = {t.index: t.data for t in tensors if t.data is not None}
    for index, shape in input_shapes.items():
        if any(d < 0 for d in shape):
            raise ShapeError(
                f"input tensor '{tensors[index].name}' (index {index}) has unknown dimensions "
                f"{list(shape)}; call resize_tensor_input({index}, shape) first"
            )
        nbytes = num_elements(tuple(shape)) * tensors[index].dtype.itemsize
        if nbytes > MAX_TENSOR_BYTES:
            raise ShapeError(
                f"input tensor '{tensors[index].name}' (index {index}) of shape {list(shape)} "
                f"needs {nbytes} bytes, over the {MAX_TENSOR_BYTES}-byte limit per tensor"
            )
        shapes[index] = tuple(shape)

    # 1. Prepare every op in order (shape propagation); fold all-constant ops.
    prepared = []  # (op, kernel, record) of the ops invoke() runs
    workspace = Workspace()  # the ops' temporaries share memory
    for op in subgraph.operators:
        kernel, specs, record = _prepare_op(op, subgraph, shapes, values, quant, threads,
                                            workspace)
        for t, spec in zip(op.outputs, specs, strict=True):
            shapes[t] = tuple(spec.shape)
        live_inputs = [t for t in op.inputs if t >= 0]
        if live_inputs and all(t in values for t in live_inputs):
            outs = tuple(np.zeros(spec.shape, spec.dtype) for spec in specs)
            kernel.eval(record, tuple(values.get(t) for t in op.inputs), outs)
            for t, arr in zip(op.outputs, outs, strict=True):
                arr.setflags(write=False)
                values[t] = arr
        else:
            prepared.append((op, kernel, record))

    # 2. Plan the arena over the ops that remain.
    planned = {t for op, _, _ in prepared for t in op.inputs + op.outputs if t >= 0}
    planned.update(subgraph.inputs)
    planned -= set(values)
    sizes = {t: num_elements(shapes[t]) * tensors[t].dtype.itemsize for t in planned}
    # Inputs and (non-constant) variables are allocated first and never freed.
    persistent = list(subgraph.inputs) + [t.index for t in tensors if t.is_variable]
    lifetimes = planner.compute_lifetimes(
        [op.inputs for op, _, _ in prepared], [op.outputs for op, _, _ in prepared],
        persistent, list(subgraph.outputs) + list(keep_alive), planned, preserve_all_tensors)
    plan = planner.plan_arena(lifetimes, sizes)
    if plan.size > MAX_ARENA_BYTES:
        raise ShapeError(
            f"the tensors need a {plan.size}-byte arena, over the {MAX_ARENA_BYTES}-byte "
            "limit (are the input shapes right?)"
        )

    # 3. One aligned buffer; every planned tensor is a view into it.
    arena = np.zeros(plan.size + planner.ALIGNMENT, dtype=np.uint8)
    base = (-arena.ctypes.data) % planner.ALIGNMENT
    arrays: list[np.ndarray | None] = [None] * len(tensors)
    for t, offset in plan.offsets.items():
        dtype = tensors[t].dtype
        if sizes[t] == 0:
            arrays[t] = np.zeros(shapes[t], dtype)
            continue
        start = base + offset
        arrays[t] = arena[start:start + sizes[t]].view(dtype).reshape(shapes[t])
    for t, value in values.items():
        arrays[t] = value

    # 4. The flat invoke() list (a Chosen record names the implementation to call).
    steps = tuple(
        (*((record.eval, record.record) if isinstance(record, Chosen) else (kernel.eval,
                                                                             record)),
         tuple(arrays[t] if t >= 0 else None for t in op.inputs),
         tuple(arrays[t] for t in op.outputs))
        for op, kernel, record in prepared)
    step_ops = tuple(op.index for op, _, _ in prepared)
    return Allocation(tuple(shapes), tuple(arrays), frozenset(values), steps, step_ops, arena,
                      plan.size, dict(plan.offsets))
