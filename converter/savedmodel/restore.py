"""Which checkpoint key restores which variable: read off the graph's own restore op.

A SavedModel (TF1 or TF2) and a TF1 .meta graph restore their variables by running
`saver_def.restore_op_name`. Whatever the writer, that op reaches assignments

    Assign(ref=VariableV2, value=RestoreV2:k)                TF1 ref variables
    AssignVariableOp(resource=VarHandleOp, value=RestoreV2:k) resource variables (TF1 and TF2)

where RestoreV2's `tensor_names` (a constant string vector) holds key k. In TF2 the assignments
sit inside the `__inference__traced_restore` function the restore op calls, the variables being
its arguments; the walk follows calls into their functions (arguments to the caller's inputs)
and Identity chains, so one rule serves every layout. A variable restored from a slice of a
saved tensor (partitioned variables) is refused in one line.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.errors import GraphError, UnsupportedOpError
from edgelite.names import quoted, shown
from ..control_flow.functions import ARG_OP, FuncGraph, function_from_def
from ..graphdef import parse_ref
from ..tf_tensor import tensor_to_numpy

VARIABLE_OPS = frozenset({"VarHandleOp", "VariableV2", "Variable"})
ASSIGN_OPS = frozenset({"Assign", "AssignVariableOp"})
CALL_OPS = frozenset({"PartitionedCall", "StatefulPartitionedCall"})
PASS_THROUGH = frozenset({"Identity", "Snapshot"})
MAX_VISITS = 2_000_000   # nodes visited in all: a last bound, far above real restore graphs


@dataclass(frozen=True, eq=False)
class _Scope:
    """A function body being walked, its arguments bound to the caller's tensors; `chain`:
    the functions on the call path down to it (itself included), to refuse recursion."""

    fn: FuncGraph
    args: dict          # argument name -> (caller ref, caller scope or None)
    chain: tuple[str, ...]
    sources: dict       # argument name -> what it resolves to (_source)


def restored_variables(gd, restore_op: str) -> dict[str, str]:
    """{variable node of the main graph: checkpoint key} for every variable the restore op
    assigns. The walk is iterative (a 3,000-deep call chain is fine), enters each function
    once per distinct binding of its arguments (the sources they resolve to), refuses a
    function that calls itself and an Identity cycle at once."""
    main = {n.name: n for n in gd.node}
    library = _Library(gd)
    if parse_ref(restore_op).node not in main:
        raise GraphError(f"the restore op {quoted(restore_op)} named by the saver is not in "
                         "the graph; the SavedModel is malformed")
    found: dict[str, str] = {}
    stack = [(parse_ref(restore_op).node, None)]
    seen: set = set()
    scopes: dict = {}   # (function, argument sources) -> its one _Scope
    while stack:
        name, scope = stack.pop()
        if (name, id(scope)) in seen:
            continue
        seen.add((name, id(scope)))
        if len(seen) > MAX_VISITS:
            raise GraphError("the restore op reaches more than "
                             f"{MAX_VISITS} nodes; the graph is malformed")
        node = _nodes(scope, main).get(name)
        if node is None:
            raise GraphError(f"the restore op reads {quoted(name)}, which is not in the graph")
        if node.op in ASSIGN_OPS:
            var, key = _assignment(node, scope, main)
            if found.setdefault(var, key) != key:
                raise GraphError(f"variable {quoted(var)} is restored from two keys, "
                                 f"{quoted(found[var])} and {quoted(key)}")
        if node.op in CALL_OPS:
            inner = _enter(node, scope, library, scopes, main)
            if inner is not None:
                stack.extend((n.name, inner) for n in inner.fn.nodes if n.op != ARG_OP)
        stack.extend((i.lstrip("^").split(":")[0], scope) for i in node.input)
    return found


class _Library:
    """The graph's functions by name, each converted once."""

    def __init__(self, gd) -> None:
        self.fdefs = {f.signature.name: f for f in gd.library.function}
        self.graphs: dict[str, FuncGraph] = {}

    def called(self, node) -> FuncGraph:
        f = node.attr["f"].func.name if "f" in node.attr else ""
        if f not in self.fdefs:
            raise GraphError(f"node {quoted(node.name)} ({shown(node.op)}) calls function "
                             f"{quoted(f)}, which is not in the library")
        if f not in self.graphs:
            self.graphs[f] = function_from_def(self.fdefs[f])
        return self.graphs[f]


def _enter(node, scope: _Scope | None, library: _Library, scopes: dict, main: dict):
    """The scope of the function `node` calls, or None when the same function with the
    same argument sources was entered already."""
    fn = library.called(node)
    chain = scope.chain if scope is not None else ()
    if fn.name in chain:
        raise GraphError(f"node {quoted(node.name)}: function {quoted(fn.name)} calls itself "
                         f"(through {' -> '.join(quoted(n) for n in chain[-3:])}); the restore "
                         "graph is malformed")
    args = {a: (r, scope) for a, r in zip(fn.args, node.input)}
    sources = {a: _source(r, scope, main) for a, r in zip(fn.args, node.input)}
    key = (fn.name, tuple(sources[a] for a in fn.args if a in sources))
    if key in scopes:
        return None
    inner = scopes[key] = _Scope(fn, args, chain + (fn.name,), sources)
    return inner


def _source(ref: str, scope: _Scope | None, main: dict):
    """What an argument resolves to, as a hashable key: (node, output, scope id). Resolved
    within `scope` only; an argument of `scope` has its source recorded already, so a deep
    call chain costs one step per call."""
    try:
        node, index, where = _resolve(ref, scope, main, through_args=False)
    except GraphError:      # reported if the walk ever reads it
        return (ref, None, id(scope))
    if node.op == ARG_OP and where is not None and node.name in where.sources:
        return where.sources[node.name]
    return (node.name, index, id(where))


def _nodes(scope: _Scope | None, main: dict) -> dict:
    return scope.fn.by_name if scope is not None else main


def _resolve(ref: str, scope: _Scope | None, main: dict, through_args: bool = True):
    """The node (and output index, and scope) `ref` reads, through function arguments
    (unless `through_args` is False) and Identity nodes; an Identity cycle is refused when
    it closes."""
    passed: set = set()
    while True:
        r = parse_ref(ref)
        node = _nodes(scope, main).get(r.node)
        if node is None:
            raise GraphError(f"{quoted(ref)} names no node of the graph")
        if (r.node, id(scope)) in passed:
            raise GraphError(f"{quoted(ref)}: Identity nodes form a cycle through "
                             f"{quoted(r.node)}; the graph is malformed")
        passed.add((r.node, id(scope)))
        if node.op == ARG_OP and scope is not None and through_args:
            if r.node not in scope.args:
                raise GraphError(f"function {quoted(scope.fn.name)} is called with too few "
                                 f"arguments for {quoted(r.node)}")
            ref, scope = scope.args[r.node]
            continue
        if node.op in PASS_THROUGH and node.input:
            ref = node.input[0]
            continue
        return node, r.index, scope


def _assignment(node, scope, main) -> tuple[str, str]:
    if len(node.input) < 2:
        raise GraphError(f"node {quoted(node.name)} ({shown(node.op)}) has "
                         f"{len(node.input)} inputs; the graph is malformed")
    var, _, var_scope = _resolve(node.input[0], scope, main)
    if var.op not in VARIABLE_OPS or var_scope is not None:
        raise UnsupportedOpError(f"node {quoted(node.name)} restores {quoted(var.name)} "
                                 f"({shown(var.op)}), not a variable of the main graph")
    restore, k, rscope = _resolve(node.input[1], scope, main)
    if restore.op != "RestoreV2":
        raise UnsupportedOpError(
            f"variable {quoted(var.name)} is restored by {quoted(restore.name)} "
            f"({shown(restore.op)}), not RestoreV2: only V2 checkpoints (TF 1.x tf.train.Saver's "
            "default since 2017, every TF2 save) are read")
    names = _strings(restore, 1, rscope, main, "tensor_names")
    slices = _strings(restore, 2, rscope, main, "shape_and_slices")
    if not (k < len(names) and k < len(slices)):
        raise GraphError(f"node {quoted(restore.name)} (RestoreV2) has no output {k}")
    if slices[k]:
        raise UnsupportedOpError(f"variable {quoted(var.name)} is restored from a slice "
                                 f"({shown(slices[k])}) of {quoted(names[k])} (a partitioned "
                                 "variable); save the model without variable partitioning")
    return var.name, names[k]


def _strings(restore, i: int, scope, main, what: str) -> list[str]:
    if len(restore.input) <= i:
        raise GraphError(f"node {quoted(restore.name)} (RestoreV2) lacks its {what}")
    const, _, _ = _resolve(restore.input[i], scope, main)
    if const.op != "Const" or "value" not in const.attr:
        raise UnsupportedOpError(f"node {quoted(restore.name)} (RestoreV2): its {what} are "
                                 f"computed ({shown(const.op)}), not a constant")
    values = tensor_to_numpy(const.attr["value"].tensor, f"node {quoted(const.name)}")
    return [v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
            for v in np.asarray(values, object).ravel()]
