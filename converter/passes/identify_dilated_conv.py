"""Identify SPACE_TO_BATCH_ND -> conv -> BATCH_TO_SPACE_ND as one dilated conv.

TensorFlow wrote dilated convolutions this way before Conv2D took dilations, and
tf.nn.convolution / Keras' Conv1D still do on CPU: the input's phases become batch samples,
a VALID, undilated CONV_2D / DEPTHWISE_CONV_2D runs on them, and BATCH_TO_SPACE_ND
interleaves the results back. Like TF's converter (tflite/converter/transforms/dilated_conv.h,
ConvertTFDilatedConvOp) this pass matches

    SPACE_TO_BATCH_ND -> [EXPAND_DIMS] -> conv -> [SQUEEZE] -> [PAD | ADD] -> BATCH_TO_SPACE_ND
        -> [ADD]

(EXPAND_DIMS / SQUEEZE on one axis adapt a 3-D Conv1D input; PAD and the bias ADD may sit
before or after BATCH_TO_SPACE_ND), every tensor inside read by the next op only, equal
constant block shapes = the dilation, a float32 conv with stride 1, dilation 1 and VALID
padding. It rewrites it to [EXPAND_DIMS] -> conv(dilation, SAME or VALID) -> [SQUEEZE], a
bias ADD folded into the conv's bias (its activation moved onto the conv).

TF decides SAME versus VALID from "paddings != crops" alone; here the padding is derived
and checked per spatial dimension. With input size n, block d, kernel k, paddings (p0, p1),
crops (c0, c1) and a PAD of (e0, e1) conv outputs, output i of the pattern is the dilated
conv of x read from x[i - P0 + d * t], t < k, where

    P0 = p0 + d * e0 - c0,    P1 = p1 + d * e1 - c1,

provided the crops remove every padded conv output (c0 >= d * e0, c1 >= d * e1). The rewrite
is made only when (P0, P1) is (0, 0) in every dimension (VALID) or TFLite's SAME padding of
that dimension in every dimension (SAME, stride 1: total (k - 1) * d, the smaller half
before): otherwise the pattern is left alone.
"""

from __future__ import annotations

import numpy as np

from ..ir import Activation, Graph, Op, Padding
from ..shape_inference import infer_shapes
from .fold_pad import same_padding
from .patterns import add_to_bias, channel_vector, const_operand, sole_producer

CONVS = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D"})


class _Match:
    """One matched pattern: its ops (None where an optional one is absent)."""

    def __init__(self, b2s: Op) -> None:
        self.b2s = b2s
        self.s2b = self.expand = self.conv = self.squeeze = None
        self.pad = self.inner_add = self.outer_add = None


def _bias_input(add: Op) -> tuple | None:
    """(data, constant) of an ADD of a constant, else None."""
    return const_operand(add)


def _match(graph: Graph, b2s: Op) -> _Match | None:
    m = _Match(b2s)
    op = sole_producer(graph, b2s.inputs[0], {"PAD", "ADD", "SQUEEZE"} | CONVS)
    if op is not None and op.type == "PAD":
        m.pad, op = op, sole_producer(graph, op.inputs[0], {"SQUEEZE"} | CONVS)
    elif op is not None and op.type == "ADD":
        args = _bias_input(op)
        m.inner_add = op
        op = args and sole_producer(graph, args[0], {"SQUEEZE"} | CONVS)
    if op is not None and op.type == "SQUEEZE":
        m.squeeze, op = op, sole_producer(graph, op.inputs[0], CONVS)
    if not op or op.type not in CONVS:
        return None
    m.conv = op
    src = sole_producer(graph, op.inputs[0], {"EXPAND_DIMS", "SPACE_TO_BATCH_ND"})
    if src is not None and src.type == "EXPAND_DIMS":
        m.expand, src = src, sole_producer(graph, src.inputs[0], {"SPACE_TO_BATCH_ND"})
    if src is None or (m.expand is None) != (m.squeeze is None):
        return None
    m.s2b = src
    # Only a per-channel bias commutes with moving values between batch and space.
    if m.inner_add is not None and channel_vector(_bias_input(m.inner_add)[1], m.conv) is None:
        return None
    consumers = graph.consumers(b2s.outputs[0])
    if len(consumers) == 1 and consumers[0].type == "ADD" and \
            sole_producer(graph, b2s.outputs[0], {"BATCH_TO_SPACE_ND"}) is b2s:
        m.outer_add = consumers[0]
    return m


def _ints(t) -> np.ndarray | None:
    return None if t is None or not t.is_const else np.asarray(t.data).astype(np.int64)


def _axis(value: int, rank: int = 4) -> int:
    return value + rank if value < 0 else value


def _expand_axis(m: _Match) -> int | None:
    axis = _ints(m.expand.inputs[1])
    return None if axis is None or axis.size != 1 else _axis(int(axis.reshape(-1)[0]))


def _padding_of(padding, n: int, k: int, d: int) -> tuple[int, int]:
    return (0, 0) if padding == Padding.VALID else same_padding(n, k, 1, d)


def _plan(m: _Match):
    """(padding, (dh, dw)) of the equivalent dilated conv, or None."""
    conv, s2b, b2s = m.conv, m.s2b, m.b2s
    o = conv.options
    if conv.inputs[0].dtype != np.float32 or o.get("padding") != Padding.VALID or \
            (o.get("stride_h"), o.get("stride_w")) != (1, 1) or \
            (o.get("dilation_h_factor", 1), o.get("dilation_w_factor", 1)) != (1, 1):
        return None
    block, block2 = _ints(s2b.inputs[1]), _ints(b2s.inputs[1])
    pads, crops = _ints(s2b.inputs[2]), _ints(b2s.inputs[2])
    if any(v is None for v in (block, block2, pads, crops)) or block.shape != block2.shape or \
            (block != block2).any() or pads.shape != (block.size, 2) or \
            crops.shape != pads.shape:
        return None
    x, y = s2b.inputs[0], b2s.outputs[0]
    rank = len(x.shape)
    extra = np.zeros((rank, 2), np.int64) if m.pad is None else _ints(m.pad.inputs[1])
    if extra is None or extra.shape != (rank, 2) or extra[0].any() or extra[-1].any() or \
            block.size != rank - 2:
        return None
    dims = _spatial(m, x.shape, block, pads, crops, extra[1:-1])
    if dims is None:
        return None
    kernel = conv.inputs[1].data.shape[1:3]  # OHWI / 1HWO
    for padding in (Padding.VALID, Padding.SAME):
        if all(p == _padding_of(padding, n, k, d) for (n, d, p), k in zip(dims, kernel)):
            out = [n + sum(p) - d * (k - 1) for (n, d, p), k in zip(dims, kernel)]
            want = [x.shape[0], *out, y.shape[-1]]
            if m.expand is not None:
                del want[_expand_axis(m)]
            return (padding, (dims[0][1], dims[1][1])) if tuple(want) == tuple(y.shape) \
                else None
    return None


def _spatial(m: _Match, shape, block, pads, crops, extra):
    """Per conv spatial dimension (H, W): (input size, dilation, (P0, P1)), or None where
    the crops keep a padded conv output or the pattern's axes do not line up."""
    dims = []
    for n, d, (p0, p1), (c0, c1), (e0, e1) in zip(shape[1:-1], block, pads, crops, extra):
        if c0 < d * e0 or c1 < d * e1:
            return None
        dims.append((int(n), int(d), (int(p0 + d * e0 - c0), int(p1 + d * e1 - c1))))
    if m.expand is None:
        return dims if len(dims) == 2 else None
    axis = _expand_axis(m)
    squeeze = [_axis(int(a)) for a in m.squeeze.options.get("squeeze_dims") or []]
    if len(dims) != 1 or axis not in (1, 2) or squeeze != [axis]:
        return None
    dims.insert(axis - 1, (1, 1, (0, 0)))  # the inserted axis: size 1, not dilated
    return dims


def _fold_bias(graph: Graph, conv: Op, add: Op | None) -> bool:
    """Fold an ADD of a per-channel constant into the conv's bias, moving its fused
    activation onto the conv (activations commute with moving values around)."""
    args = _bias_input(add) if add is not None else None
    bias = channel_vector(args[1], conv) if args else None
    if bias is None or conv.options.get("fused_activation_function") != Activation.NONE:
        return False
    add_to_bias(conv, graph, bias)
    conv.options["fused_activation_function"] = add.options.get("fused_activation_function",
                                                                Activation.NONE)
    return True


def _rewrite(graph: Graph, m: _Match, padding, dilation) -> None:
    """Drop S2B, B2S and PAD (the ops at the chain's ends), fold the bias ADDs; the last op
    kept produces the pattern's final tensor (its name and graph-output role stay)."""
    conv, final = m.conv, m.b2s.outputs[0]
    (m.expand or conv).inputs[0] = m.s2b.inputs[0]
    conv.options.update(padding=padding, dilation_h_factor=int(dilation[0]),
                        dilation_w_factor=int(dilation[1]))
    drop = [op for op in (m.s2b, m.b2s, m.pad) if op is not None]
    if m.inner_add is not None and _fold_bias(graph, conv, m.inner_add):
        drop.append(m.inner_add)
    if m.outer_add is not None and _fold_bias(graph, conv, m.outer_add):
        drop.append(m.outer_add)
        final = m.outer_add.outputs[0]
    for op in drop:
        graph.remove_op(op)
    kept = [op for op in (m.expand, conv, m.squeeze, m.inner_add)
            if op is not None and op not in drop]
    kept[-1].outputs[0] = final
    _set_shapes(m, kept, tuple(m.b2s.outputs[0].shape))


def _set_shapes(m: _Match, kept, final_shape) -> None:
    """Shapes inside the chain, which now runs on the unbatched input."""
    conv_shape = final_shape
    if m.expand is not None:
        axis = _expand_axis(m)
        x = tuple(m.expand.inputs[0].shape)
        m.expand.outputs[0].shape = x[:axis] + (1,) + x[axis:]
        conv_shape = final_shape[:axis] + (1,) + final_shape[axis:]
    for op in kept:
        if op is not m.expand:
            op.outputs[0].shape = conv_shape if op is m.conv else final_shape


def run(graph: Graph) -> int:
    matches = [m for m in map(lambda op: _match(graph, op),
                              graph.ops_of("BATCH_TO_SPACE_ND"))
               if m is not None]
    if not matches:
        return 0
    if any(t.shape is None for m in matches for t in (m.s2b.inputs[0], m.b2s.outputs[0])):
        infer_shapes(graph)
    n = 0
    for m in matches:
        plan = _plan(m)
        if plan is not None:
            _rewrite(graph, m, *plan)
            n += 1
    return n
