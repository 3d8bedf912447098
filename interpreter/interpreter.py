"""The public Interpreter, shaped like tf.lite.Interpreter (ai_edge_litert.interpreter).

    interp = Interpreter(model_path="model.tflite")
    interp.allocate_tensors()
    inp = interp.get_input_details()[0]
    interp.set_tensor(inp["index"], x)
    interp.invoke()
    y = interp.get_tensor(interp.get_output_details()[0]["index"])

allocate_tensors() does all the work once (allocation.py: prepare every op, plan the
arena, build the flat list of prepared calls); invoke() only walks that list.

Models with several subgraphs run as LiteRT runs them: subgraph 0 is the entry (a
SignatureDef may name another), WHILE / IF / CALL_ONCE call the others (program.py,
kernels/control_flow.py), each prepared once with its own arena; resource variables
(kernels/variables.py) keep their values across invoke() calls. ``get_tensor(i,
subgraph_index=k)`` reads subgraph k's tensors (after invoke: the values of its last
run; with preserve_all_tensors=True every one of them).

Errors are EdgeliteError subclasses with messages naming the tensor (ShapeError,
DTypeError, InterpreterStateError, ...), each also the ValueError / RuntimeError LiteRT
raises for the same misuse (errors.py). LiteRT's keywords work (litert_compat.py:
experimental_op_resolver_type, experimental_delegates, experimental_preserve_all_tensors),
and so does its rule on tensor() views (views.py). Differences from tf.lite that remain
are listed in docs/interpreter-differences.md (e.g. constants are read-only).

Threads: one Interpreter serves one thread at a time -- a call made while another thread
is inside invoke() (or another call that writes its state) is refused at once with an
InterpreterStateError (guard.py); separate interpreters are independent. Inside a call,
numpy's BLAS is limited (blas.py) and the big ops split over edgelite's own pool
(parallel.py).
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any, Callable, Mapping

import numpy as np

from . import blas, details, runloop, support
from .allocation import Allocation, allocate
from .static_check import check_supported, describe_op
from .batch_split import BatchSplit
from .split_plan import plan_split
from edgelite.errors import (DTypeError, GraphError, InterpreterStateError, MemoryLimitError,
                             OptionError, ResizeError, ShapeError, SignatureError,
                             TensorStateError, UnsupportedOpError)
from .guard import CallGuard, guarded
from .memory import check_limit, out_of_memory_as_error
from .loader.model import Model, load_model, read_model_file
from edgelite.names import quoted
from .parallel import default_threads, run_slices
from .profiler import Profile, run_profile
from .program import Program, State, check_calls, resource_ids
from .settings import Settings
from .kernel_set import KernelSet, QuantConfig
from .litert_compat import (OpResolverType, check_delegates, check_loop_bound, check_num_threads,
                            resolver_kernels)
from . import native as native_backend
from .kernels.base import Kernel
from .kernels.custom import custom_kernels_map
from .quant_math import Rounding
from .signature import SignatureRunner
from .strings import as_strings
from .views import ViewTracker


def _shape_text(shape, dtype) -> str:
    name = "STRING" if np.dtype(dtype).kind == "O" else np.dtype(dtype).name
    return f"{list(int(d) for d in shape)} {name}"


class Interpreter:
    def __init__(self, model_path: str | os.PathLike | None = None,
                 model_content: bytes | None = None, num_threads: int | None = None,
                 preserve_all_tensors: bool = False, kernels: str | KernelSet | None = None,
                 rounding: str | Rounding = "double", split_batch: bool = True,
                 blas_threads: int | None = 1, memory_limit: int | None = None,
                 custom_kernels: Mapping[str, Kernel] | None = None,
                 experimental_delegates=None,
                 experimental_op_resolver_type=OpResolverType.AUTO,
                 experimental_preserve_all_tensors: bool = False,
                 max_loop_iterations: int | None = None,
                 native: bool | None = None):
        """The arguments (each in full in docs/interpreter.md): ``kernels`` / ``rounding``: whose integer arithmetic is reproduced bit for bit --
        "default" (LiteRT's AUTO resolver, with XNNPACK), "reference" (BUILTIN_REF),
        "micro" (TFLite Micro) -- and the fixed-point rounding (kernel_set.py).
        LiteRT's ``experimental_*`` keywords: litert_compat.py (the resolver type picks the
        kernel set when ``kernels`` is None; delegates: None or [] only).
        ``num_threads``: an int >= 1 or None (1), edgelite's non-spinning pool
        (parallel.py); ``blas_threads``: numpy's BLAS threads inside invoke() (blas.py);
        ``split_batch``: run a batch's samples in chunks over the threads (batch_split.py).
        ``memory_limit``: bytes allocate_tensors() and invoke() may take (memory.py; None:
        4 GiB or half the physical memory). ``max_loop_iterations``: a WHILE op's bound per
        invoke() (InvokeStoppedError; ``cancel()`` from another thread does the same).
        ``custom_kernels``: ``{"MyOp": Kernel(prepare, eval)}`` for CUSTOM ops by name
        (kernels/base.py, kernels/custom). ``native``: the C kernels where an op has one
        (None: when built and EDGELITE_NATIVE is not 0; False: numpy; True: refuse without
        them); integer results are identical either way (native.py)."""
        if (model_path is None) == (model_content is None):
            raise OptionError("`model_path` or `model_content` must be specified: pass exactly "
                              "one of them")
        check_num_threads(num_threads)
        check_delegates(experimental_delegates)
        resolved = resolver_kernels(experimental_op_resolver_type)
        kernels = resolved if kernels is None else kernels
        preserve_all_tensors = preserve_all_tensors or experimental_preserve_all_tensors
        if blas_threads is not None and blas_threads < 1:
            raise OptionError(f"blas_threads should be >= 1 (or None), got {blas_threads}")
        memory_limit = check_limit(memory_limit)
        custom_kernels = custom_kernels_map(custom_kernels)
        if model_path is not None:
            model_content = read_model_file(model_path)
        self._model: Model = model_content if isinstance(model_content, Model) \
            else load_model(model_content)  # (a Model: converter/graph_model.py)
        self._subgraph = self._model.subgraphs[0]
        # Every setting, checked, in one object passed down whole (settings.py).
        self._settings = Settings(
            threads=int(num_threads) if num_threads is not None else default_threads(),
            blas_threads=blas_threads, preserve_all_tensors=bool(preserve_all_tensors),
            split_batch=bool(split_batch), custom_kernels=custom_kernels,
            quant=replace(QuantConfig.make(kernels, rounding),
                          native=native_backend.choose(native)),
            memory_limit=memory_limit, max_loop_iterations=check_loop_bound(max_loop_iterations))
        self._guard = CallGuard()
        self._views = ViewTracker()  # arrays tensor() handed out (views.py)
        self._split: BatchSplit | None = None
        self._input_shapes = {t: self._subgraph.tensors[t].shape for t in self._subgraph.inputs}
        self._alloc: Allocation | None = None
        self._allocated = False
        self._steps: tuple = ()
        # Resource variables and CALL_ONCE status: for the life of the interpreter.
        self._state = State(resource_ids(self._model),
                            max_loop_iterations=self._settings.max_loop_iterations)
        self._program: Program | None = None
        self._subgraph_observer = None

    # ------------------------------------------------------------------ model info

    @property
    def backend(self) -> str:
        """Which kernels run: "native" (the C kernels, where an op has one) or "numpy"."""
        return native_backend.backend_name(self._settings.quant.native)

    @property
    def batch_split(self) -> tuple[int, int] | None:
        """(workers, samples per private invoke) when invoke() splits the batch by sample
        (batch_split.py), else None. profile() always times the batched ops."""
        if not self._allocated or self._split is None:
            return None
        return len(self._split.ranges), self._split.chunk

    @property
    def num_threads(self) -> int:
        """Threads an invoke() may use (``num_threads``, or the default it resolved to)."""
        return self._settings.threads

    @property
    def blas_limit(self) -> int | None:
        """numpy's BLAS thread count inside invoke(), or None when BLAS is left alone
        (``blas_threads=None``, or no control: threadpoolctl missing, ``blas.status()``)."""
        return self._settings.blas_threads if blas.available() else None

    @property
    def model(self) -> Model:
        """The parsed model (plain frozen objects)."""
        return self._model

    @property
    def arena_size(self) -> int:
        """Bytes of the planned tensor arena (0 before allocate_tensors())."""
        return self._alloc.arena_size if self._alloc is not None else 0

    def num_subgraphs(self) -> int:
        """How many subgraphs the model has (like tf.lite's)."""
        return len(self._model.subgraphs)

    def _check_subgraph(self, subgraph_index: Any) -> int:
        try:
            k = int(subgraph_index)
        except (TypeError, ValueError):
            raise GraphError(f"subgraph index must be an int, got {subgraph_index!r}") from None
        if not 0 <= k < len(self._model.subgraphs):
            raise GraphError(f"subgraph_index is out of range: {k} for the model, which has "
                             f"{len(self._model.subgraphs)} subgraph(s)")
        return k

    def _check_index(self, index: Any, subgraph_index: int = 0) -> int:
        try:
            i = int(index)
        except (TypeError, ValueError):
            raise GraphError(f"tensor index must be an int, got {index!r}") from None
        tensors = self._model.subgraphs[subgraph_index].tensors
        if not 0 <= i < len(tensors):
            where = f"subgraph {subgraph_index}" if subgraph_index else "the model"
            raise GraphError(f"tensor index {i} is out of range: {where} has {len(tensors)} "
                             "tensors")
        return i

    def _current_shape(self, index: int, subgraph_index: int = 0) -> tuple[int, ...]:
        if subgraph_index == 0 and index in self._input_shapes:
            return tuple(self._input_shapes[index])
        alloc = self._alloc if subgraph_index == 0 else \
            (self._program.current.get(subgraph_index) if self._program else None)
        if alloc is not None:
            if index in alloc.dynamic and alloc.arrays[index] is not None:
                return alloc.arrays[index].shape  # a dynamic tensor: its last value's
            return alloc.shapes[index]
        return self._model.subgraphs[subgraph_index].tensors[index].shape

    def _details(self, index: int, subgraph_index: int = 0) -> dict[str, Any]:
        tensor = self._model.subgraphs[subgraph_index].tensors[index]
        return details.tensor_details(tensor, self._current_shape(index, subgraph_index))

    def get_input_details(self) -> list[dict[str, Any]]:
        return [self._details(t) for t in self._subgraph.inputs]

    def get_output_details(self) -> list[dict[str, Any]]:
        return [self._details(t) for t in self._subgraph.outputs]

    def get_tensor_details(self, subgraph_index: int = 0) -> list[dict[str, Any]]:
        """Details of the tensors of subgraph ``subgraph_index``: every one LiteRT lists --
        strings, resource handles and packed int4 too, not BFLOAT16 (details.py)."""
        k = self._check_subgraph(subgraph_index)
        return [details.tensor_details(t, self._current_shape(t.index, k))
                for t in self._model.subgraphs[k].tensors
                if details.detail_dtype(t) is not None]

    def _get_ops_details(self) -> list[dict[str, Any]]:
        return [details.op_details(op, self._subgraph.tensors)
                for op in self._subgraph.operators]

    def _get_op_details(self, op_index: int) -> dict[str, Any]:
        """The details of operator ``op_index`` of subgraph 0 (LiteRT's private helper)."""
        ops = self._subgraph.operators
        if not isinstance(op_index, (int, np.integer)) or not 0 <= op_index < len(ops):
            raise GraphError(f"Invalid node index {op_index!r}: subgraph 0 has {len(ops)} "
                             "operators")
        return details.op_details(ops[int(op_index)], self._subgraph.tensors)

    def _get_tensor_details(self, tensor_index: int, subgraph_index: int = 0) -> dict[str, Any]:
        """The details of one tensor (LiteRT's private helper behind get_tensor_details)."""
        k = self._check_subgraph(subgraph_index)
        return self._details(self._check_index(tensor_index, k), k)

    # ------------------------------------------------------------------ allocation

    @guarded("allocate_tensors()")
    def allocate_tensors(self) -> None:
        """Prepare every op, plan the arena and build the invoke() list. Once allocated and
        with no input resized since, a call does nothing (as LiteRT's): tensors and
        variable state stay as they are."""
        self._views.check("allocate_tensors()")
        if self._allocated:
            return
        with blas.threads(self._settings.blas_threads):  # constant folding runs kernels
            self._allocate()

    def _allocate(self) -> None:
        self._allocated = False
        self._steps = ()
        # Signature outputs must stay readable after invoke(), like graph outputs.
        keep_alive = {t for s in self._model.signature_defs if s.subgraph_index == 0
                      for t in list(s.inputs.values()) + list(s.outputs.values())}
        self._split = None
        self._program = None  # a new allocation prepares every subgraph afresh
        program = self._new_program(0)
        try:
            self._alloc = allocate(self._subgraph, self._input_shapes, self._settings,
                                   keep_alive, program=program)
        except (UnsupportedOpError, DTypeError) as exc:  # list every op's problem at once
            support.raise_report(self._model, check_calls(self._model, [0]),
                                 self._settings, cause=exc)
        program.current[0] = self._alloc
        self._program = program
        self._steps = self._alloc.steps
        if self._settings.split_batch and self._settings.threads > 1 and \
                not self._settings.preserve_all_tensors:
            self._split = self._plan_split(keep_alive)
        self._allocated = True

    def set_subgraph_observer(self, fn) -> None:
        """Call ``fn(subgraph_index)`` after every run of a subgraph that a WHILE, IF or
        CALL_ONCE calls (each loop iteration's cond and body), while its tensors hold that
        run's values (all of them with preserve_all_tensors=True): how the converter
        calibrates through loops. ``None`` removes the observer."""
        self._subgraph_observer = fn
        if self._program is not None:
            self._program.after_run = fn

    def _new_program(self, entry: int) -> Program:
        """The Program that runs ``entry`` (the current one if there is one), after
        checking the subgraphs reachable from it: calls (indices, no recursion) and every
        op's support, all reported at once."""
        program = self._program or Program(self._model, self._state, self._settings)
        program.after_run = self._subgraph_observer
        if entry not in program.entries:
            reachable = check_calls(self._model, [entry])
            try:
                check_supported([self._model.subgraphs[k] for k in reachable],
                                self._settings.custom_kernels)
            except UnsupportedOpError as exc:  # the full report: every op's problem
                support.raise_report(self._model, reachable, self._settings,
                                     cause=exc)
            program.entries.add(entry)
        return program

    def _run_entry(self, index: int, values: dict[int, np.ndarray]) -> Allocation:
        """Run subgraph ``index`` (not 0) as an entry, as a SignatureRunner of a
        signature on it does: prepared for the shapes of ``values`` (input tensor ->
        array; other inputs keep their declared shape), inputs set, run. Returns its
        allocation, whose output arrays the caller copies."""
        sg = self._model.subgraphs[index]
        self._program = program = self._new_program(index)
        shapes = tuple(tuple(values[t].shape) if t in values else sg.tensors[t].shape
                       for t in sg.inputs)
        with blas.threads(self._settings.blas_threads):
            try:
                alloc = program.prepare(index, shapes)
            except (UnsupportedOpError, DTypeError) as exc:  # every op's problem at once
                support.raise_report(self._model, check_calls(self._model, [index]),
                                     self._settings, cause=exc)
            for t, value in values.items():
                target = alloc.arrays[t]
                if target is None or t in alloc.constants:
                    raise SignatureError(f"tensor {quoted(sg.tensors[t].name)} of subgraph "
                                         f"{index} is not an input that can be set")
                if value.dtype != target.dtype:
                    raise DTypeError(
                        f"input tensor {quoted(sg.tensors[t].name)} of subgraph {index} "
                        f"expects {target.dtype.name}, got {value.dtype.name}; convert it "
                        f"with .astype(np.{target.dtype.name})")
                np.copyto(target, value.reshape(target.shape))
            with runloop.quiet():
                runloop.run(alloc.steps)
        program.current[index] = alloc
        return alloc

    def _plan_split(self, keep_alive: set[int]) -> BatchSplit | None:
        """The by-sample plan for this allocation, or None (split_plan.py)."""
        return plan_split(self._alloc, self._subgraph, self._input_shapes, keep_alive,
                          self._settings)

    @guarded("resize_tensor_input()")
    def resize_tensor_input(self, input_index: int, tensor_size, strict: bool = False) -> None:
        """Give an input a new shape; call allocate_tensors() before the next invoke().
        Refusals are ResizeErrors (a RuntimeError, as LiteRT's)."""
        self._views.check("resize_tensor_input()")
        try:
            index = self._check_index(input_index)
        except GraphError as exc:
            raise ResizeError(str(exc)) from None
        if index not in self._input_shapes:
            raise ResizeError(
                f"tensor {index} {quoted(self._subgraph.tensors[index].name)} is not an input of "
                f"the model (inputs: {list(self._subgraph.inputs)})"
            )
        try:
            shape = tuple(int(d) for d in np.asarray(tensor_size).reshape(-1))
        except (TypeError, ValueError):
            raise ResizeError(f"new shape {tensor_size!r} is not a list of ints") from None
        if any(d < 0 for d in shape):
            raise ResizeError(f"new shape {list(shape)} has a negative dimension")
        current = tuple(self._input_shapes[index])
        if shape == current:
            return  # like TFLite: resizing to the same shape changes nothing
        tensor = self._subgraph.tensors[index]
        if strict:
            signature = tensor.shape_signature
            if len(shape) != len(signature) or any(
                    s != -1 and s != d for s, d in zip(signature, shape)):
                raise ResizeError(
                    f"input tensor {quoted(tensor.name)} (index {index}): strict resizing may only "
                    f"change the -1 dimensions of its signature {list(signature)}, got "
                    f"{list(shape)}"
                )
        self._input_shapes[index] = shape
        self._allocated = False
        self._steps = ()

    # ------------------------------------------------------------------ data access

    def _require_allocated(self, what: str) -> Allocation:
        if not self._allocated or self._alloc is None:
            raise TensorStateError(
                f"{what} needs allocated tensors: call allocate_tensors() first "
                "(again after resize_tensor_input)"
            )
        return self._alloc

    def _allocation(self, subgraph_index: int, what: str) -> Allocation:
        alloc = self._require_allocated(what)
        if subgraph_index == 0:
            return alloc
        alloc = self._program.current.get(subgraph_index) if self._program else None
        if alloc is None:
            raise InterpreterStateError(
                f"{what}: subgraph {subgraph_index} has not been prepared: no operator of the "
                "subgraphs run so far calls it")
        return alloc

    def _array(self, index: int, what: str, subgraph_index: int = 0) -> np.ndarray:
        alloc = self._allocation(subgraph_index, what)
        arr = alloc.arrays[index]
        if arr is None:
            name = quoted(self._model.subgraphs[subgraph_index].tensors[index].name)
            if index in alloc.dynamic:
                raise TensorStateError(
                    f"tensor {index} {name} has no value yet: its shape is only known once "
                    "invoke() computes it")
            raise InterpreterStateError(
                f"tensor {index} {name} has no data: no operator reads or writes it"
            )
        return arr

    @guarded("set_tensor()")
    def set_tensor(self, tensor_index: int, value) -> None:
        """Copy ``value`` into a tensor; dtype and shape must match exactly."""
        index = self._check_index(tensor_index)
        target = self._array(index, "set_tensor")
        tensor = self._subgraph.tensors[index]
        role = "input tensor" if index in self._input_shapes else "tensor"
        if index in self._alloc.constants:
            raise InterpreterStateError(
                f"tensor {index} {quoted(tensor.name)} is a constant of the model and cannot be set"
            )
        value = np.asarray(value)
        if target.dtype.kind == "O" and value.dtype.kind in "SUO":
            value = as_strings(value)  # a STRING tensor takes str or bytes, as LiteRT's
        if value.dtype != target.dtype or value.shape != target.shape:
            message = (
                f"{role} {quoted(tensor.name)} (index {index}) expects shape "
                f"{_shape_text(target.shape, target.dtype)}, got "
                f"{_shape_text(value.shape, value.dtype)}"
            )
            if value.shape != target.shape:
                if index in self._input_shapes:
                    message += "; call resize_tensor_input first to change it"
                raise ShapeError(message)
            if target.dtype.kind == "O":
                raise DTypeError(message + "; pass str or bytes elements")
            raise DTypeError(message + f"; convert it with .astype(np.{target.dtype.name})")
        np.copyto(target, value)

    @out_of_memory_as_error("reading a tensor")
    def _read(self, index: int, what: str, subgraph_index: int = 0) -> np.ndarray:
        """A copy of a tensor, refused when another thread's write call overlaps the
        copy (guard.py)."""
        token = self._guard.read_begins(what)
        value = self._array(index, what, subgraph_index).copy()
        self._guard.read_ends(what, token)
        return value

    def get_tensor(self, tensor_index: int, subgraph_index: int = 0) -> np.ndarray:
        """A copy of a tensor's current value; of subgraph ``subgraph_index``'s tensor
        (after invoke: the values of that subgraph's last run -- the last iteration of
        a loop body -- which only preserve_all_tensors=True keeps for every tensor)."""
        k = self._check_subgraph(subgraph_index)
        index = self._check_index(tensor_index, k)
        sparsity = self._model.subgraphs[k].tensors[index].sparsity
        if sparsity is not None and sparsity.values is not None:
            self._require_allocated("get_tensor()")
            return sparsity.values.copy()  # the stored values, as LiteRT (kernels: dense)
        return self._read(index, "get_tensor()", k)

    def get_dequantized_tensor(self, tensor_index: int) -> np.ndarray:
        """A float32 copy of a tensor's real value: real = scale * (q - zero_point), per
        channel along quantized_dimension when the tensor has several scales (computed in
        double, then rounded to float32, as LiteRT's DEQUANTIZE does). Float tensors come
        back as a float32 copy. With preserve_all_tensors=True this works for every
        intermediate after invoke(); otherwise intermediates may have been overwritten."""
        index = self._check_index(tensor_index)
        value = self._read(index, "get_dequantized_tensor()")
        if value.dtype.kind == "f":
            return value.astype(np.float32)
        return details.dequantized(self._subgraph.tensors[index], index, value)

    def tensor(self, tensor_index: int) -> Callable[[], np.ndarray]:
        """A function returning a live view of the tensor. As in LiteRT, while such an
        array (or a slice of it) is alive, allocate_tensors(), invoke() and
        resize_tensor_input() refuse (views.py): hold the function, not the array. The
        function refuses to run while another thread is inside invoke() (guard.py)."""
        index = self._check_index(tensor_index)

        def view() -> np.ndarray:
            self._guard.read_begins("tensor()")
            return self._views.hand_out(self._array(index, "tensor()"))
        return view

    def _safe_to_run(self) -> bool:
        """True when no array tensor() handed out is alive (LiteRT's _safe_to_run)."""
        return not self._views.held()

    @guarded("reset_all_variables()")
    def reset_all_variables(self) -> None:
        """Every variable tensor (Tensor.is_variable, e.g. a stateful LSTM's state) of
        every prepared subgraph back to zero -- to its zero point if int8 -- as
        tf.lite's reset_all_variables() does (ResetVariableTensors). Like LiteRT, it
        leaves resource variables (VAR_HANDLE / ASSIGN_VARIABLE) and CALL_ONCE's
        "already ran" status alone: a streaming model keeps its state."""
        self._require_allocated("reset_all_variables()")
        allocations = {id(self._alloc): self._alloc}
        allocations.update((id(a), a) for a in self._program.allocations())
        for alloc in allocations.values():
            alloc.reset_variables()

    # ------------------------------------------------------------------ execution

    @guarded("invoke()")
    @out_of_memory_as_error("invoke()")
    def invoke(self) -> None:
        """Run every prepared op in order. Refused at once (InterpreterStateError) while
        another thread is inside a call of this interpreter (guard.py)."""
        if not self._allocated:
            raise InterpreterStateError(
                "invoke() before allocate_tensors(): call allocate_tensors() first "
                "(again after resize_tensor_input)"
            )
        self._views.check("invoke()")
        self._state.cancelled.clear()
        with blas.threads(self._settings.blas_threads):
            if self._split is not None:
                run_slices(self._settings.threads, self._split.run_range, self._split.tasks())
            else:
                try:
                    with runloop.quiet():
                        runloop.run(self._steps)
                except MemoryError as exc:  # name the op (the decorator's line names nothing)
                    raise self._out_of_memory(runloop.failed_step(exc)) from None

    def _out_of_memory(self, i: int | None) -> MemoryLimitError:
        """The line for numpy's MemoryError in step ``i``."""
        if i is None:
            return MemoryLimitError("invoke(): the system ran out of memory; free memory, "
                                    "or pass Interpreter(memory_limit=...)")
        op = self._subgraph.operators[self._alloc.step_ops[i]]
        return MemoryLimitError(
            f"invoke(): the system ran out of memory in {describe_op(op, self._subgraph)}; "
            "free memory, use smaller inputs, or pass Interpreter(memory_limit=...) below "
            "what the machine can give")

    def cancel(self) -> None:
        """Make the invoke() running now in another thread stop at its next WHILE iteration
        with InvokeStoppedError (like LiteRT's Interpreter::Cancel). Thread-safe, never
        blocks; a cancel() while no invoke() runs has no effect on the next one."""
        self._state.cancelled.set()

    @guarded("profile()")
    def profile(self, runs: int = 10, warmup: int = 1) -> Profile:
        """Invoke ``warmup`` + ``runs`` times on the inputs currently set, timing every
        op (profiler.py); invoke() itself is never instrumented. The last run's outputs
        stay readable like after invoke()."""
        with blas.threads(self._settings.blas_threads):
            return self._profile(runs, warmup)

    def _profile(self, runs: int, warmup: int) -> Profile:
        alloc = self._require_allocated("profile()")
        ops, tensors = self._subgraph.operators, self._subgraph.tensors
        labels = []
        for i in alloc.step_ops:
            op = ops[i]
            name = f"CUSTOM {quoted(op.custom_code)}" if op.name == "CUSTOM" else op.name
            labels.append((i, name, tensors[op.outputs[0]].name if op.outputs else ""))
        return run_profile(self._steps, labels, runs, warmup)

    # ------------------------------------------------------------------ signatures

    def get_signature_list(self) -> dict[str, dict[str, list[str]]]:
        """{signature key: {"inputs": [names], "outputs": [names]}} (names sorted, as
        tf.lite returns them)."""
        return {s.key: {"inputs": sorted(s.inputs), "outputs": sorted(s.outputs)}
                for s in self._model.signature_defs}

    def _get_full_signature_list(self) -> dict[str, dict[str, dict[str, int]]]:
        return {s.key: {"inputs": dict(sorted(s.inputs.items())),
                        "outputs": dict(sorted(s.outputs.items()))}
                for s in self._model.signature_defs}

    def get_signature_runner(self, signature_key: str | None = None) -> SignatureRunner:
        signatures = {s.key: s for s in self._model.signature_defs}
        if not signatures:
            raise SignatureError(
                "the model has no SignatureDefs; use get_input_details() / set_tensor() / "
                "invoke() instead"
            )
        if signature_key is None:
            if len(signatures) != 1:
                raise SignatureError(
                    f"the model has {len(signatures)} signatures {sorted(signatures)}; "
                    "pass signature_key"
                )
            signature_key = next(iter(signatures))
        if signature_key not in signatures:
            raise SignatureError(
                f"no signature {quoted(signature_key)}; the model has {sorted(signatures)}"
            )
        return SignatureRunner(self, signatures[signature_key])

