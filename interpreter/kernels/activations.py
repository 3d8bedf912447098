"""RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1, LOGISTIC, TANH, LEAKY_RELU, ELU, HARD_SWISH,
GELU (float32). PRELU, which broadcasts a second input, lives in binary.py.

Matches tensorflow/lite/kernels/activations.cc with the reference kernels:

* RELU / RELU6 / RELU_N1_TO_1 clamp to [0, inf) / [0, 6] / [-1, 1]; NaN stays NaN
  (``val < lower ? lower : val`` is false for NaN, like np.maximum / np.clip).
* TANH is std::tanh.
* LOGISTIC is reference_ops::Logistic (tensorflow/lite/kernels/internal/reference/
  logistic.h), which uses two cut-offs taken from Eigen's scalar_logistic_op:

      x > 16.619047164916992188  ->  1.0   (1 / (1 + e^-x) already rounds to 1 in float32)
      x < -9                     ->  e^x   (1 / (1 + e^-x) = e^x / (1 + e^x) ~ e^x there)
      otherwise                  ->  1 / (1 + e^-x)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Kernel, OpContext, OutputSpec, scratch
from .fused import Clamp, apply_clamp

LOGISTIC_UPPER = np.float32(16.619047164916992188)
LOGISTIC_LOWER = np.float32(-9.0)


def _check_unary(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, (np.float32,), "input")
    return (OutputSpec(x.shape, x.dtype),)


# --------------------------------------------------------------------------- ReLU family


@dataclass(frozen=True)
class ClampRecord:
    clamp: Clamp


def _relu_prepare(low: float, high: float | None):
    def prepare(ctx: OpContext):
        return _check_unary(ctx), ClampRecord((np.float32(low),
                                               None if high is None else np.float32(high)))

    return prepare


def eval_clamp(rec: ClampRecord, inputs, outputs) -> None:
    np.copyto(outputs[0], inputs[0])
    apply_clamp(rec.clamp, outputs[0])


RELU = Kernel(_relu_prepare(0.0, None), eval_clamp)
RELU6 = Kernel(_relu_prepare(0.0, 6.0), eval_clamp)
RELU_N1_TO_1 = Kernel(_relu_prepare(-1.0, 1.0), eval_clamp)


# --------------------------------------------------------------------------- TANH


def prepare_tanh(ctx: OpContext):
    return _check_unary(ctx), None


def eval_tanh(rec, inputs, outputs) -> None:
    np.tanh(inputs[0], out=outputs[0])


TANH = Kernel(prepare_tanh, eval_tanh)


# --------------------------------------------------------------------------- LOGISTIC


@dataclass(frozen=True)
class LogisticRecord:
    mask: np.ndarray  # bool scratch with the tensor's shape


def prepare_logistic(ctx: OpContext):
    specs = _check_unary(ctx)
    return specs, LogisticRecord(scratch(ctx, specs[0].shape, np.bool_))


def eval_logistic(rec: LogisticRecord, inputs, outputs) -> None:
    x, out, mask = inputs[0], outputs[0], rec.mask
    # Middle branch on clamped inputs (so exp never overflows): 1 / (1 + e^-x).
    np.clip(x, LOGISTIC_LOWER, LOGISTIC_UPPER, out=out)
    np.negative(out, out=out)
    np.exp(out, out=out)
    np.add(out, np.float32(1.0), out=out)
    np.reciprocal(out, out=out)
    # Upper branch: exactly 1.
    np.greater(x, LOGISTIC_UPPER, out=mask)
    np.copyto(out, np.float32(1.0), where=mask)
    # Lower branch: e^x.
    np.less(x, LOGISTIC_LOWER, out=mask)
    np.exp(x, out=out, where=mask)


LOGISTIC = Kernel(prepare_logistic, eval_logistic)


# --------------------------------------------------------------------------- LEAKY_RELU, ELU
#
# tensorflow/lite/kernels/internal/reference/leaky_relu.h: ``x > 0 ? x : x * alpha``
# (LeakyReluOptions.alpha). reference/elu.h: ``x < 0 ? expm1(x) : x``.


@dataclass(frozen=True)
class MaskedRecord:
    mask: np.ndarray  # bool scratch with the tensor's shape
    alpha: np.float32 = np.float32(0.0)


def prepare_leaky_relu(ctx: OpContext):
    specs = _check_unary(ctx)
    alpha = np.float32(ctx.option("alpha", 0.0))
    return specs, MaskedRecord(scratch(ctx, specs[0].shape, np.bool_), alpha)


def eval_leaky_relu(rec: MaskedRecord, inputs, outputs) -> None:
    x, out = inputs[0], outputs[0]
    np.multiply(x, rec.alpha, out=out)
    np.greater(x, 0, out=rec.mask)
    np.copyto(out, x, where=rec.mask)


def prepare_elu(ctx: OpContext):
    specs = _check_unary(ctx)
    return specs, MaskedRecord(scratch(ctx, specs[0].shape, np.bool_))


def eval_elu(rec: MaskedRecord, inputs, outputs) -> None:
    x, out = inputs[0], outputs[0]
    np.copyto(out, x)
    np.less(x, 0, out=rec.mask)
    np.expm1(x, out=out, where=rec.mask)


LEAKY_RELU = Kernel(prepare_leaky_relu, eval_leaky_relu)
ELU = Kernel(prepare_elu, eval_elu)


# --------------------------------------------------------------------------- HARD_SWISH
#
# tensorflow/lite/kernels/internal/reference/hard_swish.h (float):
#     x * std::min(6, std::max(0, x + 3)) / 6
# evaluated left to right in float32: (x * relu6(x + 3)) / 6.


def prepare_hard_swish(ctx: OpContext):
    return _check_unary(ctx), None


def eval_hard_swish(rec, inputs, outputs) -> None:
    x, out = inputs[0], outputs[0]
    np.add(x, np.float32(3.0), out=out)
    np.clip(out, np.float32(0.0), np.float32(6.0), out=out)
    np.multiply(x, out, out=out)
    np.divide(out, np.float32(6.0), out=out)


HARD_SWISH = Kernel(prepare_hard_swish, eval_hard_swish)


# --------------------------------------------------------------------------- GELU
#
# tensorflow/lite/kernels/internal/reference/gelu.h (GeluOptions.approximate):
#     exact:        0.5 * x * erfc(-x / sqrt(2))     (erfc avoids cancellation for x << 0)
#     approximate:  0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
# numpy has no erfc; _erfc uses the Chebyshev-fitted formula of Press et al., Numerical
# Recipes 2nd ed. section 6.2 (erfcc), whose fractional error is below 1.2e-7 for every x
# -- about one float32 ulp -- evaluated in float64.

SQRT_2_OVER_PI = np.float32(np.sqrt(2.0 / np.pi))  # M_2_SQRTPI * M_SQRT1_2
_ERFC_COEFFS = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
                -1.13520398, 1.48851587, -0.82215223, 0.17087277)


def _erfc(x: np.ndarray) -> np.ndarray:
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = np.full_like(t, _ERFC_COEFFS[-1])
    for c in _ERFC_COEFFS[-2::-1]:  # Horner, innermost coefficient first
        poly = poly * t + c
    ans = t * np.exp(-z * z + poly)
    return np.where(x >= 0, ans, 2.0 - ans)


@dataclass(frozen=True)
class GeluRecord:
    approximate: bool


def prepare_gelu(ctx: OpContext):
    return _check_unary(ctx), GeluRecord(bool(ctx.option("approximate", False)))


def eval_gelu(rec: GeluRecord, inputs, outputs) -> None:
    x, out = inputs[0], outputs[0]
    if rec.approximate:
        np.multiply(x, x, out=out)
        np.multiply(out, x, out=out)
        np.multiply(out, np.float32(0.044715), out=out)
        np.add(out, x, out=out)
        np.multiply(out, SQRT_2_OVER_PI, out=out)
        np.tanh(out, out=out)
        np.add(out, np.float32(1.0), out=out)
        np.multiply(out, x, out=out)
        np.multiply(out, np.float32(0.5), out=out)
        return
    x64 = x.astype(np.float64)
    np.copyto(out, 0.5 * x64 * _erfc(x64 * -np.sqrt(0.5)), casting="same_kind")


GELU = Kernel(prepare_gelu, eval_gelu)
RELU_0_TO_1 = Kernel(_relu_prepare(0.0, 1.0), eval_clamp)
