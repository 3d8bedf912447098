"""L2_NORMALIZATION and LOCAL_RESPONSE_NORMALIZATION over the last dimension (float32).

L2_NORMALIZATION matches tensorflow/lite/kernels/l2norm.cc and reference_ops::L2Normalization
(tensorflow/lite/kernels/internal/reference/l2normalization.h), per row:

    norm = max(sqrt(sum_c x[c]^2), epsilon)      epsilon = 1e-6 (hard-coded in l2norm.cc)
    out[c] = x[c] / norm

So an all-zero row gives zeros and a row with norm below 1e-6 is divided by 1e-6 rather
than normalized to length 1 -- unlike tf.math.l2_normalize, which uses
x * rsqrt(max(sum x^2, epsilon)) with its own epsilon (1e-12 by default).
The fused activation (L2NormOptions) must be NONE in TFLite; RELU / RELU6 /
RELU_N1_TO_1 are applied here like elsewhere.

LOCAL_RESPONSE_NORMALIZATION (local_response_norm.cc, 4-D float32 only; options radius r,
bias, alpha, beta) reproduces reference_ops::LocalResponseNormalization as LiteRT 2.3.0's
build computes it (read from its machine code: LocalResponseNormalizationParams holds the
three reals as doubles), per row and channel c:

    accum = sum of x[i]^2 over the window, in float32, i ascending
    out[c] = x[c] * float(pow(double(accum) * alpha + bias, -beta))

The window is [c - r, c + r] (clipped to the row) as in TensorFlow's LRN and LiteRT's default
(optimized) kernel; LiteRT's reference kernel stops one channel early, [c - r, c + r), so
with kernels="reference" the window is that one (``_window_span``, the one difference). The
optimized kernel's own arithmetic (a running sum, Eigen's pow) is not reproduced: against it
the results agree to float rounding, against the reference bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Kernel, OpContext, OutputSpec, num_elements, scratch, temporary
from .fused import Clamp, activation_clamp, apply_clamp
from .opdef import OpDef

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


# --------------------------------------------------------------------------- LRN


@dataclass(frozen=True)
class LrnRecord:
    radius: int  # r, at most the depth (a wider window only adds zeros)
    span: int  # channels summed per output: 2r + 1, or 2r (LiteRT's reference)
    alpha: np.float64
    bias: np.float64
    neg_beta: np.float64
    padded: np.ndarray  # (rows, depth + 2r) float32: the squares, r zeros either side
    accum: np.ndarray  # (rows, depth) float32
    scale: np.ndarray  # (rows, depth) float64


def _window_span(ctx: OpContext, radius: int) -> int:
    """Channels summed per output channel: TensorFlow's [c - r, c + r], or the reference
    kernel's [c - r, c + r) (reference_ops.h: end_input_c = min(depth, c + range))."""
    return 2 * radius if ctx.quant.reference else 2 * radius + 1


def prepare_lrn(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, (np.float32,), "input")
    if x.rank != 4:
        raise ctx.shape_error(f"input must be 4-D, has shape {list(x.shape)}")
    radius = int(ctx.option("radius", 0))
    if radius < 0:
        raise ctx.shape_error(f"radius must be >= 0, got {radius}")
    rows, depth = num_elements(x.shape[:-1]), x.shape[-1]
    radius = min(radius, depth)
    # The option fields are float32; the kernel widens them to double.
    real = {k: np.float64(np.float32(ctx.option(k, 0.0))) for k in ("bias", "alpha", "beta")}
    record = LrnRecord(radius, _window_span(ctx, radius), real["alpha"], real["bias"],
                       -real["beta"], temporary(ctx, (rows, depth + 2 * radius), np.float32),
                       temporary(ctx, (rows, depth), np.float32),
                       temporary(ctx, (rows, depth), np.float64))
    return (OutputSpec(x.shape, x.dtype),), record


def eval_lrn(rec: LrnRecord, inputs, outputs) -> None:
    r, padded, accum = rec.radius, rec.padded, rec.accum
    depth = accum.shape[1]
    x = inputs[0].reshape(accum.shape)
    padded[:, :r] = 0
    padded[:, r + depth:] = 0
    # inf and NaN inputs give the IEEE results, as in LiteRT, without warnings.
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        np.multiply(x, x, out=padded[:, r:r + depth])
        # Channel c sums padded[c + k] for k ascending: the reference's order (adding the
        # zeros outside the row changes no bit).
        accum.fill(0)
        for k in range(rec.span):
            np.add(accum, padded[:, k:k + depth], out=accum)
        np.multiply(accum, rec.alpha, out=rec.scale)
        np.add(rec.scale, rec.bias, out=rec.scale)
        np.power(rec.scale, rec.neg_beta, out=rec.scale)
        np.copyto(accum, rec.scale, casting="same_kind")  # the multiplier, as float32
        np.multiply(x, accum, out=outputs[0].reshape(accum.shape))


OPS = (
    OpDef("LOCAL_RESPONSE_NORMALIZATION", float=Kernel(prepare_lrn, eval_lrn), per_sample=True),
    # fused_activation stays False: LiteRT's l2norm.cc refuses anything but NONE, so the
    # converter must not fuse into it (the kernel above still applies one it finds).
    OpDef("L2_NORMALIZATION", float=Kernel(prepare, eval), per_sample=True),
)
