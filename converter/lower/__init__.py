"""Lowering: TF nodes -> IR ops, one rule per TF op type, in an explicit registry.

A rule is `rule(ctx, node)`: it reads the node's inputs as IR tensors from `ctx`, adds ops to
`ctx.graph` and registers the node's outputs. Rules translate literally (BiasAdd -> ADD,
FusedBatchNorm -> MUL + ADD, MatMul -> MATMUL); making the result lean is the passes' job.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...interpreter.errors import GraphError, ShapeError, UnsupportedOpError
from ..graphdef import TFGraph, TensorRef, data_inputs
from ..ir import Graph
from ..passes.fold_constants import try_fold
from ..tf_tensor import shape_from_proto
from . import activations, array_ops, basic, control, conv, fake_quant, image, math_ops, nn
from .context import LowerCtx, attr_dtype, attr_shape

REGISTRY = {
    **basic.RULES,
    **control.RULES,
    **conv.RULES,
    **nn.RULES,
    **activations.RULES,
    **math_ops.RULES,
    **array_ops.RULES,
    **image.RULES,
    **fake_quant.RULES,
}

@dataclass
class OpSupport:
    op_type: str
    nodes: list[str] = field(default_factory=list)
    supported: bool = True


@dataclass
class SupportReport:
    """Per TF op type: how many nodes use it and whether edgelite can lower it."""

    ops: dict[str, OpSupport]

    def add(self, node, supported: bool) -> None:
        s = self.ops.setdefault(node.op, OpSupport(node.op))
        s.nodes.append(node.name)
        s.supported = s.supported and supported

    @property
    def unsupported(self) -> list[OpSupport]:
        return [s for s in self.ops.values() if not s.supported]

    @property
    def ok(self) -> bool:
        return not self.unsupported

    def table(self, max_names: int = 5) -> str:
        lines = [f"{'TF op':<28} {'nodes':>5}  status"]
        for s in sorted(self.ops.values(), key=lambda s: (s.supported, s.op_type)):
            status = "supported" if s.supported else "UNSUPPORTED: " + ", ".join(
                s.nodes[:max_names]) + (f", ... (+{len(s.nodes) - max_names})"
                                        if len(s.nodes) > max_names else "")
            lines.append(f"{s.op_type:<28} {len(s.nodes):>5}  {status}")
        return "\n".join(lines)

    def error(self) -> UnsupportedOpError:
        bad = self.unsupported
        n = sum(len(s.nodes) for s in bad)
        return UnsupportedOpError(
            f"{n} node(s) use {len(bad)} op type(s) edgelite cannot convert:\n{self.table()}\n"
            "Use --allow-custom-ops to write them as CUSTOM ops for your own kernels, or "
            "replace them in the model.")


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
    """Lower what can be lowered and report every op type met on the live path."""
    input_shapes = input_shapes or {}
    input_names = {r.node for r in inputs}
    for name in input_shapes:
        if name not in input_names:
            raise GraphError(f"--input-shape names {name!r}, which is not an input; inputs are "
                             f"{[r.node for r in inputs]}")
    graph = Graph()
    ctx = LowerCtx(graph)
    report = SupportReport({})
    blocked: set[str] = set()  # nodes downstream of an unsupported one: not lowered
    for node in tf.prune(inputs, outputs):
        if node.name in input_names:
            report.add(node, True)
            graph.inputs.append(_input_tensor(ctx, node, input_shapes.get(node.name), batch_size))
            continue
        if ctx.is_dead(node):  # an untaken tf.cond branch: neither lowered nor reported
            ctx.dead_nodes.add(node.name)
            continue
        supported = node.op in REGISTRY
        report.add(node, supported or allow_custom_ops)
        if any(r.node in blocked for r in data_inputs(node)):
            blocked.add(node.name)
        elif supported:
            start = len(graph.ops)
            REGISTRY[node.op](ctx, node)
            # Fold as we go, so later rules see constants (weights behind Identity reads,
            # shapes computed from constants) through ctx.const_input.
            for op in graph.ops[start:]:
                op.origin = node.op
                try_fold(graph, op)
        elif allow_custom_ops:
            _custom_op(ctx, node)
        else:
            blocked.add(node.name)
    if not report.ok:
        return None, report
    for ref in outputs:
        if ctx.is_dead_ref(ref):
            raise GraphError(f"output {ref.name!r} is in a branch of a tf.cond that is never "
                             "taken")
        if ref.name not in ctx.tensors:
            raise GraphError(f"output {ref.name!r} does not exist (node {ref.node!r} has no "
                             f"output {ref.index})")
        graph.outputs.append(ctx.tensors[ref.name])
    return graph, report


def _custom_op(ctx: LowerCtx, node) -> None:
    """An op without a rule, written as CUSTOM with custom_code = the TF op type.

    Output count, dtypes and shapes come from the node's `_output_shapes` / `T` / `dtype`
    attributes when the GraphDef has them; otherwise one output like input 0.
    """
    ins = ctx.inputs(node)
    shapes = []
    if "_output_shapes" in node.attr:
        shapes = [shape_from_proto(p) for p in node.attr["_output_shapes"].list.shape]
    dtype = attr_dtype(node, "T", None)
    if dtype is None:
        dtype = attr_dtype(node, "dtype", ins[0].dtype if ins else np.dtype(np.float32))
    outs = []
    for k in range(max(1, len(shapes))):
        shape = shapes[k] if k < len(shapes) and shapes[k] is not None \
            and all(d >= 0 for d in shapes[k]) else None
        outs.append(ctx.output(node, dtype, k, shape))
    op = ctx.graph.add_op("CUSTOM", ins, outs, name=node.name)
    op.custom_code = node.op


def _input_tensor(ctx: LowerCtx, node, shape, batch_size: int):
    dtype = attr_dtype(node, "dtype", None)
    if dtype is None:
        dtype = attr_dtype(node, "T", np.dtype(np.float32))
    declared = attr_shape(node, "shape", None)
    if shape is not None:
        if declared is not None and len(declared) != len(shape):
            raise ShapeError(f"input {node.name!r} has rank {len(declared)} (shape "
                             f"{list(declared)}) but --input-shape gives {list(shape)}")
        signature = tuple(shape)
    elif declared is None:
        raise ShapeError(f"input {node.name!r} has unknown rank; give its shape with "
                         f"--input-shape {node.name}:1,H,W,C")
    else:
        signature = tuple(declared)
        shape = tuple(batch_size if (i == 0 and d < 0) else d for i, d in enumerate(declared))
        if any(d < 0 for d in shape):
            raise ShapeError(f"input {node.name!r} has unknown dims {list(declared)}; give its "
                             f"shape with --input-shape {node.name}:" +
                             ",".join(str(d if d >= 0 else 1) for d in shape))
    t = ctx.output(node, dtype, shape=tuple(int(d) for d in shape))
    t.shape_signature = signature
    return t
