"""The converter's IR: a Graph of TFLite-level Ops over named Tensors.

Lowering turns TF nodes into these ops (op types are TFLite builtin names such as "CONV_2D",
options are the TFLite option fields in snake_case), passes rewrite the graph, and export.py
serialises it. Every tensor keeps the GraphDef name it came from ("node" for output 0,
"node:k" for output k), so float and quantized models can be compared tensor by tensor.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from edgelite.errors import GraphError
from edgelite.names import quoted, shown
from ..schema import ops as schema_ops
from .ir_index import GraphIndex, OpSequence, TensorList, tensor_list_property


# The tflite enums, as IntEnums built from the generated schema (no hand-copied values).
Padding = IntEnum("Padding", schema_ops.PADDING)
Activation = IntEnum("Activation", schema_ops.ACTIVATION)  # fused_activation_function


# Ops that exist only inside the converter and must be rewritten away before export.
PSEUDO_OPS = frozenset({"IDENTITY", "MATMUL", "ERF", "ERFC", "UNIFORM_NOISE"})


@dataclass(eq=False)
class QuantParams:
    """Affine quantization: real = scale * (q - zero_point), per tensor or per `axis` slice."""

    scale: np.ndarray
    zero_point: np.ndarray
    axis: int = 0
    min: np.ndarray | None = None
    max: np.ndarray | None = None


@dataclass(eq=False)
class Tensor:
    name: str
    dtype: np.dtype
    shape: tuple[int, ...] | None = None      # None until shapes are inferred
    data: np.ndarray | None = None            # set for constants
    quant: QuantParams | None = None
    shape_signature: tuple[int, ...] | None = None  # -1 where the user left a dim dynamic
    # Real-value range known from the graph itself (FakeQuant nodes), used by quantization.
    range: tuple[float, float] | None = None
    # A TFLite variable tensor: state an op updates in place (an LSTM's h and c), zero at
    # allocate_tensors() / reset_all_variables(); never constant data (LiteRT refuses a
    # variable tensor with a buffer: interpreter_builder.cc).
    is_variable: bool = False

    @property
    def is_const(self) -> bool:
        return self.data is not None

    def __repr__(self) -> str:
        kind = "const " if self.is_const else ""
        return f"Tensor({kind}{quoted(self.name)}, {np.dtype(self.dtype).name}, {self.shape})"


class Op:
    """One TFLite-level op. `inputs` / `outputs` are TensorLists: writing them (`op.inputs[i]
    = t`, `op.inputs = [...]`) keeps the owning graph's index up to date."""

    def __init__(self, type: str, inputs, outputs, options: dict | None = None,
                 name: str = "", custom_code: str | None = None, origin: str = "") -> None:
        # (written straight into __dict__: __setattr__ below watches later writes only)
        self.__dict__.update(
            type=type,                    # TFLite builtin op name, e.g. "CONV_2D"
            options=options if options is not None else {},
            name=name,                    # the TF node it came from
            custom_code=custom_code,      # for type == "CUSTOM"
            origin=origin,                # the TF op type it came from ("FusedBatchNormV3")
            _ix=None,                     # the GraphIndex, while the op is in a graph
            # The graphs a control-flow op calls, by role: WHILE {"cond", "body"}, IF
            # {"then", "else"}. Each is a Graph of its own (tensors are never shared between
            # graphs); its inputs/outputs are positional, matching the op's (IF: the op's
            # inputs after the condition). export.py gives each one a subgraph index.
            subgraphs={},
            # Tensors the op neither reads nor writes but that carry parameters its kernel
            # needs (TFLite's Operator.intermediates: an integer LSTM's gate / hidden
            # scales). Not indexed: no op produces or consumes them.
            intermediates=[],
            # None in inputs marks an omitted optional input
            inputs=TensorList(inputs, self._inputs_changed),
            outputs=TensorList(outputs, self._outputs_changed))

    def __setattr__(self, name: str, value) -> None:
        """Reads of every attribute are plain (passes read op.inputs / op.type for nearly
        every op they look at); the writes the graph index follows are reported here:
        `op.inputs = [...]` / `op.outputs = [...]` replace the TensorList's contents,
        `op.type = ...` moves the op in the per-type index, `op.subgraphs = {...}` updates
        the callers."""
        if name == "inputs" or name == "outputs":
            self.__dict__[name][:] = value
            return
        ix = self.__dict__["_ix"]
        if ix is not None and name == "type" and value != self.type:
            ix.retype(self, value)
        object.__setattr__(self, name, value)
        if name == "subgraphs" and ix is not None:
            ix.calls(self)

    def _inputs_changed(self, removed, added) -> None:
        if self._ix is not None:
            self._ix.reads(self, removed, added)

    def _outputs_changed(self, removed, added) -> None:
        if self._ix is not None:
            self._ix.writes(self, removed, added)

    def copy(self) -> "Op":
        """The same op over the same tensors (options copied), in no graph."""
        op = Op(self.type, self.inputs, self.outputs, dict(self.options), self.name,
                self.custom_code, self.origin)
        op.subgraphs = dict(self.subgraphs)
        op.intermediates = list(self.intermediates)
        return op

    def __repr__(self) -> str:
        ins = ", ".join(shown(t.name) if t is not None else "-" for t in self.inputs)
        outs = ", ".join(shown(t.name) for t in self.outputs)
        kind = f"{self.type} {quoted(self.custom_code)}" if self.custom_code else self.type
        return f"Op({kind} [{ins}] -> [{outs}] {self.options})"


class Graph:
    """A single subgraph: ops in topological order, graph inputs and outputs.

    Producer, readers and use counts are indexed (ir_index.py): each query is O(1) or
    O(readers), each op insertion / removal O(1). `graph.ops` is a read-only view; change
    the op list with add_op / insert_op / remove_op / replace_op / bypass.
    """

    def __init__(self) -> None:
        self._ix = GraphIndex()
        self._inputs = TensorList((), self._ix.graph_io(self._ix.graph_inputs))
        self._outputs = TensorList((), self._ix.graph_io(self._ix.graph_outputs))
        self._names: set[str] = set()
        self._next_suffix: dict[str, int] = {}
        self.name = "main"          # the subgraph's name in the .tflite
        self.signature = None       # the SavedModel signature converted (SignatureIO):
        # its key, and its input / output names in the order of inputs / outputs
        self.is_subgraph = False    # True for a graph called by a WHILE / IF op: its
        # inputs and outputs are an interface the caller relies on (count, order, dtypes)

    @property
    def ops(self) -> OpSequence:
        return OpSequence(self._ix)

    @ops.setter
    def ops(self, ops) -> None:
        for op in self.ops:
            self._ix.detach(op)
        for op in ops:
            self._ix.attach(op)

    inputs = tensor_list_property("_inputs")
    outputs = tensor_list_property("_outputs")

    # -- construction -------------------------------------------------------------------------
    def unique_name(self, base: str) -> str:
        """`base`, or `base_k` with the smallest free k (names are never released, so the
        search resumes where the last one for `base` stopped)."""
        name = base
        if name in self._names:
            k = self._next_suffix.get(base, 1)
            while f"{base}_{k}" in self._names:
                k += 1
            self._next_suffix[base] = k + 1
            name = f"{base}_{k}"
        self._names.add(name)
        return name

    def tensor(self, name: str, dtype, shape=None, data=None) -> Tensor:
        """A new tensor with a name unique in this graph (suffixed if needed)."""
        if data is not None:
            data = np.asarray(data, dtype=dtype)
            shape = tuple(data.shape)
        return Tensor(self.unique_name(name), np.dtype(dtype), shape, data)

    def const(self, name: str, data, dtype=None) -> Tensor:
        data = np.asarray(data, dtype=dtype)
        return self.tensor(name, data.dtype, data=data)

    def add_op(self, type_: str, inputs, outputs, options=None, name="") -> Op:
        op = Op(type_, list(inputs), list(outputs), dict(options or {}), name)
        self._ix.attach(op)
        return op

    def insert_op(self, op: Op, before: Op | None = None) -> Op:
        """Put `op` (in no graph yet) in front of `before`, or last."""
        self._ix.attach(op, before)
        return op

    def remove_op(self, op: Op) -> None:
        self._ix.detach(op)

    def last_op(self) -> Op | None:
        """The op at the end of the order (None in an empty graph): a mark for ops_after."""
        return self._ix.prev[GraphIndex.END]

    def op_count(self) -> int:
        """len(self.ops), without making the view."""
        return len(self._ix.next) - 1

    def ops_since(self, mark: Op | None, count: int) -> list[Op] | tuple[Op, ...]:
        """The ops added after `mark`, a last_op() taken when the graph had `count` ops;
        by position if `mark` has left the graph since (a rule that removed the last op)."""
        if mark is None or mark._ix is self._ix:
            return self.ops_after(mark)
        return self.ops[count:]

    def ops_after(self, mark: Op | None) -> list[Op]:
        """The ops following `mark` (a last_op() taken earlier; None: from the start), walked
        from it: lowering folds the few ops a rule just appended without counting the whole
        list. A mark no longer in the graph gives every op."""
        ix = self._ix
        op = ix.next[mark if mark is not None and mark._ix is ix else GraphIndex.END]
        out = []
        while op is not GraphIndex.END:
            out.append(op)
            op = ix.next[op]
        return out

    def replace_op(self, old: Op, new: Op) -> Op:
        """`new` takes `old`'s place in the order (it may produce `old`'s outputs)."""
        before = self._ix.next[old]
        self._ix.detach(old)
        self._ix.attach(new, before)
        return new

    # -- queries ------------------------------------------------------------------------------
    def ops_of(self, *types: str) -> list[Op]:
        """The ops of these types, in graph order (a list: the pass may change the graph as
        it goes). O(1) when there are none, else O(k log k) for k such ops: a pass visits
        only the ops it can rewrite."""
        return self._ix.of_type(types)

    def has_ops(self, *types: str) -> bool:
        """Whether an op of one of these types is in the graph (O(1))."""
        by_type = self._ix.by_type
        for t in types:  # (a loop, not any(): lowering asks this after every op)
            if t in by_type:
                return True
        return False

    def producer(self, t: Tensor) -> Op | None:
        return self._ix.producer.get(t)

    def consumers(self, t: Tensor) -> list[Op]:
        """The ops reading `t` (each once)."""
        return list(self._ix.readers.get(t, ()))

    def use_count(self, t: Tensor) -> int:
        """How many op inputs plus graph outputs read `t`."""
        return self._ix.uses.get(t, 0) + self._ix.graph_outputs.get(t, 0)

    def is_output(self, t: Tensor) -> bool:
        return t in self._ix.graph_outputs

    def is_input(self, t: Tensor) -> bool:
        return t in self._ix.graph_inputs

    def tensors(self) -> list[Tensor]:
        """Every tensor reachable from ops and graph inputs/outputs, in first-seen order."""
        seen: dict[int, Tensor] = {}
        for t in self.inputs:
            seen.setdefault(id(t), t)
        for op in self.ops:
            for t in [*op.inputs, *op.outputs, *op.intermediates]:
                if t is not None:
                    seen.setdefault(id(t), t)
        for t in self.outputs:
            seen.setdefault(id(t), t)
        return list(seen.values())

    def op_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for op in self.ops:
            counts[op.type] = counts.get(op.type, 0) + 1
        return dict(sorted(counts.items()))

    # -- rewriting ----------------------------------------------------------------------------
    def set_const_input(self, op: Op, i: int, data: np.ndarray) -> None:
        """Give op input i new constant data, in place when nothing else reads the tensor."""
        old = op.inputs[i]
        data = np.asarray(data, dtype=old.dtype)
        if self.use_count(old) == 1:
            old.data, old.shape = data, tuple(data.shape)
        else:
            op.inputs[i] = self.const(old.name, data)

    def replace_uses(self, old: Tensor, new: Tensor) -> None:
        """Make every reader of `old` (ops and graph outputs) read `new` instead."""
        for op in self.consumers(old):
            op.inputs = [new if i is old else i for i in op.inputs]
        if self.is_output(old):
            self.outputs = [new if o is old else o for o in self.outputs]

    def bypass(self, op: Op, keep: Tensor) -> None:
        """Remove single-output `op`, rewiring its readers to `keep`.

        `keep` takes over the removed output's name (so a graph output keeps its name and
        conv+bias+relu is named after the relu), unless `keep` is a graph input/output or a
        constant, whose names must not change.
        """
        out = op.outputs[0]
        self.remove_op(op)
        if not (self.is_output(keep) or self.is_input(keep) or keep.is_const):
            keep.name = out.name  # a fused chain is named after its last node, as in TFLite
        if out.range is not None:
            keep.range = out.range  # a FakeQuant range describes the chain's final value
        self.replace_uses(out, keep)

    def remove_dead_ops(self, roots=None) -> int:
        """Drop ops none of whose outputs is used, and then the ops only they read. Returns
        how many were removed. `roots`: look only at the producers of these tensors (the
        inputs of an op just removed or replaced); default: every op."""
        ix = self._ix
        producers = ix.producer.get
        if roots is None:
            stack = list(ix.snapshot())
        else:
            stack = [p for p in map(producers, filter(None, roots)) if p is not None]
        removed = 0
        while stack:  # last op first: a dead op's producers are looked at right after it
            op = stack.pop()
            if op._ix is not ix or any(self.use_count(t) for t in op.outputs):
                continue
            ix.detach(op)
            removed += 1
            stack.extend(p for p in map(producers, filter(None, op.inputs)) if p is not None)
        return removed

    # -- consistency ----------------------------------------------------------------------------
    def check(self) -> None:
        """Every op input is a graph input, a constant, a variable or produced by an earlier
        op."""
        if index_checks_enabled():
            self.validate_index()
        ready = {id(t) for t in self.inputs}
        for op in self.ops:
            for t in op.inputs:
                if t is not None and not (t.is_const or t.is_variable) and id(t) not in ready:
                    raise GraphError(f"op {op.type} ({quoted(op.name)}) reads "
                                     f"{quoted(t.name)} before it is produced")
            ready.update(id(o) for o in op.outputs)
        for t in self.outputs:
            if not t.is_const and id(t) not in ready:
                raise GraphError(f"graph output {quoted(t.name)} is never produced")

    def validate_index(self) -> None:
        """Recompute the index from the ops and graph inputs/outputs; GraphError if it
        differs (a debugging check: O(graph))."""
        fresh = GraphIndex()
        for op in self._ix.snapshot():
            if op._ix is not self._ix:
                raise GraphError(f"internal: op {op.type} ({quoted(op.name)}) is listed in "
                                 "the graph but points at another")
            fresh.reads(op, (), op.inputs)
            fresh.writes(op, (), op.outputs)
            fresh.calls(op)
            fresh.by_type.setdefault(op.type, {})[op] = None
        fresh.graph_io(fresh.graph_inputs)((), self.inputs)
        fresh.graph_io(fresh.graph_outputs)((), self.outputs)
        ix = self._ix
        walked = list(ix.walk(0, len(self.ops), len(self.ops)))
        for what in ("producer", "readers", "uses", "graph_outputs", "graph_inputs",
                     "callers"):
            if getattr(fresh, what) != getattr(ix, what):
                raise GraphError(f"internal: the graph index is stale ({what})")
        if {k: set(v) for k, v in fresh.by_type.items()} != \
                {k: set(v) for k, v in ix.by_type.items()}:
            raise GraphError("internal: the graph index is stale (by_type)")
        ranks = [ix.rank[op] for op in walked] if set(ix.rank) == set(walked) else None
        if ranks is None or not (ix.ranks_stale or
                                 all(a < b for a, b in zip(ranks, ranks[1:]))):
            raise GraphError("internal: the graph index is stale (rank)")
        if walked != list(ix.snapshot()) or len(walked) != len(ix.next) - 1 or \
                len(ix.prev) != len(ix.next) or \
                any(ix.prev[ix.next[op]] is not op for op in ix.next):
            raise GraphError("internal: the graph's op order is inconsistent")

    def __deepcopy__(self, memo) -> "Graph":
        """A copy with copied tensors and ops (built op by op, so its index is fresh)."""
        g = Graph()
        memo[id(self)] = g
        g._names, g._next_suffix = set(self._names), dict(self._next_suffix)
        g.name, g.is_subgraph = self.name, self.is_subgraph
        for op in self.ops:
            new = Op(op.type, copy.deepcopy(list(op.inputs), memo),
                     copy.deepcopy(list(op.outputs), memo),
                     copy.deepcopy(op.options, memo), op.name, op.custom_code, op.origin)
            new.subgraphs = copy.deepcopy(op.subgraphs, memo)
            new.intermediates = copy.deepcopy(op.intermediates, memo)
            g.insert_op(new)
        g.inputs = copy.deepcopy(list(self.inputs), memo)
        g.outputs = copy.deepcopy(list(self.outputs), memo)
        return g


def inputs_upstream(graph: Graph, tensors: list[Tensor], limit: int = 100_000) -> list[str]:
    """Names of `graph`'s inputs that `tensors` are computed from (at most `limit` tensors
    searched)."""
    found, seen, stack = set(), set(), list(tensors)
    while stack and len(seen) < limit:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        if graph.is_input(t):
            found.add(t.name)
        op = graph.producer(t)
        if op is not None:
            stack.extend(x for x in op.inputs if x is not None)
    return sorted(found)


def all_graphs(graph: Graph) -> list[Graph]:
    """`graph` and every graph its control-flow ops call, nested ones included, each once,
    callers before callees (the order export.py numbers subgraphs in)."""
    out, seen, stack = [], set(), [graph]
    while stack:
        g = stack.pop()
        if id(g) in seen:
            continue
        seen.add(id(g))
        out.append(g)
        if has_subgraphs(g):
            called = [sub for op in g.ops if op.subgraphs for sub in op.subgraphs.values()]
            stack.extend(reversed(called))
    return out


def has_subgraphs(graph: Graph) -> bool:
    """Whether an op of `graph` calls subgraphs (O(1): the index keeps the callers; the
    pass pipeline asks before every pass)."""
    return bool(graph._ix.callers)


def index_checks_enabled() -> bool:
    """EDGELITE_CHECK_IR=1: Graph.check() and run_passes (after every pass) validate the
    index; the test suite turns it on."""
    return os.environ.get("EDGELITE_CHECK_IR", "") == "1"
