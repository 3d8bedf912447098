"""Small matching helpers so rewrites read as patterns: "X whose only reader is Y"."""

from __future__ import annotations

import numpy as np

from ...interpreter.kernels import OPS
from ..ir import Graph, Op, Tensor

# Affine ops whose input 0 is the data (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED).
AFFINE = frozenset(n for n, op in OPS.items() if op.affine is not None and op.affine.data == 0)
# Where each op with a bias keeps it (TRANSPOSE_CONV: output_shape, weights, input, bias).
BIAS_INDEX = {n: op.affine.bias for n, op in OPS.items() if op.affine is not None}


def sole_producer(graph: Graph, t: Tensor | None, types) -> Op | None:
    """The op of one of `types` producing `t`, if `t` feeds nothing else and is no output."""
    if t is None or t.is_const or graph.is_output(t):
        return None
    op = graph.producer(t)
    if op is None or op.type not in types or graph.use_count(t) != 1:
        return None
    return op


def const_operand(op: Op) -> tuple[Tensor, Tensor] | None:
    """For a binary op: (variable input, constant input) if exactly one input is constant."""
    a, b = op.inputs[:2]
    if a is None or b is None or a.is_const == b.is_const:
        return None
    return (b, a) if a.is_const else (a, b)


def channel_vector(c: Tensor, op: Op) -> np.ndarray | None:
    """Constant `c` as a per-output-channel vector of affine `op`, if it broadcasts along the
    last axis only ([C], [1,..,1,C] or a scalar) without raising the output's rank."""
    d, channels = c.data, out_channels(op)
    out_rank = 2 if op.type == "FULLY_CONNECTED" else 4  # CONV / DEPTHWISE / TRANSPOSE_CONV
    if d.dtype.kind != "f" or d.ndim > out_rank or any(s != 1 for s in d.shape[:-1]):
        return None
    if d.size == 1:
        return np.full(channels, d.reshape(-1)[0], np.float64)
    if d.ndim >= 1 and d.shape[-1] == channels:
        return d.reshape(-1).astype(np.float64)
    return None


def scalar(t: Tensor | None, expect: float | None = None, rel: float = 1e-5) -> float | None:
    """The value of a one-element float constant (optionally: only if close to `expect`)."""
    if t is None or not t.is_const or t.data.size != 1 or t.data.dtype.kind != "f":
        return None
    v = float(t.data.reshape(-1)[0])
    if expect is not None and abs(v - expect) > rel * max(1.0, abs(expect)):
        return None
    return v


def other_input(op: Op, t: Tensor) -> Tensor | None:
    """For a binary op reading `t`, its other input (None if `t` is not an input)."""
    a, b = op.inputs[:2]
    return b if a is t else a if b is t else None


def replace_with(graph: Graph, last: Op, type_: str, inputs, options=None) -> Op:
    """Put one new op where `last` was, producing `last`'s output, and drop the matched
    intermediates nothing else reads any more (ops that only fed `last`)."""
    new = Op(type_, list(inputs), list(last.outputs), dict(options or {}), last.name,
             origin=last.origin)
    graph.replace_op(last, new)
    graph.remove_dead_ops(last.inputs)
    return new


def out_channels(op: Op) -> int:
    """Output channels of an affine op from its weights (OHWI, 1HWO or OI)."""
    w = op.inputs[1].data
    return w.shape[-1] if op.type == "DEPTHWISE_CONV_2D" else w.shape[0]


def scale_output_channels(op: Op, graph: Graph, s: np.ndarray) -> None:
    """Multiply affine `op`'s output channel c by s[c]: weights and bias both scale.

    conv(x, W)[c] * s[c] = conv(x, W * s[c])[c], so the product is exact up to float rounding.
    """
    w, b = op.inputs[1], op.inputs[2] if len(op.inputs) > 2 else None
    axis_shape = (1, 1, 1, -1) if op.type == "DEPTHWISE_CONV_2D" else (-1,) + (1,) * (w.data.ndim - 1)
    graph.set_const_input(op, 1, w.data * s.reshape(axis_shape))
    if b is not None:
        graph.set_const_input(op, 2, b.data * s)


def add_to_bias(op: Op, graph: Graph, b: np.ndarray) -> None:
    """Add b[c] to affine `op`'s output channel c, creating the bias if the op has none."""
    k = BIAS_INDEX[op.type]
    old = op.inputs[k] if len(op.inputs) > k else None  # None: bias omitted
    if old is None:
        op.inputs[k:] = [graph.const(f"{op.outputs[0].name}/bias", b, np.float32)]
    else:
        graph.set_const_input(op, k, old.data.astype(np.float64) + b)
