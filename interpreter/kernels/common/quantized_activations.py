"""The tables of quantized GELU and ELU (their records are in activations.py).

GELU (gelu.cc; int8 / uint8, and int16 through LUTPopulateInt16): LUTPopulate
(lut.float_table) of the float32 function

    exact:        0.5f * x * erfcf(x * -M_SQRT1_2)
    approximate:  0.5f * x * (1 + tanhf(sqrt(2 / pi) * (x + 0.044715f * x * x * x)))

in both kernel sets (XNNPACK does not take quantized GELU).

ELU (int8 only): LiteRT's reference resolver has no ELU, so kernels="reference" runs
TFLite's builtin kernel (activations.cc EluPrepare): LUTPopulate of
``x < 0 ? expf(x) - 1 : x``. kernels="default": the XNNPACK delegate takes it, with its
table of ``x < 0 ? expm1f(x) : x`` quantized half to even (lut.xnn_table).
"""

from __future__ import annotations

import numpy as np

from ..base import OpContext
from .lut import cfloat, float_table, tflite_table, xnn_table
from .requantize import QParams

SQRT_2_OVER_PI = np.float32(np.sqrt(2.0 / np.pi))  # as activations.py's float GELU


def gelu_fn(approximate: bool):
    if approximate:
        tanhf = cfloat("tanhf")
        return lambda x: np.float32(0.5) * x * (np.float32(1.0) + tanhf(
            SQRT_2_OVER_PI * (x + np.float32(0.044715) * x * x * x)))
    erfcf = cfloat("erfcf")
    return lambda x: np.float32(0.5) * x * erfcf(x * np.float32(-np.sqrt(0.5)))


def gelu_table(ctx: OpContext, dtype, xq: QParams, out: QParams) -> np.ndarray:
    return float_table(dtype, xq, out, gelu_fn(bool(ctx.option("approximate", False))))


def elu_table(ctx: OpContext, dtype, xq: QParams, out: QParams) -> np.ndarray:
    if ctx.quant.reference:
        expf = cfloat("expf")
        return tflite_table(dtype, xq, out, lambda x: np.where(
            x < 0, expf(np.minimum(x, 0)) - np.float32(1.0), x))
    expm1f = cfloat("expm1f")
    return xnn_table(dtype, xq, out, lambda x: np.where(x < 0, expm1f(np.minimum(x, 0)), x))
