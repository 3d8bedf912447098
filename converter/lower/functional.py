"""Functional control flow: While / If -> WHILE / IF ops with subgraphs; calls inlined.

The functions come from the GraphDef's library or from TF1 frames and conds raised by
control_flow/ (both FuncGraphs). Each called function is lowered by the same machinery as
the main graph (lower_nodes), into:
  - a new Graph, the op's subgraph: While's cond and body, a data-dependent If's branches.
    Its inputs are fresh tensors shaped like the op's operands; a loop invariant that is a
    constant (the body returns the argument unchanged and the While's operand is constant)
    is read as a copy of the constant inside cond and body, so weights fold there (the
    argument stays an input and output: the subgraph interface does not change);
  - the caller's own graph (inlining): a PartitionedCall / StatefulPartitionedCall, and an
    If whose predicate is constant (only the taken branch is lowered, as TF1 conds on a
    constant are today). Names of inlined library-function nodes get "<call node>/" in front.
A function calling itself is refused, and so are expansions past MAX_FUNCTION_NODES nodes.
"""

from __future__ import annotations

import numpy as np

from edgelite.errors import DTypeError, EdgeliteError, GraphError, UnsupportedOpError
from edgelite.names import quoted
from ..control_flow import FuncGraph
from ..graphdef import TFGraph, TensorRef, parse_ref
from ..ir import Graph, Tensor, inputs_upstream
from .context import LowerCtx, fail
from .spec import ANY, In, Lowering, spec

# Nodes lowered from functions in one conversion (inlined calls and subgraphs together):
# generous for real models (a Keras LSTM's loop has ~100), small enough that a library whose
# calls fan out exponentially is stopped long before memory runs out.
MAX_FUNCTION_NODES = 1_000_000
CALLS = {  # op -> the attributes naming the functions it calls
    "While": ("cond", "body"), "StatelessWhile": ("cond", "body"),
    "If": ("then_branch", "else_branch"), "StatelessIf": ("then_branch", "else_branch"),
    "PartitionedCall": ("f",), "StatefulPartitionedCall": ("f",),
}


def lower_function(ctx: LowerCtx, node, fn: FuncGraph, args: list[Tensor],
                   graph: Graph | None = None, consts: dict[int, Tensor] | None = None,
                   body: bool = False, only: list[int] | None = None):
    """Lower `fn` called by `node` with `args`: into a new subgraph (graph=None; returns the
    Graph) or inlined into ctx.graph (graph=ctx.graph; returns the result tensors).
    `consts`: arguments read as constants inside; a loop `body` returns those arguments
    unchanged (its result k is its input k). `only`: which of its results to compute
    (default all), in that order."""
    from . import SupportReport, lower_nodes  # the registry imports this module
    if fn.name in ctx.call_stack:
        raise fail(GraphError, node, f"function {quoted(fn.name)} calls itself (through "
                   f"{' -> '.join(quoted(n) for n in ctx.call_stack[-3:])}); recursive "
                   "functions cannot be converted")
    if len(fn.args) != len(args):
        raise fail(GraphError, node, f"passes {len(args)} arguments to function "
                   f"{quoted(fn.name)}, which takes {len(fn.args)}")
    ctx.budget[0] += len(fn.nodes)
    if ctx.budget[0] > MAX_FUNCTION_NODES:
        raise fail(GraphError, node, f"the functions called expand to more than "
                   f"{MAX_FUNCTION_NODES} nodes; the function library is too large or its "
                   "calls fan out")
    inline = graph is not None
    sub = graph if inline else Graph()
    if not inline:
        sub.name, sub.is_subgraph = fn.name, True
    scope = f"{ctx.scope}{node.name}/" if fn.local_names and inline else \
        f"{ctx.scope}{fn.name}/" if fn.local_names else ctx.scope
    child = ctx.child(sub, fn.name, scope)
    consts = consts or {}
    for i, (name, t) in enumerate(zip(fn.args, args)):
        if inline:
            child.tensors[name] = t
            continue
        arg = sub.tensor(name, t.dtype, t.shape)
        arg.shape_signature = t.shape_signature
        sub.inputs.append(arg)
        child.tensors[name] = sub.const(name, consts[i].data) if i in consts else arg
    report = child.report = _Report(ctx)
    tf = TFGraph(nodes=fn.nodes, library=ctx.library)
    refs = [TensorRef(a) for a in fn.args]
    outs = [_parse(r) for r in fn.rets]
    if only is not None:
        outs = [outs[k] for k in only]
    failure = lower_nodes(child, tf, refs, outs, report, lambda n: None)
    if report.unsupported_seen:
        raise UnsupportedOpError(f"function {quoted(fn.name)} uses unsupported ops")
    if failure is not None:
        raise failure
    results = []
    for k, ref in enumerate(outs):
        if body and k in consts:
            results.append(sub.inputs[k])
        elif ref.name in child.tensors:
            results.append(child.tensors[ref.name])
        else:
            raise fail(GraphError, node, f"function {quoted(fn.name)} returns "
                       f"{quoted(ref.name)}, which it does not compute")
    if inline:
        return results
    sub.outputs = results
    return sub


class _Report:
    """The caller's SupportReport, noting whether this function met an unsupported op."""

    def __init__(self, ctx: LowerCtx) -> None:
        self.inner = ctx.report
        self.unsupported_seen = False

    def add(self, node, supported: bool, name: str | None = None) -> None:
        self.unsupported_seen |= not supported
        self.inner.add(node, supported, name)


def _parse(ref: str) -> TensorRef:
    return parse_ref(ref)


def report_calls(ctx: LowerCtx, node, report) -> None:
    """Count the nodes of the functions `node` calls without lowering them (the caller is
    blocked by an unsupported op upstream): `edgelite check` lists them too."""
    from . import REGISTRY
    stack = [(ctx.library.called(node, attr), ctx.scope) for attr in CALLS.get(node.op, ())]
    seen = set(ctx.call_stack)
    while stack:
        fn, scope = stack.pop()
        if fn.name in seen:
            continue
        seen.add(fn.name)
        ctx.budget[0] += len(fn.nodes)
        if ctx.budget[0] > MAX_FUNCTION_NODES:
            raise fail(GraphError, node, f"the functions called expand to more than "
                       f"{MAX_FUNCTION_NODES} nodes")
        inner = f"{scope}{fn.name}/" if fn.local_names else scope
        tf = TFGraph(nodes=fn.nodes, library=ctx.library)
        args = [TensorRef(a) for a in fn.args]
        for n in tf.prune(args, [_parse(r) for r in fn.rets]):
            if n.name in fn.args:
                continue
            report.add(n, n.op in REGISTRY or ctx.allow_custom_ops, inner + n.name)
            stack.extend((ctx.library.called(n, a), inner) for a in CALLS.get(n.op, ()))


# -- rules ----------------------------------------------------------------------------------
def lower_while(ctx: LowerCtx, node) -> None:
    ins = ctx.inputs(node)
    cond_fn, body_fn = ctx.library.called(node, "cond"), ctx.library.called(node, "body")
    if len(body_fn.rets) != len(ins) or len(cond_fn.rets) != 1:
        raise fail(GraphError, node, f"body {quoted(body_fn.name)} returns "
                   f"{len(body_fn.rets)} values for {len(ins)} loop variables, or cond "
                   f"{quoted(cond_fn.name)} returns {len(cond_fn.rets)} (expected 1)")
    consts = {i: ins[i] for i in body_fn.passthrough() if ins[i].is_const}
    cond = lower_function(ctx, node, cond_fn, ins, consts=consts)
    body = lower_function(ctx, node, body_fn, ins, consts=consts, body=True)
    if cond.outputs[0].dtype != np.bool_:
        raise fail(DTypeError, node, f"cond {quoted(cond_fn.name)} returns "
                   f"{np.dtype(cond.outputs[0].dtype).name}, not bool")
    outs = [ctx.output(node, t.dtype, k) for k, t in enumerate(ins)]
    op = ctx.graph.add_op("WHILE", ins, outs, name=node.name)
    op.subgraphs = {"cond": cond, "body": body}
    for k, t in consts.items():  # an invariant constant leaves the loop as it came in
        ctx.alias(node, t, k)


def lower_if(ctx: LowerCtx, node) -> None:
    """Only the results something reads are computed: a training graph's If also returns
    its branch's intermediates (as Optionals) for the gradient, which inference never runs."""
    pred, args = ctx.input(node, 0), ctx.inputs(node)[1:]
    then_fn = ctx.library.called(node, "then_branch")
    else_fn = ctx.library.called(node, "else_branch")
    used = ctx.outputs_read(node, len(then_fn.rets))
    if pred.is_const:  # folded like a TF1 cond on a constant: the taken branch, inlined
        taken = then_fn if bool(np.asarray(pred.data).reshape(-1)[0]) else else_fn
        for k, t in zip(used, lower_function(ctx, node, taken, args, graph=ctx.graph,
                                             only=used)):
            ctx.alias(node, t, k)
        return
    ctx.undecided_conds.append((ctx.display(node), pred, ctx.graph))
    if pred.dtype != np.bool_:
        raise fail(UnsupportedOpError, node, f"the condition {quoted(pred.name)} is "
                   f"{np.dtype(pred.dtype).name}; TFLite's IF needs a bool")
    consts = {i: t for i, t in enumerate(args) if t.is_const}  # weights stay constants inside
    try:
        then_g = lower_function(ctx, node, then_fn, args, consts=consts, only=used)
        else_g = lower_function(ctx, node, else_fn, args, consts=consts, only=used)
    except EdgeliteError as e:
        deciding = inputs_upstream(ctx.graph, [pred])
        if not deciding:
            raise
        names = ", ".join(quoted(n) for n in deciding)
        hint = (f"{e} (the cond is converted both ways because input(s) {names} decide it "
                "at run time; --set NAME=VALUE binds one and keeps one branch)")
        try:
            hinted = type(e)(hint)
        except Exception:  # noqa: BLE001 -- a subclass with another constructor
            hinted = GraphError(hint)
        raise hinted from e
    if [t.dtype for t in then_g.outputs] != [t.dtype for t in else_g.outputs]:
        raise fail(DTypeError, node, "the branches return different dtypes")
    outs = [ctx.output(node, t.dtype, k) for k, t in zip(used, then_g.outputs)]
    op = ctx.graph.add_op("IF", [pred, *args], outs, name=node.name)
    op.subgraphs = {"then": then_g, "else": else_g}


def lower_call(ctx: LowerCtx, node) -> None:
    fn = ctx.library.called(node, "f")
    for k, t in enumerate(lower_function(ctx, node, fn, ctx.inputs(node), graph=ctx.graph)):
        ctx.alias(node, t, k)


_VARS = spec(variadic=In("the loop variable", ANY, typed=None), n_min=0)
_CALL = spec(variadic=In("the argument", ANY, typed=None), n_min=0)
_IF = spec(variadic=In("the condition and argument", ANY, typed=None), n_min=1)
RULES = {
    "While": Lowering(lower_while, _VARS),
    "StatelessWhile": Lowering(lower_while, _VARS),
    "If": Lowering(lower_if, _IF),
    "StatelessIf": Lowering(lower_if, _IF),
    "PartitionedCall": Lowering(lower_call, _CALL),
    "StatefulPartitionedCall": Lowering(lower_call, _CALL),
}
