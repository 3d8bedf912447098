"""Fold a constant ADD / SUB / MUL on a fully-connected op's input into its weights and bias.

Pattern: x -> op(c) -> FULLY_CONNECTED(W [out, in], b), the op's result read by nothing
else, c a constant along the input features ([in], [1,..,1,in] or a scalar):
  ADD c (x + c):  b' = b + W c          SUB c (x - c):  b' = b - W c
  MUL c (x * c):  W' = W * c (each input column scaled)
TFLite's converter does the same (optimize.cc FuseBinaryOpToFollowingAffineOp): a Keras
normalization or an offset in front of a Dense layer costs no op. Conv ops are left alone
(their zero padding would see the offset at the borders).
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph
from .patterns import add_to_bias, const_operand


def _features(c: np.ndarray, n_in: int, x_rank: int | None) -> np.ndarray | None:
    """c as one value per input feature, if it broadcasts along the last axis only."""
    if c.dtype.kind != "f" or (x_rank is not None and c.ndim > x_rank):
        return None
    if any(s != 1 for s in c.shape[:-1]) or (c.size != 1 and c.shape[-1] != n_in):
        return None
    return np.broadcast_to(c.reshape(-1).astype(np.float64), (n_in,))


# The op types the pattern is made of (passes/__init__.py skips the pass without them).
REQUIRES = (("ADD", "SUB", "MUL"), "FULLY_CONNECTED")


def run(graph: Graph) -> int:
    n = 0
    for op in graph.ops_of("ADD", "SUB", "MUL"):
        if op.options.get("fused_activation_function", 0) or graph.is_output(op.outputs[0]):
            continue
        args = const_operand(op)
        readers = graph.consumers(op.outputs[0])
        if not args or len(readers) != 1 or graph.use_count(op.outputs[0]) != 1:
            continue
        (fc,) = readers
        if fc.type != "FULLY_CONNECTED" or fc.inputs[0] is not op.outputs[0] \
                or fc.inputs[1] is op.outputs[0] or not fc.inputs[1].is_const \
                or fc.inputs[1].data.dtype.kind != "f" or fc.inputs[1].data.ndim != 2:
            continue
        if op.type == "SUB" and op.inputs[0] is not args[0]:
            continue  # c - x negates x: not worth a special case
        w = fc.inputs[1].data.astype(np.float64)
        x = args[0]
        c = _features(args[1].data, w.shape[1], len(x.shape) if x.shape is not None else None)
        if c is None or (x.shape is not None and op.outputs[0].shape is not None
                         and tuple(x.shape) != tuple(op.outputs[0].shape)):
            continue  # c would broadcast x to a larger shape
        if op.type == "MUL":
            graph.set_const_input(fc, 1, w * c[None, :])
        else:
            add_to_bias(fc, graph, (w @ c) * (1.0 if op.type == "ADD" else -1.0))
        graph.bypass(op, x)
        n += 1
    return n

