"""A model's subgraphs as one program: subgraph calls, and the state invokes share.

A .tflite model is a list of subgraphs. Subgraph 0 -- or the subgraph a SignatureDef
names -- is an entry; WHILE, IF and CALL_ONCE (kernels/control_flow.py) call other
subgraphs by index, passing tensors by value (each subgraph has its own tensors, as in
LiteRT, where every subgraph is a tflite::Subgraph with its own arena).

* ``State`` -- one per Interpreter, as long-lived as it: the resource variables
  (resource id -> array, written by ASSIGN_VARIABLE, kernels/variables.py), the
  resource id of each (container, shared_name) pair, and which CALL_ONCE init
  subgraphs have run. LiteRT numbers resources as VAR_HANDLE's Init meets them while
  the InterpreterBuilder adds nodes: subgraph by subgraph, op by op, a new pair taking
  the next id (var_handle.cc: ``resource_ids().size()``). Nothing here is reset by
  ``reset_all_variables()``: LiteRT's ResetVariableTensors only touches variable
  *tensors* (``Tensor.is_variable``), never resources or the init status
  (interpreter_experimental.cc, subgraph.cc); nor ``ran_once``, the run-once ops
  (allocation.RUN_ONCE_OPS) that have run.
* ``Program`` -- one per allocate_tensors(): ``prepare(k, shapes)`` plans and prepares
  subgraph k for a tuple of input shapes (allocation.allocate: its own arena, its own
  flat step list) once, and caches it. A WHILE whose carried tensor keeps its shape
  prepares its body once, at allocate time; one whose carried tensor grows prepares the
  body for each new shape at invoke (TFLite re-runs AllocateTensors on every such
  iteration). The cache keeps MAX_VARIANTS shape signatures per subgraph, dropping the
  oldest, so a long growing loop does not keep every size alive.

A prepared subgraph is run by whoever holds it; since calls never recurse (``check_calls``
refuses cycles), a subgraph never runs inside itself, so the callers of one prepared
subgraph can share its arena.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from .allocation import Allocation, allocate
from edgelite.errors import GraphError, InvokeStoppedError, MemoryLimitError
from .kernels.control_flow import SUBGRAPH_OPTIONS
from .kernels.variables import resource_key
from .loader.model import Model
from edgelite.names import quoted
from .settings import Settings

# How many input-shape signatures of one subgraph stay prepared. A loop body whose
# carried tensor grows by one row per iteration needs a new one per iteration anyway;
# a handful covers the static cases (one shape) and alternating ones (IF branches called
# from two places).
MAX_VARIANTS = 8

# Subgraph calls may nest this deep (a WHILE in a WHILE's body is 2). Preparing a level
# takes about ten Python frames; real models nest two or three levels.
MAX_DEPTH = 32


def resource_ids(model: Model) -> dict[tuple[str, str], int]:
    """(container, shared_name) -> resource id, numbered as LiteRT numbers them."""
    ids: dict[tuple[str, str], int] = {}
    for sg in model.subgraphs:
        for op in sg.operators:
            if op.name == "VAR_HANDLE":
                ids.setdefault(resource_key(op.options), len(ids))
    return ids


@dataclass
class State:
    """What invokes share and keep, for the life of an Interpreter (see the module doc)."""

    resource_ids: dict[tuple[str, str], int]
    variables: dict[int, np.ndarray] = field(default_factory=dict)
    initialized: set[int] = field(default_factory=set)  # CALL_ONCE init subgraphs run
    ran_once: set[tuple[int, int]] = field(default_factory=set)  # (subgraph, operator)
    max_loop_iterations: int | None = None   # per WHILE op and invoke; None: no bound
    cancelled: threading.Event = field(default_factory=threading.Event)

    def loop_iteration(self, where: str, count: int) -> None:
        """Called by a WHILE before its body runs the ``count``-th time: stop on
        cancel() or past the iteration bound (TFLite checks its cancellation flag
        between ops likewise: subgraph.cc, continue_invocation_)."""
        if self.cancelled.is_set():
            raise InvokeStoppedError(f"invoke() was cancelled (Interpreter.cancel()) in "
                                     f"{where}, iteration {count}")
        if self.max_loop_iterations is not None and count > self.max_loop_iterations:
            raise InvokeStoppedError(
                f"{where}: the loop ran {self.max_loop_iterations} iterations without ending, "
                "the max_loop_iterations bound; check the loop's start and limit values, or "
                "pass Interpreter(max_loop_iterations=...) to allow more")

    def variable_name(self, resource_id: int) -> str:
        """How a message names resource ``resource_id``: its shared_name, quoted."""
        for (container, name), rid in self.resource_ids.items():
            if rid == resource_id:
                return f"{quoted(name)}" + (f" (container {quoted(container)})"
                                             if container else "")
        return f"with resource id {resource_id}"


def _callees(op) -> list[tuple[str, int]]:
    """(role, subgraph index) of every subgraph ``op`` calls."""
    return [(role, int(op.options.get(key) or 0)) for role, key in
            SUBGRAPH_OPTIONS.get(op.name, ())]


def check_calls(model: Model, entries: Iterable[int]) -> list[int]:
    """The subgraphs reachable from ``entries``, entries first; GraphError (one line naming
    the op) for a subgraph index out of range, a recursive call, or nesting deeper than
    MAX_DEPTH. Iterative: a crafted file cannot exhaust Python's stack here."""
    n = len(model.subgraphs)
    done: set[int] = set()
    order: list[int] = []
    for entry in entries:
        if entry in done:
            continue
        # The DFS path: (subgraph, its remaining calls); ``path`` is its set of subgraphs.
        stack = [(entry, iter(_calls_of(model, entry, n)))]
        path = {entry}
        order.append(entry)
        while stack:
            sg, calls = stack[-1]
            step = next(calls, None)
            if step is None:
                stack.pop()
                path.discard(sg)
                done.add(sg)
                continue
            where, callee = step
            if callee in path:
                chain = " -> ".join(str(s) for s, _ in stack) + f" -> {callee}"
                raise GraphError(
                    f"{where} calls subgraph {callee}, which is already running (calls "
                    f"{chain}): a recursive subgraph call never ends; edgelite refuses it")
            if callee in done:
                continue
            if len(stack) >= MAX_DEPTH:
                raise GraphError(
                    f"{where} calls subgraph {callee} at nesting depth {len(stack) + 1}; "
                    f"edgelite runs subgraph calls nested at most {MAX_DEPTH} deep")
            stack.append((callee, iter(_calls_of(model, callee, n))))
            path.add(callee)
            order.append(callee)
    return order


def _calls_of(model: Model, index: int, n: int) -> list[tuple[str, int]]:
    calls = []
    for op in model.subgraphs[index].operators:
        for role, callee in _callees(op):
            where = f"subgraph {index} operator {op.index} ({op.name})"
            if not 0 <= callee < n:
                raise GraphError(
                    f"{where}: its {role} subgraph index {callee} is out of range: the model "
                    f"has {n} subgraph(s)")
            calls.append((where, callee))
    return calls


class Program:
    """The prepared subgraphs of one allocate_tensors() (see the module docstring)."""

    def __init__(self, model: Model, state: State, settings: Settings):
        self.model = model
        self.state = state
        self.settings = settings  # how every subgraph is prepared (the Interpreter's)
        self._variants: dict[int, dict[tuple, Allocation]] = {}
        self.current: dict[int, Allocation] = {}  # per subgraph: the one run (or made) last
        self.entries: set[int] = set()  # subgraphs checked as entries (check_calls)
        # called with a subgraph's index after each run of it by a WHILE / IF / CALL_ONCE
        # (Interpreter.set_subgraph_observer: calibration through loops)
        self.after_run = None
        self._keep_alive: dict[int, set[int]] = {}
        for s in model.signature_defs:  # signature tensors stay readable, like outputs
            self._keep_alive.setdefault(s.subgraph_index, set()).update(
                list(s.inputs.values()) + list(s.outputs.values()))

    def keep_alive(self, index: int) -> set[int]:
        return self._keep_alive.get(index, set())

    def prepare(self, index: int, shapes: tuple[tuple[int, ...], ...]) -> Allocation:
        """Subgraph ``index`` prepared for input shapes ``shapes`` (cached)."""
        variants = self._variants.setdefault(index, {})
        alloc = variants.get(shapes)
        if alloc is None:
            sg = self.model.subgraphs[index]
            if len(set(sg.inputs)) != len(sg.inputs):
                raise GraphError(f"subgraph {index} lists one tensor as two of its inputs "
                                 f"{list(sg.inputs)}")
            try:
                alloc = allocate(sg, dict(zip(sg.inputs, shapes)), self.settings,
                                 self.keep_alive(index), program=self)
            except MemoryLimitError as exc:  # say which subgraph, for which shapes
                raise MemoryLimitError(f"subgraph {index}, for input shapes "
                                       f"{[list(s) for s in shapes]}: {exc}") from None
            if len(variants) >= MAX_VARIANTS:
                del variants[next(iter(variants))]
            variants[shapes] = alloc
        self.current[index] = alloc
        return alloc

    def allocations(self) -> list[Allocation]:
        """Every allocation still prepared (for reset_all_variables)."""
        seen: dict[int, Allocation] = {}
        for variants in self._variants.values():
            for alloc in variants.values():
                seen[id(alloc)] = alloc
        for alloc in self.current.values():
            seen[id(alloc)] = alloc
        return list(seen.values())
