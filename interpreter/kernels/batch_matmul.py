"""BATCH_MATMUL (float32): batched lhs @ rhs with broadcast batch dimensions.

Matches tensorflow/lite/kernels/batch_matmul.cc (ResizeOutputTensor) and
reference_ops::BatchMatMul (tensorflow/lite/kernels/internal/reference/batch_matmul.h):

* both operands have rank >= 2; the last two dimensions are the matrices, the ones
  before are batch dimensions that broadcast like numpy (aligned from the right, 1
  stretches; TFLite allows up to 5 dimensions in all);
* adj_x / adj_y (BatchMatMulOptions) transpose the matrices of lhs / rhs first;
* output = broadcast(batch dims) + [lhs rows, rhs columns].

eval() is one np.matmul on (transposed) views into the output.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Kernel, OpContext, OutputSpec
from .opdef import OpDef
from .versions import OpSignature, T


@dataclass(frozen=True)
class BatchMatMulRecord:
    adj_x: bool
    adj_y: bool


def prepare(ctx: OpContext):
    ctx.check_arity(2, 2)
    a, b = ctx.input(0), ctx.input(1)
    ctx.require_dtype(a, (np.float32,), "lhs")
    ctx.require_dtype(b, (np.float32,), "rhs")
    if a.rank < 2 or b.rank < 2:
        raise ctx.shape_error(
            f"lhs {list(a.shape)} and rhs {list(b.shape)} must have at least 2 dimensions"
        )
    adj_x = bool(ctx.option("adj_x", False))
    adj_y = bool(ctx.option("adj_y", False))
    rows, inner_a = a.shape[-2:][::-1] if adj_x else a.shape[-2:]
    inner_b, cols = b.shape[-2:][::-1] if adj_y else b.shape[-2:]
    if inner_a != inner_b:
        raise ctx.shape_error(
            f"lhs {list(a.shape)} (adj_x={adj_x}) and rhs {list(b.shape)} (adj_y={adj_y}) "
            f"have different inner dimensions ({inner_a} vs {inner_b})"
        )
    try:
        batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    except ValueError:
        raise ctx.shape_error(
            f"batch dimensions of lhs {list(a.shape)} and rhs {list(b.shape)} do not broadcast"
        ) from None
    return (OutputSpec(batch + (rows, cols), a.dtype),), BatchMatMulRecord(adj_x, adj_y)


def eval(rec: BatchMatMulRecord, inputs, outputs) -> None:
    a, b = inputs
    if rec.adj_x:
        a = a.swapaxes(-1, -2)
    if rec.adj_y:
        b = b.swapaxes(-1, -2)
    np.matmul(a, b, out=outputs[0])


def version(sig: OpSignature) -> int:
    """op_version.cc, BATCH_MATMUL: int16 3; int8 2; float with int8 weights (hybrid) and
    asymmetric_quantize_inputs 4."""
    if sig.input(0).type == T.INT16:
        return 3
    if sig.input(0).type == T.INT8:
        return 2
    if sig.types() == (T.FLOAT32, T.INT8, T.FLOAT32) and \
            sig.option("asymmetric_quantize_inputs", False):
        return 4
    return 1


OPS = (
    # Not per sample: [N, N] @ [N, C] leads with N and mixes every sample.
    OpDef("BATCH_MATMUL", float=Kernel(prepare, eval), version=version),
)
