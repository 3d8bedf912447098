"""Remove arithmetic that does nothing: x * 1, x / 1, x + 0, x - 0 (constants all 1 or 0
that broadcast without growing x), and a SELECT / SELECT_V2 whose condition is a constant
all true or all false (the operand it picks, when it has the output's shape).

Keras' swish computes x * sigmoid(beta * x) with beta = 1.0 frozen in; this leaves
x * sigmoid(x), which is what TFLite's converter writes too. Dropout with keep_prob bound
to 1 leaves where(all true, x, 0) (lower/random.py).
"""

from __future__ import annotations

import numpy as np

from ...interpreter.kernels import OPS
from ..ir import PSEUDO_OPS, Graph
from ..shape_inference import infer_op_shapes
from .patterns import const_operand

# The constant operand that leaves the other unchanged (OpDef.neutral): MUL / DIV 1, ADD / SUB 0.
NEUTRAL = {n: op.neutral for n, op in OPS.items() if op.neutral is not None}


def run(graph: Graph) -> int:
    n = _selects(graph)
    for op in graph.ops_of(*NEUTRAL):
        args = const_operand(op)
        if not args or op.options.get("fused_activation_function", 0):
            continue
        x, c = args
        if op.type in ("DIV", "SUB") and op.inputs[1] is not c:
            continue
        if c.data.dtype.kind not in "fiu" or c.data.size and \
                c.data.flat[0] != NEUTRAL[op.type] or not np.all(c.data == NEUTRAL[op.type]):
            continue  # (the first value alone rules out most constants, without numpy's all)
        if c.data.size > 1 and (x.shape is None or
                                np.broadcast_shapes(x.shape, c.data.shape) != tuple(x.shape)):
            continue
        if x.dtype != op.outputs[0].dtype:
            continue
        graph.bypass(op, x)
        n += 1
    return n


def _selects(graph: Graph) -> int:
    n, selects = 0, graph.ops_of("SELECT", "SELECT_V2")
    ahead = _ShapesAhead(graph) if selects else None
    for op in selects:
        cond, out = op.inputs[0], op.outputs[0]
        if not cond.is_const or cond.data.size == 0 or graph.is_output(out):
            continue
        if cond.data.all():
            pick = op.inputs[1]
        elif not cond.data.any():
            pick = op.inputs[2]
        else:
            continue
        if any(t.shape is None for t in op.inputs):
            ahead.infer_before(op)  # (shapes are inferred after the passes)
        if pick.dtype == out.dtype and tuple(pick.shape or ()) == _selected_shape(op):
            graph.bypass(op, pick)
            n += 1
    return n


class _ShapesAhead:
    """Output shapes inferred op by op (as fold_shapes does), up to the op asked about: the
    SELECTs are visited in order, so each op is looked at once however many ask."""

    def __init__(self, graph: Graph) -> None:
        self.graph, self.ops, self.done = graph, tuple(graph.ops), 0

    def infer_before(self, target) -> None:
        """Infer the output shapes of the ops before `target` that lack them (ops removed
        since are skipped)."""
        ops = self.ops
        while self.done < len(ops) and ops[self.done] is not target:
            op = ops[self.done]
            self.done += 1
            if op in self.graph.ops and any(t.shape is None for t in op.outputs) and \
                    op.type != "CUSTOM" and op.type not in PSEUDO_OPS:
                infer_op_shapes(op)


def _selected_shape(op) -> tuple[int, ...] | None:
    """The output shape: SELECT_V2 broadcasts its three operands (select.cc); SELECT's
    operands have one shape (its condition may be a vector over the first axis)."""
    shapes = [t.shape for t in op.inputs]
    if any(s is None for s in shapes):
        return None
    if op.type == "SELECT":
        return tuple(shapes[1])
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None

