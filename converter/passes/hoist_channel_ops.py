"""Move per-channel arithmetic and activations up through a reshape that keeps the last axis,
next to the conv / fully-connected op they can fold into.

Keras' Conv1D freezes to ExpandDims -> Conv2D -> Squeeze -> BiasAdd -> activation (and a
BatchNorm's MUL + ADD after it): the bias and activation sit behind the SQUEEZE, out of
fuse_bias' / fuse_activation's / fold_batchnorm's reach, and int8 requantizes after each of
them. TFLite's converter moves them through the squeeze (its "move elementwise ops through
reshapes" patterns) and folds them into the CONV_2D. Here:

  AFFINE(x) -> L -> E          becomes          AFFINE(x) -> E -> L

for L a RESHAPE / SQUEEZE / EXPAND_DIMS whose input and output have the same last dimension
C (row-major order then keeps each element's channel), and E, L's only reader:

* ADD / MUL by a constant (either order), SUB / DIV of one (``y - c``, ``y / c``), the
  constant a scalar or per channel (shape [.., 1, C], no higher rank than E's output), E's
  output no bigger than L's -- with any fused activation;
* RELU / RELU6 / RELU_N1_TO_1.

E must lead back to an affine op (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED,
TRANSPOSE_CONV) through ops of this kind only, each read once and without a fused
activation of its own, so moving it lets the folding passes absorb it -- or feed only
another layout op (a Conv1DTranspose's SQUEEZE -> RELU -> the next layer's EXPAND_DIMS),
which it then meets; a chain moves one op per rewrite. The constant becomes a [C] vector
(or stays a scalar); E keeps its options; L keeps writing the tensor E wrote (so the
chain's result keeps its name, and shape), E writes what L wrote, with L's input's shape.
collapse_reshapes then merges the SQUEEZE with the next layer's EXPAND_DIMS.
"""

from __future__ import annotations

from ...interpreter.kernels import OPS
from ..ir import Activation, Graph, Op, Tensor
from .patterns import BIAS_INDEX, const_operand

LAYOUT = frozenset(n for n, op in OPS.items() if op.reshapes)  # RESHAPE, SQUEEZE, EXPAND_DIMS
ACTIVATIONS = frozenset(n for n, op in OPS.items() if op.activation is not None)  # RELU, ...
ARITHMETIC = frozenset(n for n, op in OPS.items() if op.neutral is not None)  # ADD, SUB, MUL, DIV


def _channel_constant(op: Op, data_in: Tensor, channels: int) -> Tensor | None:
    """The constant operand of a per-channel arithmetic op on `data_in`, else None."""
    args = const_operand(op)
    if args is None or args[0] is not data_in:
        return None
    if op.type in ("SUB", "DIV") and op.inputs[0] is not data_in:
        return None  # c - y, c / y
    c = args[1]
    d, out = c.data, op.outputs[0]
    if d.dtype.kind != "f" or out.shape is None or data_in.shape is None:
        return None
    if tuple(out.shape) != tuple(data_in.shape) or d.ndim > len(out.shape):
        return None  # the constant would broadcast the data up
    if any(s != 1 for s in d.shape[:-1]) or d.size not in (1, channels):
        return None
    return c


def _movable(op: Op, data_in: Tensor, channels: int) -> bool:
    if op.type in ACTIVATIONS:
        return op.inputs[0] is data_in
    return op.type in ARITHMETIC and _channel_constant(op, data_in, channels) is not None


def _leads_to_affine(graph: Graph, t: Tensor, channels: int) -> bool:
    """`t` comes from an affine op through movable ops only, each read once, none with a
    fused activation."""
    while True:
        producer = graph.producer(t)
        if producer is None or graph.use_count(t) != 1 or graph.is_output(t):
            return False
        if producer.options.get("fused_activation_function", Activation.NONE) != \
                Activation.NONE:
            return False
        if producer.type in BIAS_INDEX:
            return True
        if producer.type not in ACTIVATIONS | ARITHMETIC:
            return False
        data = producer.inputs[0] if producer.type in ACTIVATIONS else \
            (const_operand(producer) or (None,))[0]
        if data is None or not _movable(producer, data, channels):
            return False
        t = data


def _feeds_layout(graph: Graph, op: Op) -> bool:
    """`op`'s result goes only into another RESHAPE / SQUEEZE / EXPAND_DIMS: moved up, it
    leaves the two layout ops next to each other for collapse_reshapes."""
    z = op.outputs[0]
    readers = graph.consumers(z)
    return len(readers) == 1 and graph.use_count(z) == 1 and readers[0].type in LAYOUT


def _hoist(graph: Graph, layout: Op) -> bool:
    x, y = layout.inputs[0], layout.outputs[0]
    if x.shape is None or y.shape is None or not x.shape or not y.shape \
            or x.shape[-1] != y.shape[-1] or graph.is_output(y):
        return False
    readers = graph.consumers(y)
    if len(readers) != 1 or graph.use_count(y) != 1:
        return False
    op, channels = readers[0], int(y.shape[-1])
    if not _movable(op, y, channels) or not (_leads_to_affine(graph, x, channels)
                                             or _feeds_layout(graph, op)):
        return False
    z = op.outputs[0]
    inputs = [x if t is y else t for t in op.inputs]
    if op.type in ARITHMETIC:
        c = _channel_constant(op, y, channels)
        vector = c.data.reshape(-1) if c.data.size == channels else c.data.reshape(())
        inputs = [graph.const(c.name, vector) if t is c else t for t in inputs]
    graph.remove_op(op)
    layout.outputs = [z]          # the chain's result keeps its tensor
    op.inputs, op.outputs = inputs, [y]
    y.shape, y.shape_signature = tuple(x.shape), x.shape_signature
    layout.inputs[0] = y
    graph.insert_op(op, before=layout)
    return True


def run(graph: Graph) -> int:
    n = 0
    for layout in graph.ops_of(*LAYOUT):
        while _hoist(graph, layout):
            n += 1
    return n
