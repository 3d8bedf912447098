"""Lowering: TF nodes -> IR ops, one rule per TF op type, in an explicit registry.

A rule is `rule(ctx, node)`: it reads the node's inputs as IR tensors from `ctx`, adds ops to
`ctx.graph` and registers the node's outputs. Rules translate literally (BiasAdd -> ADD,
FusedBatchNorm -> MUL + ADD, MatMul -> MATMUL); making the result lean is the passes' job.

Each registry entry pairs the rule with the NodeSpec of the nodes it accepts (spec.py); the
spec is checked before the rule runs. Everything a node's lowering does -- validation, the
rule, folding its ops -- runs inside one error boundary (`_lower_node`): whatever goes wrong
comes out as one EdgeliteError line starting "node 'name' (OpType): ".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from edgelite.errors import EdgeliteError, GraphError, ShapeError, UnsupportedOpError
from edgelite.names import quoted, shown
from ..graphdef import TFGraph, TensorRef, outputs_read
from ..ir import Graph
from ..passes.fold_constants import try_fold
from ..tf_tensor import shape_from_proto
from . import (activations, array_ops, basic, control, conv, crop, detection, einsum,
               embeddings, fake_quant, functional, hints, image, linalg, math_ops, nn, random,
               resample, scatter, spectral, tensor_lists)
from .context import LowerCtx, attr_dtype, attr_shape, node_prefix
from .spec import INT32_MAX, MAX_OUTPUTS, Lowering, validate

REGISTRY: dict[str, Lowering] = {
    **basic.RULES,
    **control.RULES,
    **conv.RULES,
    **nn.RULES,
    **activations.RULES,
    **math_ops.RULES,
    **array_ops.RULES,
    **image.RULES,
    **resample.RULES,
    **crop.RULES,
    **fake_quant.RULES,
    **functional.RULES,
    **tensor_lists.RULES,
    **embeddings.RULES,
    **einsum.RULES,
    **detection.RULES,
    **spectral.RULES,
    **linalg.RULES,
    **scatter.RULES,
    **random.RULES,
}

OP_COLUMN = 28         # the op type column of the support table (TF op types are shorter)
TABLE_NAME_CHARS = 48  # a node name in the table: escaped, head and tail kept


@dataclass
class OpSupport:
    op_type: str
    nodes: list[str] = field(default_factory=list)
    supported: bool = True
    unsupported_nodes: list[str] = field(default_factory=list)


@dataclass
class SupportReport:
    """Per TF op type: how many nodes use it and whether edgelite can lower it; `hints`:
    what would make the unsupported ones go away (hints.py)."""

    ops: dict[str, OpSupport]
    hints: list[str] = field(default_factory=list)

    def add(self, node, supported: bool, name: str | None = None) -> None:
        s = self.ops.get(node.op)
        if s is None:  # (not setdefault: that builds an OpSupport for every node)
            s = self.ops[node.op] = OpSupport(node.op)
        s.nodes.append(node.name if name is None else name)
        if not supported:
            s.supported = False
            s.unsupported_nodes.append(s.nodes[-1])

    def refuse(self, op_type: str, name: str) -> None:
        """A node lowered without complaint but left unconvertible (lower/random.py)."""
        s = self.ops.setdefault(op_type, OpSupport(op_type))
        s.supported = False
        s.unsupported_nodes.append(name)

    @property
    def unsupported(self) -> list[OpSupport]:
        return [s for s in self.ops.values() if not s.supported]

    @property
    def ok(self) -> bool:
        return not self.unsupported

    def table(self, max_names: int = 5) -> str:
        """One row per op type; op types and node names are escaped and cut (a row stays
        under OP_COLUMN + max_names * (TABLE_NAME_CHARS + 2) + 60 characters) and rows are
        indented, so an op type such as "error: ..." cannot pass for an error line."""
        lines = [f"  {'TF op':<{OP_COLUMN}} {'nodes':>5}  status"]
        for s in sorted(self.ops.values(), key=lambda s: (s.supported, s.op_type)):
            bad = s.unsupported_nodes
            names = ", ".join(shown(n, TABLE_NAME_CHARS) for n in bad[:max_names])
            more = f", ... (+{len(bad) - max_names})" if len(bad) > max_names else ""
            status = "supported" if s.supported else f"UNSUPPORTED: {names}{more}"
            lines.append(f"  {shown(s.op_type, OP_COLUMN):<{OP_COLUMN}} {len(s.nodes):>5}  "
                         f"{status}")
        return "\n".join(lines)

    def error(self) -> UnsupportedOpError:
        bad = self.unsupported
        n = sum(len(s.unsupported_nodes) for s in bad)
        advice = "".join(f"{line}\n" for line in self.hint_lines())
        return UnsupportedOpError(
            f"{n} node(s) use {len(bad)} op type(s) edgelite cannot convert:\n{self.table()}\n"
            f"{advice}Use --allow-custom-ops to write them as CUSTOM ops for your own kernels, "
            "or replace them in the model.")

    def hint_lines(self) -> list[str]:
        return [f"  hint: {h}" for h in self.hints]


def lower_graph(tf: TFGraph, inputs: list[TensorRef], outputs: list[TensorRef],
                input_shapes: dict[str, tuple[int, ...]] | None = None,
                batch_size: int = 1, allow_custom_ops: bool = False) -> Graph:
    """Lower the nodes the outputs need into an IR Graph (no optimisation yet).

    Raises UnsupportedOpError with the full support report if any live node has no rule
    (unless allow_custom_ops, which writes such nodes as CUSTOM ops named after the TF op).
    """
    graph, report = lower_with_report(tf, inputs, outputs, input_shapes, batch_size,
                                      allow_custom_ops)
    if not report.ok:
        raise report.error()
    return graph


def lower_with_report(tf: TFGraph, inputs, outputs, input_shapes=None, batch_size: int = 1,
                      allow_custom_ops: bool = False) -> tuple[Graph | None, SupportReport]:
    """Lower what can be lowered and report every op type met on the live path.

    A node that cannot be lowered (malformed, or an op used in a way edgelite does not
    support) stops the lowering; the remaining nodes are still counted in the report, so an
    unsupported-op report (which is returned, as without the failure) stays complete. With
    every op supported, the first node's error is raised.
    """
    input_shapes = input_shapes or {}
    input_names = {r.node for r in inputs}
    for name in input_shapes:
        if name not in input_names:
            raise GraphError(f"--input-shape names {quoted(name)}, which is not an input; "
                             f"inputs are {', '.join(quoted(r.node) for r in inputs)}")
    graph = Graph()
    ctx = LowerCtx(graph, tf.library, allow_custom_ops)
    ctx.batch_size = batch_size
    report = ctx.report = SupportReport({})

    def bind_input(node) -> None:
        report.add(node, True)
        graph.inputs.append(_guarded(node, False, _input_tensor, ctx, node,
                                     input_shapes.get(node.name), batch_size))

    failure = lower_nodes(ctx, tf, inputs, outputs, report, bind_input)
    if failure is None:
        for op in random.settle_graph(graph, allow_custom_ops):
            if not allow_custom_ops:
                report.refuse(op.origin, op.outputs[0].name)
    if not report.ok:
        report.hints = hints.set_hints(tf, ctx, report)
        return None, report
    if failure is not None:
        raise failure
    # the model's inputs in the order asked for (lowering binds them in graph order)
    rank = {id(ctx.tensors[r.name]): k for k, r in enumerate(inputs) if r.name in ctx.tensors}
    graph.inputs = sorted(graph.inputs, key=lambda t: rank.get(id(t), len(rank)))
    for ref in outputs:
        if ctx.is_dead_ref(ref):
            raise GraphError(f"output {quoted(ref.name)} is in a branch of a tf.cond that is "
                             "never taken")
        if ref.name not in ctx.tensors:
            raise GraphError(f"output {quoted(ref.name)} does not exist (node "
                             f"{quoted(ref.node)} has no output {ref.index})")
        spectral.check_output(ctx, ref.name)
        graph.outputs.append(ctx.tensors[ref.name])
    return graph, report


def lower_nodes(ctx: LowerCtx, tf: TFGraph, inputs, outputs, report: SupportReport,
                bind_input) -> EdgeliteError | None:
    """Lower the nodes `outputs` need into ctx.graph; `bind_input(node)` makes each input.

    Every live node is added to `report` (qualified by ctx.display). A node that cannot be
    lowered stops the lowering: it is returned (the caller raises it unless the report has
    unsupported ops) and the remaining nodes are only counted -- the functions they call
    too (functional.report_calls), so `edgelite check` lists what subgraphs use.
    """
    input_names = {r.node for r in inputs}
    blocked: set[str] = set()  # nodes downstream of an unsupported one: not lowered
    failure: EdgeliteError | None = None
    order = tf.prune(inputs, outputs)
    ctx.reads = outputs_read(order, outputs, tf.node_refs)
    ctx.node_refs = tf.node_refs
    for node in order:
        if node.name in input_names:
            if failure is None:
                bind_input(node)
            continue
        if failure is None and ctx.is_dead(node):  # an untaken tf.cond branch: neither
            ctx.dead_nodes.add(node.name)             # lowered nor reported
            continue
        supported = node.op in REGISTRY
        report.add(node, supported or ctx.allow_custom_ops, ctx.display(node))
        if failure is not None or blocked and any(r.node in blocked for r in ctx.refs(node)):
            blocked.add(node.name)
            functional.report_calls(ctx, node, report)
        elif supported or ctx.allow_custom_ops:
            try:
                _guarded(node, True, _lower_node, ctx, node)
            except EdgeliteError as e:
                failure = e
        else:
            blocked.add(node.name)
    return failure


def _lower_node(ctx: LowerCtx, node) -> None:
    """Validate the node against its spec, run its rule and fold the ops it added."""
    entry = spectral.complex_lowering(ctx, node) or REGISTRY.get(node.op)
    if entry is None:
        _custom_op(ctx, node)
        return
    validate(ctx, node, entry.spec)
    graph = ctx.graph
    mark, count = graph.last_op(), graph.op_count()
    entry.rule(ctx, node)
    # Fold as we go, so later rules see constants (weights behind Identity reads,
    # shapes computed from constants) through ctx.const_input.
    for op in graph.ops_since(mark, count):
        if not op.origin:  # (an inlined function's ops keep their own)
            op.origin = node.op
        try_fold(ctx.graph, op) or random.settle(ctx.graph, op)


def _guarded(node, prefix_errors: bool, fn, *args):
    """fn(*args) inside the error boundary of one node.

    An EdgeliteError whose message does not start with "node 'name' (OpType)" gets that
    prefix (when prefix_errors); any other exception -- a bug or an unforeseen hostile input
    that slipped past the node's spec -- becomes one GraphError line naming the node.
    MemoryError is not caught: an allocation that large is a missing bound, not a message.
    """
    try:
        return fn(*args)
    except EdgeliteError as e:
        prefix = node_prefix(node)
        if not prefix_errors or str(e).startswith(prefix):
            raise
        try:
            named = type(e)(f"{prefix}: {e}")
        except Exception:  # noqa: BLE001 -- a subclass with another constructor
            named = GraphError(f"{prefix}: {e}")
        raise named from e
    except MemoryError:
        raise
    except Exception as e:  # noqa: BLE001 -- the safety net this function exists for
        prefix = node_prefix(node)
        detail = shown(str(e).strip().split("\n")[0] or "no detail", 200)
        raise GraphError(f"{prefix}: cannot be converted ({type(e).__name__}: {detail}); the "
                         "node is malformed or uses the op in a way edgelite does not "
                         "support") from e


def _custom_op(ctx: LowerCtx, node) -> None:
    """An op without a rule, written as CUSTOM with custom_code = the TF op type.

    Output count, dtypes and shapes come from the node's `_output_shapes` / `T` / `dtype`
    attributes when the GraphDef has them; otherwise one output like input 0.
    """
    ins = ctx.inputs(node)
    shapes = []
    if "_output_shapes" in node.attr:
        shapes = [shape_from_proto(p) for p in node.attr["_output_shapes"].list.shape]
        if len(shapes) > MAX_OUTPUTS:
            raise GraphError(f"{node_prefix(node)}: _output_shapes lists {len(shapes)} outputs "
                             f"(more than {MAX_OUTPUTS}); the GraphDef is malformed")
    dtype = attr_dtype(node, "T", None)
    if dtype is None:
        dtype = attr_dtype(node, "dtype", ins[0].dtype if ins else np.dtype(np.float32))
    outs = []
    for k in range(max(1, len(shapes))):
        shape = shapes[k] if k < len(shapes) and _valid_dims(shapes[k]) else None
        outs.append(ctx.output(node, dtype, k, shape))
    op = ctx.graph.add_op("CUSTOM", ins, outs, name=node.name)
    op.custom_code = node.op


def _valid_dims(shape, smallest: int = 0) -> bool:
    return shape is not None and all(smallest <= d <= INT32_MAX for d in shape)


def _input_tensor(ctx: LowerCtx, node, shape, batch_size: int):
    dtype = attr_dtype(node, "dtype", None)
    if dtype is None:
        dtype = attr_dtype(node, "T", np.dtype(np.float32))
    declared = attr_shape(node, "shape", None)
    if shape is not None:
        if declared is not None and len(declared) != len(shape):
            raise ShapeError(f"input {quoted(node.name)} has rank {len(declared)} (shape "
                             f"{list(declared)}) but --input-shape gives {list(shape)}")
        signature = tuple(shape)
    elif declared is None:
        raise ShapeError(f"input {quoted(node.name)} has unknown rank; give its shape with "
                         f"--input-shape {shown(node.name)}:1,H,W,C")
    else:
        signature = tuple(declared)
        shape = tuple(batch_size if (i == 0 and d < 0) else d for i, d in enumerate(declared))
        if any(d < 0 for d in shape):
            raise ShapeError(f"input {quoted(node.name)} has unknown dims {list(declared)}; give "
                             f"its shape with --input-shape {shown(node.name)}:" +
                             ",".join(str(d if d >= 0 else 1) for d in shape))
    if not _valid_dims(shape, 1):  # an empty input makes no model; TFLite dims are int32
        raise ShapeError(f"input {quoted(node.name)} has shape {list(shape)[:8]}; every "
                         f"dimension must be between 1 and {INT32_MAX} (set it with "
                         f"--input-shape {shown(node.name)}:...)")
    t = ctx.output(node, dtype, shape=tuple(int(d) for d in shape))
    t.shape_signature = signature
    return t
