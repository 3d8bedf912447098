"""Hybrid (dynamic-range) kernels: float32 activations, int8 constant weights.

TensorFlow's ``Optimize.DEFAULT`` without a representative dataset stores the weights of
FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D and BATCH_MATMUL as int8 (per tensor or per
output channel, zero point 0) and keeps everything else float. LiteRT quantizes the
float input on the fly, accumulates in int32 and scales the accumulator back to float:

    x[r, :]  ~  s_r * (q[r, :] - o_r)            (one scale s_r, offset o_r per row r)
    acc[r, c] = sum_k (q[r, k] - o_r) * w[c, k]  (exact integers)
    out[r, c] = acc[r, c] * s_r * s_w[c] + bias[c], then the fused activation clamp

How each kernel set quantizes the input and rounds the float product (all measured
bit-exact against the installed LiteRT, see tests/interpreter/kernels/test_hybrid.py):

* REFERENCE (tensor_utils: portable_tensor_utils.cc, neon_tensor_utils.cc):
  - SYMMETRIC (SymmetricQuantizeFloats): r = max|x|; s = r / 127, q = round(x * (127 / r))
    half away from zero, clamped to +-127 (all float32); an all-zero row gets s = 1.
  - ASYMMETRIC (AsymmetricQuantizeFloats, ``asymmetric_quantize_inputs``): the range
    [min(x, 0), max(x, 0)] (its width in float32) over 255 steps in double, the zero
    point nudged like TFLite's, and q = round(x * (1 / s)) + o clamped to [-128, 127]
    -- o added after rounding, as the NEON kernel LiteRT's x86 build runs does (the
    portable one rounds o + x / s in float32, which differs where that sum rounds
    onto a .5: measured once in 600 random cases); an all-zero row gets q = 0, o = 0
    and s = 1 (which matters only where LiteRT reads another row's scale:
    batch_matmul.py).
  Then the product order (float32): SCALE_FIRST ``acc * (s_r * s_w[c]) + bias``
  (fully_connected.cc EvalHybrid via MatrixBatchVectorMultiplyAccumulate, conv.cc
  EvalHybrid / HybridConv, batch_matmul.cc EvalHybrid, the reference
  DepthwiseConvHybridPerChannel) or CHANNEL_FIRST ``(acc * s_w[c]) * s_r + bias``
  (reference_ops::HybridConvPerChannel).
* DEFAULT: the XNNPACK delegate takes hybrid FULLY_CONNECTED, CONV_2D and BATCH_MATMUL
  as its dynamically quantized ("qd8") operators: XNNPACK's own asymmetric parameters
  per row (xnn_f32_qd8_asymmetric_quantization_params: scale 255 / (max - min) with the
  range widened to hold 0, the zero point from the smaller error, q = rint(x * scale)
  + zp), and ``fma(acc * (1 / scale), s_w[c], bias)`` in float32 (its FMA microkernels
  on this x86-64 machine; emulated exactly in float64). DEPTHWISE_CONV_2D stays with the
  optimized builtin kernel, whose float order varies with shape and border: edgelite
  gives the reference outputs there (within LiteRT's own spread, conv.py).

The integer sums run on float64 BLAS: |q - o| <= 255 and |w| <= 127 keep every partial
sum exact for any depth LiteRT's int32 accumulator can hold.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from ... import quant_math as qm
from edgelite.names import quoted
from ..base import OpContext, TensorInfo
from ..common.fused import Clamp, activation_clamp, apply_clamp

F32 = np.float32
HYBRID = "dynamic-range (hybrid)"  # the name error messages give this kind of op


class InputQuant(enum.Enum):
    SYMMETRIC = "symmetric"    # tensor_utils::SymmetricQuantizeFloats
    ASYMMETRIC = "asymmetric"  # tensor_utils::AsymmetricQuantizeFloats
    XNNPACK = "xnnpack"        # XNNPACK's qd8 conversion


class Order(enum.Enum):
    SCALE_FIRST = "acc * (s_r * s_w) + bias"
    CHANNEL_FIRST = "(acc * s_w) * s_r + bias"
    FMA = "fma(acc * s_r, s_w, bias)"


def quantize_rows(x: np.ndarray, kind: InputQuant, out: np.ndarray,
                  offsets: np.ndarray | None = None) -> np.ndarray:
    """Quantize each row of the float32 matrix ``x`` (rows, K): writes q - o into
    ``out`` (float64, same shape) and returns the float32 row scales s_r. Given
    ``offsets`` (rows,), q itself goes to ``out`` and o to ``offsets``."""
    lo, hi = x.min(axis=1), x.max(axis=1)
    if kind is InputQuant.SYMMETRIC:
        if offsets is not None:
            offsets[...] = 0
        span = np.maximum(np.abs(lo), np.abs(hi))
        zero = span == 0
        span = np.where(zero, F32(1), span)
        inv = (F32(127) / span).astype(F32)
        np.clip(qm.round_half_away((x * inv[:, None]).astype(F32)), -127, 127, out=out)
        out[zero] = 0
        return np.where(zero, F32(1), (span / F32(127)).astype(F32))
    lo, hi = np.minimum(lo, F32(0)), np.maximum(hi, F32(0))
    flat = lo == hi  # an all-zero row
    if kind is InputQuant.ASYMMETRIC:
        # double scale = (rmax - rmin) / 255 (the difference taken in float32).
        scale = np.where(flat, 1.0, (hi - lo).astype(F32).astype(np.float64) / 255.0)
        lo64, hi64 = lo.astype(np.float64) / scale, hi.astype(np.float64) / scale
        from_min = 128.0 + np.abs(lo64) < 127.0 + np.abs(hi64)  # the smaller error
        zp = np.where(from_min, -128.0 - lo64, 127.0 - hi64)
        zp = np.where(zp < -128, -128.0, np.where(zp > 127, 127.0, qm.round_half_away(zp)))
        zp[flat] = 0
        s = scale.astype(F32)  # an all-zero row: q = 0, s = 1
        inv = np.where(flat, F32(0), (1.0 / s.astype(np.float64)).astype(F32))
        v = qm.round_half_away((x * inv[:, None]).astype(F32)) + zp[:, None]
        np.clip(v, -128, 127, out=out)
        _center(out, zp, offsets)
        return s
    # XNNPACK qd8: scale = 255 / (rmax - rmin); zero point from the smaller error.
    scale = np.where(flat, F32(1), (F32(255) / np.where(flat, F32(1), hi - lo)).astype(F32))
    lo_s, hi_s = (lo * scale).astype(F32), (hi * scale).astype(F32)
    by_min = ((F32(-128) + lo_s).astype(F32) + (F32(127) + hi_s).astype(F32)) > 0
    zp = np.rint(np.clip(np.where(by_min, F32(-128) - lo_s, F32(127) - hi_s), -128, 127))
    np.clip(np.rint((x * scale[:, None]).astype(F32)) + zp[:, None], -128, 127, out=out)
    _center(out, zp, offsets)
    return (F32(1) / scale).astype(F32)


def _center(q: np.ndarray, zp: np.ndarray, offsets: np.ndarray | None) -> None:
    if offsets is None:
        q -= zp[:, None]
    else:
        offsets[...] = zp


def fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """float32 fused multiply-add, correctly rounded: the product of two float32 values is
    exact in float64; the float64 sum is rounded once more to float32, which errs only
    when it lands exactly halfway between two float32 values -- then the sum's own
    rounding error (two-sum) says which way the exact value lies."""
    p = a.astype(np.float64) * b
    c = np.asarray(c, np.float64)
    s = p + c
    back = s - p
    err = (p - (s - back)) + (c - back)
    r = s.astype(F32)
    other = np.nextafter(r, np.where(s > r, np.inf, -np.inf).astype(F32))  # s between
    tie = (s != r) & (s == (r.astype(np.float64) + other) / 2) & (err != 0)
    if np.any(tie):
        up = np.maximum(r, other)
        down = np.minimum(r, other)
        r = np.where(tie, np.where(err > 0, up, down), r)
    return r


@dataclass(frozen=True)
class HybridOutput:
    """acc (float64 exact integers) and row scales -> float32 output (the stage after
    the integer product)."""

    order: Order
    channel_scale: np.ndarray  # (C,) float32: the weights' scale per output channel
    bias: np.ndarray | None  # (C,) float32
    clamp: Clamp

    def __call__(self, acc: np.ndarray, row_scale: np.ndarray, out: np.ndarray) -> None:
        """``row_scale`` broadcasts against ``acc`` (rows on the leading axes)."""
        a = acc.astype(F32)
        if self.order is Order.SCALE_FIRST:
            np.multiply(a, (row_scale * self.channel_scale).astype(F32), out=out)
        elif self.order is Order.CHANNEL_FIRST:
            np.multiply((a * self.channel_scale).astype(F32), row_scale, out=out)
        else:
            a = (a * row_scale).astype(F32)
            if self.bias is None:
                np.multiply(a, self.channel_scale, out=out)
            else:
                out[...] = fma32(a, self.channel_scale, self.bias)
        if self.bias is not None and self.order is not Order.FMA:
            np.add(out, self.bias, out=out)
        apply_clamp(self.clamp, out)


def weight_scales(ctx: OpContext, w: TensorInfo, channels: int, axis: int,
                  per_channel_ok: bool = True) -> np.ndarray:
    """The int8 weights' float32 scale per output channel (zero points must be 0)."""
    q = w.quantization
    if q is None or len(q.scale) == 0:
        raise ctx.unsupported(
            f"{HYBRID} weights {quoted(w.name)} are int8 without quantization parameters")
    scales = np.asarray(q.scale, F32).reshape(-1)
    zps = np.asarray(q.zero_point, np.int64).reshape(-1)
    if np.any(zps != 0):
        raise ctx.unsupported(f"{HYBRID} weights {quoted(w.name)} must have zero point 0")
    if len(scales) != 1 and (not per_channel_ok or len(scales) != channels
                             or q.quantized_dimension != axis):
        raise ctx.unsupported(
            f"{HYBRID} weights {quoted(w.name)} have {len(scales)} scales on dimension "
            f"{q.quantized_dimension}; expected 1" + (
                f" or {channels} on dimension {axis}" if per_channel_ok else ""))
    if not (np.all(np.isfinite(scales)) and np.all(scales > 0)):
        raise ctx.unsupported(f"{HYBRID} weights {quoted(w.name)} have a scale that is not > 0")
    return np.broadcast_to(scales, (channels,)).astype(F32)


def hybrid_output(ctx: OpContext, order: Order, scales: np.ndarray,
                  bias: TensorInfo | None) -> HybridOutput:
    values = None
    if bias is not None:
        ctx.require_dtype(bias, (np.float32,), "bias")
        values = ctx.constant_input(2, "bias").astype(F32).reshape(-1)
        if values.size != scales.size:
            raise ctx.shape_error(f"bias holds {values.size} values, expected {scales.size}")
    return HybridOutput(order, scales, values, activation_clamp(ctx, F32))


def input_quant(ctx: OpContext, xnnpack: bool, asymmetric: bool) -> InputQuant:
    if xnnpack:
        return InputQuant.XNNPACK
    return InputQuant.ASYMMETRIC if asymmetric else InputQuant.SYMMETRIC


def is_hybrid(ctx: OpContext, weights: int = 1, data: int = 0) -> bool:
    """A float32 input ``data`` with int8 / uint8 weights (input ``weights``)."""
    x = ctx.inputs[data] if data < len(ctx.inputs) else None
    w = ctx.inputs[weights] if weights < len(ctx.inputs) else None
    return (x is not None and w is not None and x.dtype == np.float32
            and w.dtype.type in (np.int8, np.uint8))


def require_int8_weights(ctx: OpContext, w: TensorInfo, role: str = "weights") -> np.ndarray:
    """The constant int8 weights of a hybrid op, as float64."""
    if w.dtype != np.int8:
        raise ctx.unsupported(
            f"{role} tensor {quoted(w.name)} has type {w.dtype.name}: {HYBRID} kernels "
            "support int8 weights only")
    if not w.is_constant:
        raise ctx.unsupported(
            f"{role} tensor {quoted(w.name)} of a {HYBRID} op must be a constant tensor")
    return w.data.astype(np.float64)
