"""SOFTMAX over the last dimension, float32, with beta; LOG_SOFTMAX (at the end).

Matches tensorflow/lite/kernels/activations.cc (SoftmaxPrepare / SoftmaxFloat) and
reference_ops::Softmax (tensorflow/lite/kernels/internal/reference/softmax.h); per row:

    max = max_c x[c]                         (subtracted for numerical stability)
    e[c] = exp((x[c] - max) * beta)
    out[c] = e[c] / sum_c e[c]

beta comes from SoftmaxOptions; like TFLite's ParseSoftmax, an absent options table
leaves beta at its schema default 0.0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ModelFormatError
from .base import OpContext, OutputSpec, num_elements, scratch


@dataclass(frozen=True)
class SoftmaxRecord:
    rows: int
    depth: int  # size of the last dimension
    beta: np.float32
    row_max: np.ndarray  # (rows, 1) scratch
    row_sum: np.ndarray  # (rows, 1) scratch


def softmax_beta(ctx: OpContext) -> np.float32:
    """SoftmaxOptions.beta, refused unless finite: NaN would make every output NaN, and
    an infinite beta gives inf - inf = NaN for the row maximum (TFLite does not check)."""
    beta = np.float32(ctx.option("beta", 0.0))
    if not np.isfinite(beta):
        raise ModelFormatError(f"{ctx.describe()}: beta is {float(beta)}; SOFTMAX needs a "
                               "finite beta")
    return beta


def prepare(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, (np.float32,), "input")
    if x.rank < 1:
        raise ctx.shape_error("input must have at least one dimension")
    depth = x.shape[-1]
    if depth == 0:
        raise ctx.shape_error(f"cannot take a softmax over an empty last dimension {list(x.shape)}")
    rows = num_elements(x.shape[:-1])
    record = SoftmaxRecord(rows, depth, softmax_beta(ctx),
                           scratch(ctx, (rows, 1), np.float32), scratch(ctx, (rows, 1), np.float32))
    return (OutputSpec(x.shape, x.dtype),), record


def eval(rec: SoftmaxRecord, inputs, outputs) -> None:
    x = inputs[0].reshape(rec.rows, rec.depth)
    out = outputs[0].reshape(rec.rows, rec.depth)
    np.maximum.reduce(x, axis=1, keepdims=True, out=rec.row_max)  # np.max, no wrapper
    np.subtract(x, rec.row_max, out=out)
    np.multiply(out, rec.beta, out=out)
    np.exp(out, out=out)
    np.add.reduce(out, axis=1, keepdims=True, out=rec.row_sum)  # np.sum, no wrapper
    np.divide(out, rec.row_sum, out=out)


# --------------------------------------------------------------------------- LOG_SOFTMAX
#
# tensorflow/lite/kernels/internal/reference/log_softmax.h (float), per row:
#     max = max_c x[c];  log_sum = log(sum_c exp(x[c] - max));  out[c] = x[c] - max - log_sum
# (LogSoftmaxOptions is empty: no beta.)


@dataclass(frozen=True)
class LogSoftmaxRecord:
    rows: int
    depth: int
    row_max: np.ndarray  # (rows, 1) scratch
    row_sum: np.ndarray  # (rows, 1) scratch
    work: np.ndarray  # (rows, depth) scratch for the exponentials


def prepare_log_softmax(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, (np.float32,), "input")
    if x.rank < 1 or x.shape[-1] == 0:
        raise ctx.shape_error(f"needs a non-empty last dimension, input is {list(x.shape)}")
    rows, depth = num_elements(x.shape[:-1]), x.shape[-1]
    record = LogSoftmaxRecord(rows, depth, scratch(ctx, (rows, 1), np.float32),
                              scratch(ctx, (rows, 1), np.float32),
                              scratch(ctx, (rows, depth), np.float32))
    return (OutputSpec(x.shape, x.dtype),), record


def eval_log_softmax(rec: LogSoftmaxRecord, inputs, outputs) -> None:
    x = inputs[0].reshape(rec.rows, rec.depth)
    out = outputs[0].reshape(rec.rows, rec.depth)
    np.max(x, axis=1, keepdims=True, out=rec.row_max)
    np.subtract(x, rec.row_max, out=out)
    np.exp(out, out=rec.work)
    np.sum(rec.work, axis=1, keepdims=True, out=rec.row_sum)
    np.log(rec.row_sum, out=rec.row_sum)
    np.subtract(out, rec.row_sum, out=out)
