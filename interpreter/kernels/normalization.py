"""L2_NORMALIZATION over the last dimension (float32).

Matches tensorflow/lite/kernels/l2norm.cc and reference_ops::L2Normalization
(tensorflow/lite/kernels/internal/reference/l2normalization.h), per row:

    norm = max(sqrt(sum_c x[c]^2), epsilon)      epsilon = 1e-6 (hard-coded in l2norm.cc)
    out[c] = x[c] / norm

So an all-zero row gives zeros and a row with norm below 1e-6 is divided by 1e-6 rather
than normalized to length 1 -- unlike tf.math.l2_normalize, which uses
x * rsqrt(max(sum x^2, epsilon)) with its own epsilon (1e-12 by default).
The fused activation (L2NormOptions) must be NONE in TFLite; RELU / RELU6 /
RELU_N1_TO_1 are applied here like elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Kernel, OpContext, OutputSpec, num_elements, scratch
from .fused import Clamp, activation_clamp, apply_clamp
from .opdef import OpDef
from .versions import OpSignature, T

EPSILON = np.float32(1e-6)


@dataclass(frozen=True)
class L2NormRecord:
    rows: int
    depth: int
    norm: np.ndarray  # (rows, 1) scratch
    clamp: Clamp


def prepare(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, (np.float32,), "input")
    if x.rank < 1:
        raise ctx.shape_error("input must have at least one dimension")
    rows, depth = num_elements(x.shape[:-1]), x.shape[-1]
    record = L2NormRecord(rows, depth, scratch(ctx, (rows, 1), np.float32),
                          activation_clamp(ctx, np.float32))
    return (OutputSpec(x.shape, x.dtype),), record


def eval(rec: L2NormRecord, inputs, outputs) -> None:
    x = inputs[0].reshape(rec.rows, rec.depth)
    out = outputs[0].reshape(rec.rows, rec.depth)
    np.multiply(x, x, out=out)
    np.sum(out, axis=1, keepdims=True, out=rec.norm)
    np.sqrt(rec.norm, out=rec.norm)
    np.maximum(rec.norm, EPSILON, out=rec.norm)
    np.divide(x, rec.norm, out=out)
    apply_clamp(rec.clamp, out)


def version(sig: OpSignature) -> int:
    """op_version.cc, L2_NORMALIZATION: 2 for an int8 output."""
    return 2 if sig.output(0).type == T.INT8 else 1


OPS = (
    # fused_activation stays False: LiteRT's l2norm.cc refuses anything but NONE, so the
    # converter must not fuse into it (the kernel above still applies one it finds).
    OpDef("L2_NORMALIZATION", float=Kernel(prepare, eval), per_sample=True, last_axis=True,
          version=version),
)
