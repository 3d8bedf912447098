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
   per invoke(). SHAPE and RANK (dynamic.SHAPE_ONLY) fold whenever their input's shape
   is known, constant or not, so SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE chains
   become constant shapes once resize_tensor_input() has fixed the inputs. An op whose
   output is a variable tensor is never folded (RUN_ONCE_OPS below).
3. Arena: lifetimes and offsets from planner.py; one aligned uint8 buffer; every
   non-constant tensor is a numpy view into it. Folded constants, work buffers and the
   arena together stay under the memory limit (memory.py), each checked before it is
   allocated.
4. The flat list of ``(eval, record, input arrays, output arrays)`` tuples that
   invoke() runs without any lookup (runloop.py). With the native backend, a record
   with a ``native_step(inputs, outputs)`` method may return a step of its own there
   (a C kernel bound to the arena views, run by the C loop without Python); None keeps
   its eval. Adjacent native steps may then fuse into one (fused_steps.py).

Subgraph calls: an op that calls another subgraph (WHILE, IF, CALL_ONCE) gets the
callee prepared by ``program.prepare`` (program.py) -- this same function, for the
callee's input shapes -- and keeps it in its record. Ops marked ``stateful`` in their
OpDef are never folded. RESOURCE tensors (resource handles) are int32 scalars here, the
resource id, as in LiteRT (var_handle.cc writes an int32).

Dynamic tensors (outputs whose shape only an invoke tells, kernels/base.py): kept out of
the arena; the op producing them and every op reading them become
``dynamic.DynamicOp`` steps, which read and write the allocation's ``arrays`` table (a
list then, updated at invoke). So does an op whose shape operand (dynamic.SHAPE_OPERANDS)
is still computed after folding: it is prepared at invoke with the operand's values,
its outputs checked against the per-tensor and memory limits before they are made.
Without dynamic tensors nothing of this is built.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from . import fused_steps, planner
from .dynamic import SHAPE_ONLY, DynamicOp, computed_operands, run_dynamic
from edgelite.errors import (DTypeError, EdgeliteError, MemoryLimitError, ShapeError,
                             UnsupportedOpError)
from .kernels import OPS, OpContext, OutputSpec, TensorInfo
from .kernels.base import Chosen, Workspace, storage_dtype
from .memory import (DynamicMemory, MemoryBudget, check_limit, default_memory_limit,
                     gc_paused, out_of_memory_as_error)
from .loader.model import MAX_RANK, MAX_TENSOR_BYTES, Operator, Subgraph
from .loader.model_objects import num_elements
from edgelite.names import quoted
from .runloop import quiet
from .settings import DEFAULT_SETTINGS, Settings
from .micro.uint8 import uint8_refusal
from .static_check import _describe, check_supported, kernel_for

# Folding an all-constant op at allocate time turns its outputs into constants (kernels
# that need a constant operand, e.g. a convolution's filter behind a DEQUANTIZE, rely on
# it). A tiny file can declare huge outputs (FILL of a 2**29-element shape from 12
# bytes), so an op is folded only when its outputs take at most FOLD_ALWAYS_BYTES, or at
# most FOLD_GROWTH times the bytes of the file constants they are computed from (int8
# -> float32 DEQUANTIZE is 4x, float16 -> float32 2x). Other all-constant ops run on
# every invoke() like any op: their outputs live in the arena, under the memory limit.
FOLD_ALWAYS_BYTES = 2**20
FOLD_GROWTH = 8

# Ops never folded at allocate time (they call subgraphs or keep state: OpDef.stateful).
STATEFUL_OPS = frozenset(name for name, op in OPS.items() if op.stateful)

# An all-constant op whose output is a variable tensor (TF's float16 LSTM: DEQUANTIZE of a
# float16 zero constant writes each state) is not folded: the tensor stays a variable,
# updated by the ops that read it and zeroed by reset_all_variables(). Such an op runs on
# every invoke() like in LiteRT (measured: an ADD of constants rewrites the state each
# time) -- except a DEQUANTIZE, which LiteRT runs once in the interpreter's life, on its
# first invoke (dequantize.cc caches the output of a constant input:
# float_dequantized_weights_initialized; not again after reset_all_variables() or a
# resize and new allocate_tensors()).
RUN_ONCE_OPS = frozenset({"DEQUANTIZE"})

Step = tuple[Callable, Any, tuple, tuple]


@dataclass(frozen=True)
class Allocation:
    shapes: tuple[tuple[int, ...], ...]  # current shape of every tensor
    # arena view or constant per tensor (None: unused); a list, updated at invoke, when
    # the subgraph has dynamic tensors (their current arrays)
    arrays: tuple[np.ndarray | None, ...] | list
    constants: frozenset[int]  # tensors read-only to the user (file constants + folded)
    steps: tuple[Step, ...]  # what invoke() runs, in order
    step_ops: tuple[int, ...]  # the operator index of each step (for the profiler)
    arena: np.ndarray | None
    arena_size: int  # planned bytes (high-water mark)
    offsets: dict[int, int]  # tensor -> arena offset
    subgraph: int = 0  # the subgraph's index
    dynamic: frozenset[int] = frozenset()  # tensors whose shape an invoke tells
    variables: tuple[tuple[np.ndarray, int], ...] = ()  # variable tensors, reset value

    def reset_variables(self) -> None:
        """Variable tensors back to their initial value: the zero point for int8, else 0
        (LiteRT's ResetVariableTensor, tensor_utils.cc, a memset of that byte)."""
        for array, fill in self.variables:
            array.fill(fill)


@dataclass(frozen=True)
class _Setting:
    """What every op of one allocation is prepared with."""

    subgraph: Subgraph
    dtypes: tuple  # storage_dtype of every tensor
    settings: Settings = DEFAULT_SETTINGS  # the Interpreter's (kernel set, threads, ...)
    program: Any = None  # program.Program, for ops that call subgraphs or keep state

    def info(self, t: int, shape, value) -> TensorInfo:
        tensor = self.subgraph.tensors[t]
        return TensorInfo(t, tensor.name, tuple(shape), self.dtypes[t], value,
                          tensor.quantization, is_variable=tensor.is_variable,
                          sparsity=tensor.sparsity)


def _check_kernel_set(op: Operator, setting: _Setting, where: Callable[[], str]) -> None:
    """What the kernel set refuses whatever the shapes: with kernels="micro", the ops TFLite
    Micro has no kernel for with their uint8 operands (micro/uint8.py). `where()` names the
    op (made for the message only: this runs for every op of a 100,000-op model)."""
    if setting.settings.quant.micro:
        refusal = uint8_refusal(op, setting.subgraph)
        if refusal:
            raise UnsupportedOpError(f"{where()}: {refusal}")


def _prepare_op(op: Operator, setting: _Setting, inputs: tuple, outputs: tuple,
                workspace: Workspace | None = None):
    """Run ``op``'s prepare() on operand infos ``inputs`` / ``outputs`` and check what it
    returns against the file: (kernel, output specs, record)."""
    subgraph = setting.subgraph
    # intermediates carry only quantization (an int8 LSTM's gate scales)
    intermediates = tuple(setting.info(t, subgraph.tensors[t].shape, None) if t >= 0 else None
                          for t in op.intermediates)
    ctx = OpContext(op.index, op.name, op.options, inputs, outputs, setting.settings.quant,
                    setting.settings.threads, workspace, subgraph.index, setting.program,
                    intermediates=intermediates, custom_options=op.custom_options,
                    custom_code=op.custom_code if op.name == "CUSTOM" else None)
    if workspace is not None:
        workspace.begin_op()
    kernel = kernel_for(op, setting.settings.custom_kernels)
    if kernel is None:
        raise UnsupportedOpError(f"{ctx.describe()}: no kernel")
    _check_kernel_set(op, setting, ctx.describe)
    try:
        specs, record = kernel.prepare(ctx)
        specs = tuple(specs)
    except EdgeliteError:
        raise
    except Exception as exc:  # a kernel bug or an odd shape numpy refuses: name the op
        raise ShapeError(f"{ctx.describe()}: prepare failed: {type(exc).__name__}: {exc}") \
            from exc
    if len(specs) != len(op.outputs) or not all(isinstance(s, OutputSpec) for s in specs):
        raise ShapeError(f"{ctx.describe()}: prepare() returned {len(specs)} value(s) for "
                         f"{len(op.outputs)} output(s); it must return one OutputSpec each")
    for t, spec in zip(op.outputs, specs, strict=True):
        tensor = subgraph.tensors[t]
        if spec.dtype != setting.dtypes[t]:
            raise DTypeError(
                f"{ctx.describe()}: computes {spec.dtype.name} but the file declares tensor "
                f"{quoted(tensor.name)} as {tensor.type_name.lower()}"
            )
        if spec.dynamic:
            continue  # its shape is a placeholder; dynamic.py checks the real one
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


def _as_step(kernel, record) -> tuple[Callable, Any]:
    """(eval, record) for the invoke() list (a Chosen record names the eval to call)."""
    return (record.eval, record.record) if isinstance(record, Chosen) else (kernel.eval, record)


def _prepare_at_invoke(op: Operator, setting: _Setting, values: dict, keyed: tuple,
                       inputs: tuple):
    """dynamic.DynamicOp.prepare: ``op`` prepared for its input arrays at invoke; the
    inputs at positions ``keyed`` (dynamic.SHAPE_OPERANDS) are given as constants, their
    current values (copied: the record may keep them)."""
    ins = tuple(None if t < 0 else setting.info(
        t, a.shape, _frozen(a) if i in keyed else values.get(t))
        for i, (t, a) in enumerate(zip(op.inputs, inputs)))
    outs = tuple(setting.info(t, setting.subgraph.tensors[t].shape, None) for t in op.outputs)
    limit = setting.settings.memory_limit
    budget = MemoryBudget(default_memory_limit() if limit is None else limit)
    kernel, specs, record = _prepare_op(op, setting, ins, outs, Workspace(budget))
    if not any(s.dynamic for s in specs):
        nbytes = sum(num_elements(s.shape) * s.dtype.itemsize for s in specs)
        if nbytes + budget.work > budget.limit:
            raise MemoryLimitError(
                f"{_describe(op, setting.subgraph)}: its outputs of shapes "
                f"{', '.join(_dims(s.shape) for s in specs)} would take {nbytes} bytes, over "
                f"the {budget.limit}-byte memory limit; check the input values, or pass "
                "Interpreter(memory_limit=...) to allow more")
    eval_fn, record = _as_step(kernel, record)
    return eval_fn, record, None if any(s.dynamic for s in specs) else tuple(specs)


def _frozen(array: np.ndarray) -> np.ndarray:
    value = np.array(array)
    value.setflags(write=False)
    return value


def _dims(shape) -> str:
    """A shape for a message, cut short when a file declares thousands of dimensions."""
    dims = [int(d) for d in shape]
    return str(dims) if len(dims) <= 8 else f"[{', '.join(map(str, dims[:8]))}, ...] " \
        f"({len(dims)} dimensions)"


def _check_inputs(subgraph: Subgraph, input_shapes: dict[int, tuple[int, ...]],
                  dtypes) -> None:
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
        nbytes = num_elements(shape) * dtypes[index].itemsize
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
    ops: list  # (op, kernel, record, mode) of the ops invoke() runs
    folded: dict[int, int]  # folded constant -> bytes of file constants it comes from
    dynamic: set[int]  # tensors whose shape only an invoke tells


# How an op of _Prepared.ops runs: prepared now with static outputs, prepared now with
# dynamic outputs, or prepared at invoke (it reads a dynamic tensor); or static, on the
# first invoke only (RUN_ONCE_OPS writing a variable tensor).
STATIC, DYNAMIC_OUTPUTS, AT_INVOKE, ONCE = "static", "dynamic outputs", "at invoke", "once"


def _writes_variable(op: Operator, subgraph: Subgraph) -> bool:
    return any(t >= 0 and subgraph.tensors[t].is_variable for t in op.outputs)


def prepared_at_invoke(op: Operator, dynamic, values) -> bool:
    """True when allocate_tensors() leaves ``op`` to be prepared at invoke: it reads a
    tensor in ``dynamic`` (shape known only then), or a shape operand of it
    (dynamic.SHAPE_OPERANDS) is still computed after folding (not in ``values``)."""
    return any(t in dynamic for t in op.inputs) or \
        bool(computed_operands(op.name, op.inputs, values))


def fold_source(op: Operator, subgraph: Subgraph, values, folded: Mapping[int, int]
                ) -> int | None:
    """When allocate_tensors() may fold ``op`` (every input a constant in ``values``, or a
    SHAPE / RANK: dynamic.SHAPE_ONLY; never a stateful or custom op, which may keep
    state, nor one writing a variable), the bytes of file constants its outputs come from
    (``folded``: those of earlier folded tensors); else None."""
    live = {t for t in op.inputs if t >= 0}
    if not live or op.name in STATEFUL_OPS or op.name == "CUSTOM" or \
            _writes_variable(op, subgraph):
        return None
    if op.name not in SHAPE_ONLY and any(t not in values for t in live):
        return None
    return sum(folded.get(t, values[t].nbytes) for t in live if t in values)


def output_bytes(specs) -> int:
    return sum(num_elements(spec.shape) * spec.dtype.itemsize for spec in specs)


def folds(specs, source: int) -> bool:
    """Whether outputs ``specs`` computed from ``source`` bytes of file constants are
    folded: small, or not much bigger than their source (FOLD_ALWAYS_BYTES, FOLD_GROWTH)."""
    return output_bytes(specs) <= max(FOLD_ALWAYS_BYTES, FOLD_GROWTH * source)


@dataclass(frozen=True)
class _Once:
    """A step run on the first invoke only: ``key`` (subgraph, operator) joins ``done``,
    the interpreter's program.State.ran_once (kept across allocations, as LiteRT keeps a
    node's op data)."""

    eval: Callable
    record: Any
    key: tuple[int, int]
    done: set


def _run_once(rec: _Once, inputs, outputs) -> None:
    if rec.key not in rec.done:
        rec.eval(rec.record, inputs, outputs)
        rec.done.add(rec.key)


def _prepare_all(setting: _Setting, shapes: list, values: dict, budget: MemoryBudget
                 ) -> _Prepared:
    """Prepare every op in order (shape propagation) and fold the all-constant ops whose
    outputs are small, or not much bigger than the file constants they come from."""
    subgraph = setting.subgraph
    prepared = _Prepared([], {}, set())
    infos: list[TensorInfo | None] = [None] * len(subgraph.tensors)
    workspace = Workspace(budget)  # the ops' temporaries share memory

    def info(t: int) -> TensorInfo | None:
        """The TensorInfo of each tensor, made on first use (None in ``infos``: not yet,
        or stale since its shape or value changed)."""
        if t < 0:
            return None
        if infos[t] is None:
            infos[t] = setting.info(t, shapes[t], values.get(t))
        return infos[t]

    for op in subgraph.operators:
        if prepared_at_invoke(op, prepared.dynamic, values):
            _check_kernel_set(op, setting, lambda: _describe(op, subgraph))  # refused now
            prepared.ops.append((op, None, None, AT_INVOKE))
            prepared.dynamic.update(op.outputs)
            continue
        kernel, specs, record = _prepare_op(op, setting, tuple(info(t) for t in op.inputs),
                                            tuple(info(t) for t in op.outputs), workspace)
        if any(spec.dynamic for spec in specs):
            prepared.ops.append((op, kernel, record, DYNAMIC_OUTPUTS))
            prepared.dynamic.update(op.outputs)
            for t, spec in zip(op.outputs, specs):  # -1: a dim only values tell (WHERE's
                if not spec.dynamic or -1 in spec.shape:  # rows): shown until an invoke
                    shapes[t] = tuple(spec.shape)
            continue
        for t, spec in zip(op.outputs, specs, strict=True):
            if shapes[t] != tuple(spec.shape):
                shapes[t] = tuple(spec.shape)
                infos[t] = None
        if _writes_variable(op, subgraph):
            once = op.name in RUN_ONCE_OPS and all(t in values for t in op.inputs if t >= 0)
            prepared.ops.append((op, kernel, record, ONCE if once else STATIC))
            continue
        source = fold_source(op, subgraph, values, prepared.folded)
        if source is not None and folds(specs, source):
            budget.take_constant(_describe(op, subgraph), output_bytes(specs))
            outs = tuple(np.zeros(spec.shape, spec.dtype) for spec in specs)
            with quiet():
                kernel.eval(record, tuple(values.get(t) for t in op.inputs), outs)
            for t, arr in zip(op.outputs, outs, strict=True):
                arr.setflags(write=False)
                values[t] = arr
                infos[t] = None
                prepared.folded[t] = source
            continue
        prepared.ops.append((op, kernel, record, STATIC))
    return prepared


def _step(entry, setting: _Setting, arrays, values: dict, memory: DynamicMemory) -> Step:
    """The invoke() step of one prepared op."""
    op, kernel, record, mode = entry
    if mode in (STATIC, ONCE):
        eval_fn, rec = _as_step(kernel, record)
        if mode == ONCE:
            state = getattr(setting.program, "state", None)
            done = state.ran_once if state is not None else set()
            eval_fn, rec = _run_once, _Once(eval_fn, rec, (setting.subgraph.index, op.index),
                                            done)
        inputs = tuple(arrays[t] if t >= 0 else None for t in op.inputs)
        outputs = tuple(arrays[t] for t in op.outputs)
        bind = getattr(rec, "native_step", None) if setting.settings.quant.native else None
        step = bind(inputs, outputs) if bind is not None and mode == STATIC else None
        return step or (eval_fn, rec, inputs, outputs)
    dtypes = tuple(setting.dtypes[t] for t in op.outputs)
    describe = _describe(op, setting.subgraph)
    if mode == DYNAMIC_OUTPUTS:
        fixed = (*_as_step(kernel, record), None)
        dyn = DynamicOp(describe, arrays, op.inputs, op.outputs, dtypes, fixed=fixed,
                        memory=memory)
    else:
        keyed = computed_operands(op.name, op.inputs, values)
        dyn = DynamicOp(describe, arrays, op.inputs, op.outputs, dtypes, keyed=keyed,
                        prepare=functools.partial(_prepare_at_invoke, op, setting, values,
                                                  keyed), memory=memory)
    return (run_dynamic, dyn, (), ())


def _variable_fill(tensor) -> int:
    """The value LiteRT resets a variable tensor to: its zero point if int8, else 0."""
    q = tensor.quantization
    if tensor.dtype == np.int8 and q is not None and q.zero_point.size:
        return int(q.zero_point[0])
    return 0


def _prepare_graph(subgraph: Subgraph, input_shapes: dict[int, tuple[int, ...]],
                   settings: Settings, program: Any):
    """allocate()'s first step: the checks, then every op prepared in order (its shapes
    found, all-constant ops folded). (setting, shapes, values, budget, prepared)."""
    check_supported(subgraph, settings.custom_kernels)
    tensors = subgraph.tensors
    dtypes = tuple(storage_dtype(t) for t in tensors)
    _check_inputs(subgraph, input_shapes, dtypes)
    shapes: list[tuple[int, ...]] = [t.shape for t in tensors]
    values: dict[int, np.ndarray] = {t.index: t.data for t in tensors if t.data is not None}
    for index, shape in input_shapes.items():
        shapes[index] = tuple(shape)
    memory_limit = check_limit(settings.memory_limit)
    budget = MemoryBudget(default_memory_limit() if memory_limit is None else memory_limit)
    setting = _Setting(subgraph, dtypes, settings, program)
    return setting, shapes, values, budget, _prepare_all(setting, shapes, values, budget)


@out_of_memory_as_error("propagate_shapes()")
@gc_paused()
def propagate_shapes(subgraph: Subgraph, settings: Settings = DEFAULT_SETTINGS
                     ) -> list[tuple[int, ...]]:
    """Every tensor's shape as allocate() plans it (a -1 dim: one only values tell), with
    nothing allocated or bound for invoke(): the converter's shape inference
    (converter/shape_inference.py), where the arena plan and the steps were a third of
    the time. Ops calling subgraphs or variables need allocate()'s program: not here."""
    return _prepare_graph(subgraph, {}, settings, None)[1]


@out_of_memory_as_error("allocate_tensors()")
@gc_paused()
def allocate(subgraph: Subgraph, input_shapes: dict[int, tuple[int, ...]],
             settings: Settings = DEFAULT_SETTINGS, keep_alive=(),
             program: Any = None) -> Allocation:
    """(With the garbage collector paused: memory.gc_paused.)

    ``settings`` (settings.py): the Interpreter's -- ``quant``, which LiteRT integer
    arithmetic the kernels follow; ``threads``, how many threads big kernels may split
    their work over; ``memory_limit``, bytes the arena, folded constants and kernels'
    work buffers may take together (None: default_memory_limit()), a plan over it refused
    before anything is allocated; ``custom_kernels``, CUSTOM op name -> Kernel, before
    the registered and built-in ones (kernels/custom); ``preserve_all_tensors``.
    ``keep_alive``: more tensors (signature outputs) that must survive invoke() like
    graph outputs. ``program`` (program.Program): the model's other subgraphs and its
    state, for ops that call subgraphs or use resource variables."""
    tensors = subgraph.tensors
    # 1. Prepare every op in order (shape propagation); fold all-constant ops.
    setting, shapes, values, budget, prepared = _prepare_graph(subgraph, input_shapes,
                                                               settings, program)
    dtypes = setting.dtypes
    ops = prepared.ops

    # 2. Plan the arena over the ops that remain (dynamic tensors live outside it).
    planned = {t for entry in ops for t in entry[0].inputs + entry[0].outputs if t >= 0}
    planned.update(subgraph.inputs)
    planned.difference_update(values)
    planned.difference_update(prepared.dynamic)
    strings = {t for t in planned if dtypes[t].kind == "O"}  # object arrays, not in the arena
    planned.difference_update(strings)
    sizes = {t: num_elements(shapes[t]) * dtypes[t].itemsize for t in planned}
    # Inputs and (non-constant) variables are allocated first and never freed.
    variables = [t.index for t in tensors if t.is_variable and t.index in planned]
    persistent = list(subgraph.inputs) + variables
    keep = {*subgraph.outputs, *keep_alive}
    fuse = settings.quant.native and not settings.preserve_all_tensors and not prepared.dynamic
    outputs = fused_steps.planned_outputs(ops, keep) if fuse else \
        [entry[0].outputs for entry in ops]
    lifetimes = planner.compute_lifetimes(
        [entry[0].inputs for entry in ops], outputs, persistent,
        list(subgraph.outputs) + list(keep_alive), planned, settings.preserve_all_tensors)
    plan = planner.plan_arena(lifetimes, sizes)
    names = {t: tensors[t].name for t in list(sizes) + list(prepared.folded)}
    budget.check_arena(plan.size, names, sizes,
                       {t: values[t].nbytes for t in prepared.folded})

    # 3. One aligned buffer; every planned tensor is a view into it.
    arena = np.zeros(plan.size + planner.ALIGNMENT, dtype=np.uint8)
    base = (-arena.ctypes.data) % planner.ALIGNMENT
    arrays: list[np.ndarray | None] = [None] * len(tensors)
    for t, offset in plan.offsets.items():
        if sizes[t] == 0:
            arrays[t] = np.zeros(shapes[t], dtypes[t])
            continue
        arrays[t] = np.ndarray(shapes[t], dtypes[t], buffer=arena, offset=base + offset)
    for t in sorted(strings):  # an object array: 8 bytes a pointer, charged first
        budget.take_work(f"STRING tensor {quoted(tensors[t].name)}",
                         num_elements(shapes[t]) * dtypes[t].itemsize)
        arrays[t] = np.full(shapes[t], b"", dtype=object)
    for t, value in values.items():
        arrays[t] = value
    resets = tuple((arrays[t], _variable_fill(tensors[t])) for t in variables)
    for array, fill in resets:  # as after LiteRT's AllocateTensors
        array.fill(fill)

    # 4. The flat invoke() list. An op whose outputs are all empty (a batch of 0) has
    # nothing to compute and is left out. With dynamic tensors, ``arrays`` stays a list:
    # the DynamicOp steps read and write it at invoke.
    ops = [entry for entry in ops if entry[3] not in (STATIC, ONCE)
           or not _all_empty(entry[0], sizes)]
    table = arrays if prepared.dynamic else tuple(arrays)
    memory = DynamicMemory(budget.limit, plan.size + budget.constants + budget.work)
    steps = tuple(_step(entry, setting, table, values, memory) for entry in ops)
    step_ops = tuple(entry[0].index for entry in ops)
    if fuse:
        steps, step_ops = fused_steps.fuse_swish(ops, steps, step_ops, table, keep)
    return Allocation(tuple(shapes), table, frozenset(values), steps, step_ops, arena,
                      plan.size, dict(plan.offsets), subgraph.index,
                      frozenset(prepared.dynamic), resets)
