"""FULLY_CONNECTED, float32: out = in[-1, I] @ W[O, I]^T + bias, then the fused clamp.

Matches tensorflow/lite/kernels/fully_connected.cc (Prepare / EvalFloat) and
reference_ops::FullyConnected (tensorflow/lite/kernels/internal/reference/fully_connected.h):

* weights are [num_units O, input_depth I] (DEFAULT weights_format only);
* the input is flattened to [batch = NumElements(input) / I, I];
* output shape is [batch, O], or with keep_num_dims the input shape with its last
  dimension replaced by O;
* bias is optional (input 2 may be omitted with -1).

Constant weights are transposed once in prepare() to a contiguous [I, O] matrix, so
invoke() is a single BLAS matmul into the output view.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import OpContext, OutputSpec, num_elements
from .fused import Clamp, activation_clamp, apply_clamp

DEFAULT_WEIGHTS_FORMAT = 0


@dataclass(frozen=True)
class FullyConnectedRecord:
    rows: int  # batch: number of input rows
    in_features: int  # I
    out_features: int  # O
    weights_t: np.ndarray | None  # (I, O) contiguous when the weights are constant
    clamp: Clamp


def prepare(ctx: OpContext):
    ctx.check_arity(2, 3)
    x, w = ctx.input(0), ctx.input(1)
    bias = ctx.optional_input(2)
    ctx.require_dtype(x, (np.float32,), "input")
    ctx.require_dtype(w, (np.float32,), "weights")
    if int(ctx.option("weights_format", DEFAULT_WEIGHTS_FORMAT)) != DEFAULT_WEIGHTS_FORMAT:
        raise ctx.unsupported("only the DEFAULT weights_format is supported")
    if w.rank != 2:
        raise ctx.shape_error(f"weights shape {list(w.shape)} must be 2-D [units, input_depth]")
    units, depth = w.shape
    total = num_elements(x.shape)
    if depth < 1 or total % depth != 0:
        raise ctx.shape_error(
            f"input shape {list(x.shape)} ({total} elements) cannot be flattened into rows "
            f"of the weights' input depth {depth}"
        )
    rows = total // depth
    if bias is not None:
        ctx.require_dtype(bias, (np.float32,), "bias")
        if num_elements(bias.shape) != units:
            raise ctx.shape_error(f"bias shape {list(bias.shape)} must hold {units} values")

    if ctx.option("keep_num_dims", False):
        if x.rank == 0 or x.shape[-1] != depth:
            raise ctx.shape_error(
                f"keep_num_dims needs the input's last dimension ({list(x.shape)}) to equal "
                f"the weights' input depth {depth}"
            )
        out_shape = tuple(x.shape[:-1]) + (units,)
    else:
        out_shape = (rows, units)

    weights_t = None
    if w.is_constant:
        weights_t = np.ascontiguousarray(w.data.astype(np.float32).T)
    record = FullyConnectedRecord(rows, depth, units, weights_t,
                                  activation_clamp(ctx, np.float32))
    return (OutputSpec(out_shape, np.dtype(np.float32)),), record


def eval(rec: FullyConnectedRecord, inputs, outputs) -> None:
    x2d = inputs[0].reshape(rec.rows, rec.in_features)
    out2d = outputs[0].reshape(rec.rows, rec.out_features)
    weights_t = rec.weights_t if rec.weights_t is not None else inputs[1].T
    np.matmul(x2d, weights_t, out=out2d)
    bias = inputs[2] if len(inputs) > 2 else None
    if bias is not None:
        np.add(out2d, bias.reshape(rec.out_features), out=out2d)
    apply_clamp(rec.clamp, out2d)
