"""The bookkeeping behind ir.Graph: op order and who produces / reads each tensor.

Passes ask "who produces t", "who reads t", "how many readers" for nearly every op they
look at; answering by scanning the op list made conversion quadratic (a 16k-node graph took
68 s). The Graph keeps these facts in an index instead, and the index cannot go stale:

  - every tensor list of the IR (an op's inputs and outputs, the graph's inputs and outputs)
    is a TensorList, which reports each change (`op.inputs[i] = t`, `op.inputs = [...]`,
    `graph.outputs.append(t)`, slice writes, ...) to the index before making it;
  - the op list is a read-only view (OpSequence); ops are added, inserted, removed and
    replaced only through Graph methods, in O(1) each (a linked list over dicts);
  - `Graph.validate_index()` recomputes everything from scratch and compares; the test
    suite turns it on after every pass (EDGELITE_CHECK_IR=1).

Ops point at the GraphIndex (not at the Graph), so code that moves one graph's contents into
another (`g.__dict__.update(other.__dict__)`) keeps a consistent graph.
"""

from __future__ import annotations

from collections.abc import Sequence

from edgelite.errors import GraphError
from edgelite.names import quoted

# Reading ops[i] or ops[a:b] walks the links when that takes at most this many steps
# (lowering reads the few ops a rule has just appended); further than that, the whole
# order is materialised once and cached until the next change.
WALK_LIMIT = 64
# The gap between the ranks of consecutive ops as they are appended or renumbered
# (GraphIndex.rank): room for 40 halvings, 40 ops inserted at one place, before a renumber.
RANK_STEP = 1 << 40


class TensorList(list):
    """A list of tensors (None for an omitted optional input) that tells its owner about
    every change before making it: `on_change(removed, added)`."""

    __slots__ = ("_on_change",)

    def __init__(self, items=(), on_change=None) -> None:
        super().__init__(items)
        self._on_change = on_change

    def _notify(self, removed, added) -> None:
        if self._on_change is not None:
            self._on_change(removed, added)

    def __setitem__(self, i, value) -> None:
        if isinstance(i, slice):
            value = list(value)
            old = self[i]
            if i.step not in (None, 1) and len(value) != len(old):  # list would refuse it
                raise ValueError(f"attempt to assign sequence of size {len(value)} to "
                                 f"extended slice of size {len(old)}")
            self._notify(old, value)
        else:
            self._notify((self[i],), (value,))
        super().__setitem__(i, value)

    def __delitem__(self, i) -> None:
        old = self[i]
        self._notify(old if isinstance(i, slice) else (old,), ())
        super().__delitem__(i)

    def append(self, t) -> None:
        self._notify((), (t,))
        super().append(t)

    def extend(self, ts) -> None:
        ts = list(ts)
        self._notify((), ts)
        super().extend(ts)

    def __iadd__(self, ts):
        self.extend(ts)
        return self

    def __imul__(self, n):
        self[:] = list(self) * n
        return self

    def insert(self, i, t) -> None:
        self._notify((), (t,))
        super().insert(i, t)

    def pop(self, i=-1):
        t = self[i]
        self._notify((t,), ())
        return super().pop(i)

    def remove(self, t) -> None:
        self._notify((self[self.index(t)],), ())
        super().remove(t)

    def clear(self) -> None:
        self._notify(list(self), ())
        super().clear()

    # sort() and reverse() keep the same tensors: nothing to report.

    def __reduce_ex__(self, protocol):
        return list, (list(self),)   # copies are plain lists, detached from any owner


def tensor_list_property(attr: str) -> property:
    """An attribute holding a TensorList: reading gives the list, assigning replaces its
    contents (so the change is reported like any other write)."""
    def get(owner) -> TensorList:
        return getattr(owner, attr)

    def put(owner, tensors) -> None:
        getattr(owner, attr)[:] = tensors

    return property(get, put)


class OpSequence(Sequence):
    """Read-only view of a graph's ops in order: len, `op in`, iteration and indexing.

    Iterating walks a snapshot, so a loop may remove or insert ops as it goes."""

    __slots__ = ("_ix",)

    def __init__(self, ix: "GraphIndex") -> None:
        self._ix = ix

    def __len__(self) -> int:
        return len(self._ix.next) - 1

    def __contains__(self, op) -> bool:
        return getattr(op, "_ix", None) is self._ix

    def __iter__(self):
        return iter(self._ix.snapshot())

    def __reversed__(self):
        return reversed(self._ix.snapshot())

    def index(self, op, *args) -> int:
        if op not in self:
            raise ValueError(f"op {op.type} ({quoted(op.name)}) is not in this graph")
        return self._ix.snapshot().index(op, *args)

    def __getitem__(self, i):
        ix, n = self._ix, len(self)
        if ix.cached is None:
            if isinstance(i, slice):
                a, b, step = i.indices(n)
                if step == 1 and min(b, n - a) <= WALK_LIMIT:
                    return tuple(ix.walk(a, b, n))
            elif -n <= i < n and min(i % n, n - 1 - i % n) <= WALK_LIMIT:
                return next(ix.walk(i % n, i % n + 1, n))
        return ix.snapshot()[i]

    def __repr__(self) -> str:
        return f"OpSequence({list(self)!r})"


class GraphIndex:
    """Op order (a circular linked list through a sentinel) and the tensor maps."""

    END = None  # the sentinel key; ops are never None

    def __init__(self) -> None:
        self.next: dict = {self.END: self.END}
        self.prev: dict = {self.END: self.END}
        self.cached: tuple | None = ()
        self.producer: dict = {}     # tensor -> the op writing it
        self.readers: dict = {}      # tensor -> {op: how many of its inputs are the tensor}
        self.uses: dict = {}         # tensor -> op inputs reading it (sum of readers)
        self.graph_outputs: dict = {}  # tensor -> how many times it is a graph output
        self.graph_inputs: dict = {}   # tensor -> how many times it is a graph input
        self.callers: set = set()      # the ops calling subgraphs (WHILE, IF)
        # Ops by type (dicts as ordered sets), so a pass rewriting ADDs visits the ADDs only
        # and a pass whose types are absent costs one lookup; `rank` orders them: ranks
        # increase along the op list (an op appended gets the last rank + RANK_STEP, one
        # inserted the midpoint of its neighbours'; where no integer is left between them
        # the ranks are stale and renumbered by the next of_type, O(ops) once).
        self.by_type: dict = {}
        self.rank: dict = {}
        self.ranks_stale = False

    # -- order ----------------------------------------------------------------------------------
    def snapshot(self) -> tuple:
        if self.cached is None:
            out, op = [], self.next[self.END]
            while op is not self.END:
                out.append(op)
                op = self.next[op]
            self.cached = tuple(out)
        return self.cached

    def walk(self, a: int, b: int, n: int):
        """Ops a..b-1, walking from the nearer end."""
        if b <= a:
            return
        if b <= n - a:
            op = self.next[self.END]
            for _ in range(a):
                op = self.next[op]
            for _ in range(b - a):
                yield op
                op = self.next[op]
        else:
            op, ops = self.prev[self.END], []
            for _ in range(n - b):
                op = self.prev[op]
            for _ in range(b - a):
                ops.append(op)
                op = self.prev[op]
            yield from reversed(ops)

    def attach(self, op, before=None) -> None:
        """Link `op` in before op `before` (None: at the end) and index its tensors."""
        if getattr(op, "_ix", None) is not None:
            raise GraphError(f"internal: op {op.type} ({quoted(op.name)}) is already in a "
                             "graph; add a copy (Op.copy())")
        if before is not None and before not in self.next:
            raise GraphError(f"internal: op {before.type} ({quoted(before.name)}) is not in "
                             "this graph")
        self._check_new_outputs(op, (), op.outputs)
        after = self.prev[before]  # END when before is None: append
        self.next[after], self.next[op] = op, before
        self.prev[before], self.prev[op] = op, after
        self.cached = None
        op.__dict__["_ix"] = self
        self._rank_new(op, after, before)
        self._add_type(op, op.type)
        self._record_writes(op, (), op.outputs)  # (checked above)
        self.reads(op, (), op.inputs)
        if op.subgraphs:  # (calls(op), for an op in no other graph: not a caller yet)
            self.callers.add(op)

    def detach(self, op) -> None:
        if op._ix is not self:
            raise GraphError(f"internal: op {op.type} ({quoted(op.name)}) is not in this graph")
        self.reads(op, op.inputs, ())
        self.writes(op, op.outputs, ())
        before, after = self.next.pop(op), self.prev.pop(op)
        self.next[after], self.prev[before] = before, after
        self.cached = None
        op.__dict__["_ix"] = None
        self.callers.discard(op)
        del self.rank[op]
        self._drop_type(op, op.type)

    # -- ops by type ------------------------------------------------------------------------------
    def _rank_new(self, op, after, before) -> None:
        lo = self.rank[after] if after is not self.END else None
        hi = self.rank[before] if before is not self.END else None
        if hi is None:
            self.rank[op] = 0 if lo is None else lo + RANK_STEP
        elif lo is None:
            self.rank[op] = hi - RANK_STEP
        else:
            self.rank[op] = (lo + hi) // 2
            if self.rank[op] == lo:
                self.ranks_stale = True  # no integer left between: renumber when asked

    def _drop_type(self, op, type_) -> None:
        same = self.by_type[type_]
        del same[op]
        if not same:
            del self.by_type[type_]

    def _add_type(self, op, type_) -> None:
        same = self.by_type.get(type_)
        if same is None:  # (not setdefault: that makes a dict for every op)
            same = self.by_type[type_] = {}
        same[op] = None

    def retype(self, op, new_type) -> None:
        """op.type is about to become `new_type` (Op.__setattr__ reports it)."""
        self._drop_type(op, op.type)
        self._add_type(op, new_type)

    def of_type(self, types) -> list:
        """The ops of `types` (a name or names) in graph order."""
        found = [self.by_type[t] for t in ((types,) if isinstance(types, str) else types)
                 if t in self.by_type]
        if not found:
            return []
        if self.ranks_stale:
            self.rank = {op: k * RANK_STEP for k, op in enumerate(self.snapshot())}
            self.ranks_stale = False
        ops = [op for same in found for op in same]
        ops.sort(key=self.rank.__getitem__)
        return ops

    def calls(self, op) -> None:
        """Note whether `op` calls subgraphs (on attach, and when op.subgraphs is set)."""
        if op.subgraphs:
            self.callers.add(op)
        else:
            self.callers.discard(op)

    # -- tensor maps ----------------------------------------------------------------------------
    def reads(self, op, removed, added) -> None:
        for t in removed:
            if t is not None:
                by_op = self.readers[t]
                by_op[op] -= 1
                if not by_op[op]:
                    del by_op[op]
                    if not by_op:
                        del self.readers[t]
                _decrement(self.uses, t)
        for t in added:
            if t is not None:
                by_op = self.readers.setdefault(t, {})
                by_op[op] = by_op.get(op, 0) + 1
                self.uses[t] = self.uses.get(t, 0) + 1

    def writes(self, op, removed, added) -> None:
        self._check_new_outputs(op, removed, added)
        self._record_writes(op, removed, added)

    def _record_writes(self, op, removed, added) -> None:
        for t in removed:
            if self.producer.get(t) is op:
                del self.producer[t]
        for t in added:
            self.producer[t] = op

    def _check_new_outputs(self, op, removed, added) -> None:
        for t in added:
            other = self.producer.get(t)
            if other is not None and other is not op and not any(t is r for r in removed):
                raise GraphError(f"internal: tensor {quoted(t.name)} would have two producers "
                                 f"({other.type} and {op.type})")

    def graph_io(self, counts: dict):
        """on_change callback of the graph's input or output TensorList."""
        def changed(removed, added) -> None:
            for t in removed:
                _decrement(counts, t)
            for t in added:
                counts[t] = counts.get(t, 0) + 1
        return changed


def _decrement(counts: dict, t) -> None:
    counts[t] -= 1
    if not counts[t]:
        del counts[t]
