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

Quantized L2_NORMALIZATION (l2norm.cc: both kernel sets run the same integer code; the
output is fixed at scale 1/128, zero point 0 for int8 and 128 for uint8), per row of
d = q - z_in:

    (m, shift) = GetInvSqrtQuantizedMultiplierExp(sum d^2, -1)      1/sqrt(sum) ~ m 2^(shift-31)
    int8  (reference_integer_ops::L2Normalization):  out = clamp(MBQM(d, m, shift + 7))
    uint8 (reference_ops::L2Normalization):
          out = clamp(128 + MBQMSmallerThanOneExp(128 d, m, shift))

LOCAL_RESPONSE_NORMALIZATION (local_response_norm.cc, 4-D float32 only; options radius r,
bias, alpha, beta) has two kernels in LiteRT, which differ in the window and the arithmetic;
each kernel set reproduces its own (a wider radius than the row only adds zeros, so r is
clipped to the depth first):

* kernels="reference": reference_ops::LocalResponseNormalization as LiteRT 2.3.0's build
  computes it (read from its machine code: LocalResponseNormalizationParams holds the reals
  as doubles). Its window stops one channel early, [c - r, c + r):

      accum = sum of x[i]^2 over the window, float32, i ascending
      out[c] = x[c] * float(pow(double(accum) * alpha + bias, -beta))

* kernels="default": optimized_ops::LocalResponseNormalization, TensorFlow's window
  [c - r, c + r], as a running sum over the channels of alpha * x^2 (float32):

      s += sq[c + r];  scale[c] = bias + s;  s -= sq[c - r]
      out[c] = x[c] * (1 / scale) (beta 1), x[c] * (1 / sqrt(scale)) (beta 0.5),
               else x[c] * pow(scale, -beta)

  bit for bit for beta 1 and 0.5; for other betas Eigen's vectorized pow is approximated
  by the correctly rounded one (the two differ in the last bit now and then).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .. import quant_math as qm

from .base import (Chosen, Kernel, OpContext, OutputSpec, num_elements, run_chosen, scratch,
                   temporary)
from .common.fused import Clamp, activation_clamp, apply_clamp
from .common.fixed_point16 import inv_sqrt_multiplier
from .opdef import TANH_OUTPUT, OpDef, QuantRule
from .common.lut import unary_quantized
from .common.requantize import QUANTIZED
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


@dataclass(frozen=True)
class QuantizedL2NormRecord:
    rows: int
    depth: int
    zero_point: int
    uint8: bool  # reference_ops' uint8 form, else reference_integer_ops' int8 one
    rounding: qm.Rounding


@functools.lru_cache(maxsize=4096)
def inv_sqrt(total: int) -> tuple[int, int]:
    """GetInvSqrtQuantizedMultiplierExp(total, -1) with the mantissa as int32, cached."""
    m, shift = inv_sqrt_multiplier(total)
    return int(qm.wrap_int32(m)), shift


def prepare_quantized(ctx: OpContext):
    x, xq, oq = unary_quantized(ctx, QUANTIZED)
    if x.rank < 1:
        raise ctx.shape_error("input must have at least one dimension")
    if int(ctx.option("fused_activation_function", 0)) != 0:
        raise ctx.unsupported("a fused activation on a quantized L2_NORMALIZATION (LiteRT "
                              "refuses it)")
    expected = TANH_OUTPUT[x.dtype.type]
    if (np.float32(oq.scale), oq.zero_point) != (np.float32(expected[0]), expected[1]):
        raise ctx.unsupported(f"output scale {oq.scale} and zero point {oq.zero_point}; "
                              f"LiteRT's quantized L2_NORMALIZATION needs 1/128 and {expected[1]}")
    rows, depth = num_elements(x.shape[:-1]), x.shape[-1]
    record = QuantizedL2NormRecord(rows, depth, xq.zero_point, x.dtype == np.uint8,
                                   ctx.quant.rounding)
    return (OutputSpec(x.shape, x.dtype),), record


def eval_quantized(rec: QuantizedL2NormRecord, inputs, outputs) -> None:
    d = inputs[0].reshape(rec.rows, rec.depth).astype(np.int64) - rec.zero_point
    totals = qm.wrap_int32((d * d).sum(axis=1))  # the int32 accumulator wraps past 2^31
    unique, where = np.unique(totals, return_inverse=True)
    pairs = np.array([inv_sqrt(int(t)) for t in unique], np.int64).reshape(-1, 2)
    m, shift = pairs[where, 0][:, None], pairs[where, 1][:, None]
    if rec.uint8:
        v = qm.multiply_by_quantized_multiplier(128 * d, m, shift, rec.rounding) + 128
    else:
        v = qm.multiply_by_quantized_multiplier(d, m, shift + 7, rec.rounding)
    info = np.iinfo(outputs[0].dtype)
    np.copyto(outputs[0].reshape(rec.rows, rec.depth), np.clip(v, info.min, info.max),
              casting="unsafe")


def version(sig: OpSignature) -> int:
    """op_version.cc, L2_NORMALIZATION: 2 for an int8 output."""
    return 2 if sig.output(0).type == T.INT8 else 1


# --------------------------------------------------------------------------- LRN


@dataclass(frozen=True)
class LrnReferenceRecord:
    radius: int  # r, at most the depth
    alpha: np.float64
    bias: np.float64
    neg_beta: np.float64
    padded: np.ndarray  # (rows, depth + 2r) float32: the squares, r zeros either side
    accum: np.ndarray  # (rows, depth) float32
    scale: np.ndarray  # (rows, depth) float64


@dataclass(frozen=True)
class LrnOptimizedRecord:
    radius: int
    alpha: np.float32
    bias: np.float32
    beta: np.float32
    padded: np.ndarray  # (depth + 2r, rows) float32: alpha * x^2 by channel, r zeros each side
    running: np.ndarray  # (rows,) float32
    scale: np.ndarray  # (depth, rows) float32
    wide: np.ndarray | None  # (depth, rows) float64 for the general pow, else None


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
    r = min(radius, depth)
    bias, alpha, beta = (np.float32(ctx.option(k, 0.0)) for k in ("bias", "alpha", "beta"))
    specs = (OutputSpec(x.shape, x.dtype),)
    if ctx.quant.reference:
        return specs, Chosen(eval_lrn_reference, LrnReferenceRecord(
            r, np.float64(alpha), np.float64(bias), -np.float64(beta),
            temporary(ctx, (rows, depth + 2 * r), np.float32),
            temporary(ctx, (rows, depth), np.float32),
            temporary(ctx, (rows, depth), np.float64)))
    wide = None if beta in (1.0, 0.5) else temporary(ctx, (depth, rows), np.float64)
    return specs, Chosen(eval_lrn_optimized, LrnOptimizedRecord(
        r, alpha, bias, beta, temporary(ctx, (depth + 2 * r, rows), np.float32),
        temporary(ctx, (rows,), np.float32), temporary(ctx, (depth, rows), np.float32), wide))


def eval_lrn_reference(rec: LrnReferenceRecord, inputs, outputs) -> None:
    r, padded, accum = rec.radius, rec.padded, rec.accum
    depth = accum.shape[1]
    x = inputs[0].reshape(accum.shape)
    padded[:, :r] = 0
    padded[:, r + depth:] = 0
    # inf and NaN inputs give the IEEE results, as in LiteRT, without warnings.
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        np.multiply(x, x, out=padded[:, r:r + depth])
        # Channel c sums padded[c + k], k ascending over the window [c - r, c + r): the
        # reference's order (adding the zeros outside the row changes no bit).
        accum.fill(0)
        for k in range(2 * r):
            np.add(accum, padded[:, k:k + depth], out=accum)
        np.multiply(accum, rec.alpha, out=rec.scale)
        np.add(rec.scale, rec.bias, out=rec.scale)
        np.power(rec.scale, rec.neg_beta, out=rec.scale)
        np.copyto(accum, rec.scale, casting="same_kind")  # the multiplier, as float32
        np.multiply(x, accum, out=outputs[0].reshape(accum.shape))


def eval_lrn_optimized(rec: LrnOptimizedRecord, inputs, outputs) -> None:
    r, padded, running, scale = rec.radius, rec.padded, rec.running, rec.scale
    depth = scale.shape[0]
    x = inputs[0].reshape(scale.shape[::-1])
    padded[:r] = 0
    padded[r + depth:] = 0
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        squares = padded[r:r + depth]
        np.multiply(x.T, x.T, out=squares)
        np.multiply(squares, rec.alpha, out=squares)
        running.fill(0)
        for k in range(2 * r):
            np.add(running, padded[k], out=running)
        for c in range(depth):  # the window slides one channel: add its new end, drop its start
            np.add(running, padded[c + 2 * r], out=running)
            np.add(rec.bias, running, out=scale[c])
            np.subtract(running, padded[c], out=running)
        if rec.beta == 1.0:
            np.divide(1, scale, out=scale)
        elif rec.beta == 0.5:
            np.sqrt(scale, out=scale)
            np.divide(1, scale, out=scale)
        else:
            np.power(scale, -np.float64(rec.beta), out=rec.wide)
            np.copyto(scale, rec.wide, casting="same_kind")
        np.multiply(x, scale.T, out=outputs[0].reshape(x.shape))


OPS = (
    OpDef("LOCAL_RESPONSE_NORMALIZATION", float=Kernel(prepare_lrn, run_chosen),
          per_sample=True),
    # fused_activation stays False: LiteRT's l2norm.cc refuses anything but NONE, so the
    # converter must not fuse into it (the kernel above still applies one it finds).
    OpDef("L2_NORMALIZATION", float=Kernel(prepare, eval),
          integer=Kernel(prepare_quantized, eval_quantized), quant=QuantRule.FIXED_OUTPUT,
          fixed_output={t: TANH_OUTPUT[t] for t in (np.int8, np.uint8)},  # 1/128, as TANH
          per_sample=True, last_axis=True, version=version),
)
