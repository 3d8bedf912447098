"""The arithmetic of LiteRT's hybrid (dynamic-range) recurrent kernels: float activations
quantized to int8 on the fly, one scale per batch row, multiplied by int8 weights with
an exact integer dot product, and scaled back to float32.

* ``quantize_rows_symmetric`` -- tensor_utils::SymmetricQuantizeFloats, per row:
  ``range = max|x|``, ``sf = range / 127``, ``q = clamp(round(x * (127 / range)), -127,
  127)`` in float32 (a row of zeros: q = 0, sf = 1);
* ``quantize_rows_asymmetric`` -- AsymmetricQuantizeFloats (asymmetric_quantize_inputs):
  the row's range widened to hold 0, ``sf = (max - min) / 255``, the zero point nudged
  from the nearer end, ``q = clamp(round(zp + x * (1 / sf)), -128, 127)``, in float32;
* ``accumulate_products`` -- MatrixBatchVectorMultiplyAccumulate with scaling factors:
  ``acc += float(dot(q, w) - row_sum(w) * zp) * (sf * s_w)``, each product and sum
  rounded to float32 as in the portable and SSE kernels (the int32 dot product is exact,
  so both kernel sets agree).

Rounding is TfLiteRound (half away from zero). The functions work on 2-D [rows, n]
float32 arrays; the quantized values are returned as float64 so that a BLAS product of
them with int8-valued float64 weights is an exact integer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import InputQuant, quantize_rows as quantize_matrix_rows

_F32 = np.float32


@dataclass(frozen=True)
class QuantizedRows:
    q: np.ndarray  # [rows, n] float64 holding int8 values
    scale: np.ndarray  # [rows] float32 scaling factors
    zero_point: np.ndarray | None  # [rows] int64 (asymmetric only)


def _rows(x: np.ndarray, kind) -> QuantizedRows:
    q = np.empty(x.shape, np.float64)
    zp = np.empty(x.shape[0], np.float64) if kind is InputQuant.ASYMMETRIC else None
    scale = quantize_matrix_rows(np.asarray(x, _F32), kind, q, zp)
    return QuantizedRows(q, scale.astype(_F32), None if zp is None else zp.astype(np.int64))


def quantize_rows_symmetric(x: np.ndarray) -> QuantizedRows:
    """SymmetricQuantizeFloats of every row of ``x`` [rows, n] (float32)."""
    return _rows(x, InputQuant.SYMMETRIC)


def quantize_rows_asymmetric(x: np.ndarray) -> QuantizedRows:
    """AsymmetricQuantizeFloats of every row of ``x`` [rows, n] (float32): the conv / FC
    kernels' arithmetic (hybrid.quantize_rows) -- the scale and zero point in double, q =
    round(x / s) + zp (rounded before the zero point is added). Inputs that come from
    int8 data (an embedding behind a DEQUANTIZE) land on ties of both roundings often;
    one wrong tie in one step of a recurrent layer changes every later step."""
    return _rows(x, InputQuant.ASYMMETRIC)


def quantize_rows(x: np.ndarray, asymmetric: bool) -> QuantizedRows:
    """BatchQuantizeFloats: one scale (and zero point) per row."""
    return quantize_rows_asymmetric(x) if asymmetric else quantize_rows_symmetric(x)


@dataclass(frozen=True)
class HybridWeights:
    """An int8 weight matrix laid out for ``rows @ w``: [n_in, n_out] float64 holding
    the int8 values, the float32 weight scale of every output column, and the row sums
    (sum over n_in of every output column) the asymmetric inputs subtract."""

    w: np.ndarray
    scale: np.ndarray  # [n_out] float32
    row_sums: np.ndarray  # [n_out] float64

    @staticmethod
    def of(matrices, scales) -> "HybridWeights":
        """From TFLite's [n_out, n_in] int8 matrices (one or several side by side, each
        with its per-tensor scale)."""
        w = np.concatenate([np.asarray(m, np.float64).T for m in matrices], axis=1)
        col_scale = np.concatenate([np.full(m.shape[0], s, _F32)
                                    for m, s in zip(matrices, scales)])
        return HybridWeights(np.ascontiguousarray(w), col_scale, w.sum(axis=0))


def accumulate_products(acc: np.ndarray, rows: QuantizedRows, weights: HybridWeights) -> None:
    """acc[rows, n_out] += float(dot - row_sum * zp) * (sf_row * s_w), in float32."""
    dot = rows.q @ weights.w  # exact: |int8 * int8| sums far below 2^53
    if rows.zero_point is not None:
        dot -= weights.row_sums * rows.zero_point[:, None].astype(np.float64)
    product_scale = (rows.scale[:, None] * weights.scale).astype(_F32)
    acc += dot.astype(_F32) * product_scale
