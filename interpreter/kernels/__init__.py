"""The kernel registry: one OpDef per TFLite op (opdef.py), declared by the module that
implements it, and the views derived from those records.

One module per op or family, float and integer paths of an op side by side; each ends
with its ``OPS`` records. ``OPS`` here collects them: it is the only place that says
which ops exist. ``KERNELS`` is the interpreter's view (op name -> Kernel, the float and
integer kernels combined, the choice made in prepare()). An op missing here is reported
by allocate_tensors() as UnsupportedOpError.
"""

from __future__ import annotations

from . import (
    activations,
    arg_minmax,
    arithmetic,
    batch_matmul,
    bidirectional_sequence_lstm,
    bidirectional_sequence_rnn,
    binary,
    broadcast_args,
    cast,
    concatenation,
    control_flow,
    conv,
    cumsum,
    densify,
    depthwise_conv,
    dequantize,
    dynamic_update_slice,
    embedding_lookup,
    fft,
    fully_connected,
    gather,
    gather_nd,
    logical,
    lstm,
    matrix_diag,
    non_max_suppression,
    normalization,
    one_hot,
    pad,
    pooling,
    quantize,
    reduce,
    reshape,
    resize,
    reverse,
    rnn,
    scatter_nd,
    segment,
    shape_ops,
    slicing,
    softmax,
    space_batch,
    space_depth,
    split,
    svdf,
    tile,
    topk_v2,
    transpose,
    transpose_conv,
    unary,
    unique,
    variables,
    where,
)
from .base import Kernel, OpContext, OutputSpec, TensorInfo
from .opdef import OpDef, collect

OPS: dict[str, OpDef] = collect(
    activations, arg_minmax, arithmetic, batch_matmul, bidirectional_sequence_lstm,
    bidirectional_sequence_rnn, binary, cast, concatenation, control_flow, conv, cumsum,
    densify, depthwise_conv, dequantize,
    dynamic_update_slice, fully_connected, gather, logical, lstm, normalization, one_hot,
    pad, pooling, quantize, reduce, reshape, resize, reverse, rnn, shape_ops, slicing,
    softmax, space_batch, space_depth, split, svdf, tile, topk_v2, transpose, transpose_conv,
    unary, variables,
    embedding_lookup,
    gather_nd, segment, unique, where,
    non_max_suppression,
    broadcast_args, fft,
    matrix_diag, scatter_nd,
)

KERNELS: dict[str, Kernel] = {name: op.kernel for name, op in OPS.items()}

__all__ = ["KERNELS", "OPS", "Kernel", "OpContext", "OpDef", "OutputSpec", "TensorInfo"]
