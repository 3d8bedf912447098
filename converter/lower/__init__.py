"""Lowering: TF nodes -> IR ops, one rule per TF op type, in an explicit registry.

A rule is `rule(ctx, node)`: it reads the node's inputs as IR tensors from `ctx`, adds ops to
`ctx.graph` and registers the node's outputs. Rules translate literally (BiasAdd -> ADD,
FusedBatchNorm -> MUL + ADD, MatMul -> MATMUL); making the result lean is the passes' job.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...interpreter.errors import GraphError, ShapeError, UnsupportedOpError
from ..graphdef import TFGraph, TensorRef
from ..ir import Graph
from ..passes.fold_constants import try_fold
from . import array_ops, basic, conv, math_ops, nn
from .context import LowerCtx, attr_dtype, attr_shape

REGISTRY = {
    **basic.RULES,
    **conv.RULES,
    **nn.RULES,
    **math_ops.RULES,
    **array_ops.RULES,
}

# Graph inputs: these need no rule when they are the chosen inputs.
INPUT_OPS = frozenset({"Placeholder", "PlaceholderWithDefault"})


@dataclass
class OpSupport:
    op_type: str
    nodes: list[str] = field(default_factory=list)
    supported: bool = True


@dataclass
class SupportReport:
    """Per TF op type: how many nodes use it and whether edgelite can lower it."""

    ops: dict[str, OpSupport]

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


def check_support(nodes, inputs: set[str]) -> SupportReport:
    ops: dict[str, OpSupport] = {}
    for node in nodes:
        s = ops.setdefault(node.op, OpSupport(node.op))
        s.nodes.append(node.name)
        if node.name not in inputs and node.op not in REGISTRY:
            s.supported = False
    return SupportReport(ops)


def lower_graph(tf: TFGraph, inputs: list[TensorRef], outputs: list[TensorRef],
                input_shapes: dict[str, tuple[int, ...]] | None = None,
                batch_size: int = 1) -> Graph:
    """Lower the nodes the outputs need into an IR Graph (no optimisation yet)."""
    input_shapes = input_shapes or {}
    for name in input_shapes:
        if name not in {r.node for r in inputs}:
            raise GraphError(f"--input-shape names {name!r}, which is not an input; inputs are "
                             f"{[r.node for r in inputs]}")
    nodes = tf.prune(inputs, outputs)
    input_names = {r.node for r in inputs}
    report = check_support(nodes, input_names)
    if not report.ok:
        raise report.error()
    graph = Graph()
    ctx = LowerCtx(graph)
    for node in nodes:
        if node.name in input_names:
            graph.inputs.append(_input_tensor(ctx, node, input_shapes.get(node.name), batch_size))
        else:
            start = len(graph.ops)
            REGISTRY[node.op](ctx, node)
            # Fold as we go, so later rules see constants (weights behind Identity reads,
            # shapes computed from constants) through ctx.const_input.
            for op in graph.ops[start:]:
                try_fold(graph, op)
    for ref in outputs:
        if ref.name not in ctx.tensors:
            raise GraphError(f"output {ref.name!r} does not exist (node {ref.node!r} has no "
                             f"output {ref.index})")
        graph.outputs.append(ctx.tensors[ref.name])
    return graph


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
