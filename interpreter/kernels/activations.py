"""RELU, RELU6, RELU_N1_TO_1, LOGISTIC, TANH (float32).

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
