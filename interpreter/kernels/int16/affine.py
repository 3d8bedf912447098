"""16x8 CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED: int16 activations (symmetric, zero
point 0), int8 weights (per tensor or per channel, zero point 0), int64 or int32 bias.

LiteRT runs the reference kernels for these in both kernel sets (XNNPACK takes no int16;
conv.cc / depthwise_conv.cc / fully_connected.cc call reference_integer_ops for 16x8):

    acc[o] = bias[o] + sum_k w[o, k] * x[k]           int64 accumulator
    out[o] = clamp(MBQM64(acc[o], M_o), act_min, act_max)

with MBQM64 the int64 MultiplyByQuantizedMultiplier overload (quant_math: the mantissa
reduced to 16 bits, one rounding), M_o = double(s_x) * double(s_w[o]) / double(s_out)
(PopulateConvolutionQuantizationParams) for the convolutions. FULLY_CONNECTED computes
its per-tensor M as GetQuantizedConvolutionMultipler does: the float32 product
s_x * s_w, then divided in double by s_out; per channel like the convolutions.

The sums are formed exactly on float64 BLAS: |w * x| <= 2^22, so every partial sum of
fewer than 2^31 terms is an exact float64 integer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import quant_math as qm
from ..base import Kernel, OpContext, OutputSpec, TensorInfo, scratch, temporary
from ..common.requantize import (FixedRequant, activation_bounds, channel_params, micro_fc_reals,
                                 symmetric16)
from ..common.window import conv_windows, padded_scratch, patches_view
from edgelite.names import quoted

BIAS_TYPES = (np.int64, np.int32)


@dataclass(frozen=True)
class Mbqm64:
    """MultiplyByQuantizedMultiplier(int64 acc, m, shift): the 16x8 convolutions."""

    multiplier: np.ndarray  # int64 per channel
    shift: np.ndarray

    def __call__(self, acc: np.ndarray) -> np.ndarray:
        return qm.multiply_by_quantized_multiplier_int64(acc, self.multiplier, self.shift)


@dataclass(frozen=True)
class Float64Scale:
    """round_half_away(double(acc) * M): the float overloads of reference_integer_ops::
    FullyConnected / FullyConnectedPerChannel that LiteRT's FullyConnectedInt16 calls."""

    multiplier: np.ndarray  # float64 M per channel

    def __call__(self, acc: np.ndarray) -> np.ndarray:
        scaled = qm.round_half_away(acc * self.multiplier)
        return np.clip(scaled, qm.INT32_MIN, qm.INT32_MAX).astype(np.int64)


@dataclass(frozen=True)
class Neon32:
    """optimized_integer_ops::FullyConnected on int16 (ruy, int32 accumulator): the int32
    sum requantized by MultiplyByQuantizedMultiplier4Rows (rounding half up at the end,
    measured: quant_math.multiply_by_quantized_multiplier_neon)."""

    multiplier: np.ndarray  # int64 per channel
    shift: np.ndarray

    def __call__(self, acc: np.ndarray) -> np.ndarray:
        return qm.multiply_by_quantized_multiplier_neon(qm.wrap_int32(acc), self.multiplier,
                                                        self.shift)


@dataclass(frozen=True)
class Stage16:
    """acc (float64, channels last) -> + bias, requantize per channel, clamp -> int16."""

    requant: Mbqm64 | Float64Scale | Neon32 | FixedRequant
    bias: np.ndarray | None  # int64 per channel
    width: int  # channels
    lo: int
    hi: int

    def __call__(self, acc: np.ndarray, out: np.ndarray) -> None:
        total = acc.reshape(-1, self.width).astype(np.int64)
        if self.bias is not None:
            total += self.bias
        values = self.requant(total)
        np.clip(values, self.lo, self.hi, out=values)
        np.copyto(out, values.reshape(out.shape), casting="unsafe")


@dataclass(frozen=True)
class Operands16:
    x: TensorInfo
    filt: np.ndarray  # filter values, float64
    reals: list  # the real multiplier per output channel (double)
    xq_scale: float  # s_x, s_w (per channel), s_out
    w_scales: np.ndarray
    out_scale: float
    bias: np.ndarray | None  # int64 per channel
    bias_type: type | None  # the bias tensor's dtype
    lo: int
    hi: int

    def stage(self, requant) -> Stage16:
        return Stage16(requant, self.bias, len(self.reals), self.lo, self.hi)


def operands16(ctx: OpContext, channels_of, axis: int) -> Operands16:
    """The operands of a 16x8 affine op, checked. ``channels_of(filter shape)`` gives the
    output channels; ``axis`` the filter's per-channel quantization axis."""
    ctx.check_arity(2, 3)
    x, f, y = ctx.input(0), ctx.input(1), ctx.outputs[0]
    bias = ctx.optional_input(2)
    ctx.require_dtype(f, (np.int8,), "filter")
    xq, out = symmetric16(ctx, (x, "input"), (y, "output"))
    channels = channels_of(f.shape)
    scales, zps = channel_params(ctx, f, "filter", channels, axis)
    if np.any(zps != 0):
        raise ctx.unsupported(f"int8 filter {quoted(f.name)} must be symmetric (zero point 0)")
    bias_values = None
    if bias is not None:
        ctx.require_dtype(bias, BIAS_TYPES, "bias")
        bias_values = ctx.constant_input(2, "bias").astype(np.int64).reshape(-1)
        if bias_values.size != channels:
            raise ctx.shape_error(f"bias holds {bias_values.size} values, expected {channels}")
    # M = double(s_x) * double(s_w[o]) / double(s_out)
    reals = [xq.scale * float(s) / out.scale for s in scales]
    lo, hi = activation_bounds(ctx, out, np.int16, xnnpack=False)
    return Operands16(x=x, filt=ctx.constant_input(1, "filter").astype(np.float64),
                      reals=reals, xq_scale=xq.scale, w_scales=scales,
                      out_scale=out.scale, bias=bias_values,
                      bias_type=None if bias is None else bias.dtype.type, lo=lo, hi=hi)


def mbqm64_stage(ctx: OpContext, ops: Operands16) -> Stage16:
    """The convolutions' output stage; their 16x8 kernels read the bias as int64
    (conv.cc / depthwise_conv.cc): an int32 bias is refused."""
    if ops.bias_type is not None and ops.bias_type != np.int64:
        raise ctx.unsupported("a 16x8 convolution needs an int64 bias (LiteRT reads the "
                              "bias of int16 convolutions as int64); this one is int32")
    m, s = qm.quantize_multipliers(ops.reals, ctx.quant.rounding)
    return ops.stage(Mbqm64(np.asarray(m, np.int64), np.asarray(s, np.int64)))


# --------------------------------------------------------------------------- CONV_2D


def conv_operands16(ctx: OpContext, channels_of, axis: int, layout: str):
    """(input, filter values, output stage) of a 16x8 convolution: 4-D operands."""
    ops = operands16(ctx, channels_of, axis)
    if ops.x.rank != 4 or ops.filt.ndim != 4:
        raise ctx.shape_error(f"input and filter must be 4-D ({layout})")
    return ops.x, ops.filt, mbqm64_stage(ctx, ops)


def conv_windows16(ctx: OpContext, x_shape, kh: int, kw: int):
    """(row / column windows, the interior of the zero-padded float64 scratch the input
    goes into, the (N, OH, OW, KH, KW, C) view of every window)."""
    n, h, w, c = x_shape
    wh, ww = conv_windows(ctx, h, w, kh, kw)
    padded, interior = padded_scratch(ctx, n, wh, ww, c, np.float64, 0.0)
    return wh, ww, interior, patches_view(padded, wh, ww)


@dataclass(frozen=True)
class Conv16Record:
    interior: np.ndarray  # where x goes inside the zero-padded float64 scratch
    windows: np.ndarray  # (N, OH, OW, KH, KW, C) view of the scratch
    cols: np.ndarray  # im2col scratch
    weights: np.ndarray  # (K, O) float64
    acc: np.ndarray  # (rows, O) float64
    output: Stage16


def prepare_conv16(ctx: OpContext):
    """reference_integer_ops::ConvPerChannel (integer_ops/conv.h), int16 x int8, grouped
    when the input has groups x the filter's input channels."""
    x, filt, stage = conv_operands16(ctx, lambda s: s[0], 0, "NHWC / OHWI")
    n, h, w, c = x.shape
    o, kh, kw, cf = filt.shape
    if cf < 1 or c % cf != 0 or o % (c // cf) != 0:
        raise ctx.shape_error(
            f"input channels ({c}) must be a multiple of the filter's ({cf}), and output "
            f"channels ({o}) a multiple of the groups")
    wh, ww, interior, windows = conv_windows16(ctx, x.shape, kh, kw)
    rows = n * wh.size_out * ww.size_out
    weights = block_diagonal(ctx, filt, c // cf)
    record = Conv16Record(interior=interior, windows=windows,
                          cols=temporary(ctx, windows.shape, np.float64), weights=weights,
                          acc=temporary(ctx, (rows, o), np.float64), output=stage)
    return (OutputSpec((n, wh.size_out, ww.size_out, o), np.dtype(np.int16)),), record


def block_diagonal(ctx: OpContext, filt: np.ndarray, groups: int) -> np.ndarray:
    """Filter OHWI (I = C / groups) -> the (KH*KW*C, O) matrix of the im2col product over
    all C input channels: output channel o of group g = o // (O / groups) reads input
    channels g*I .. g*I + I - 1 (reference_integer_ops::ConvPerChannel's groups), zero
    weights elsewhere -- exact, the sums stay float64 integers (groups times the
    multiplies of a per-group product, for one matmul)."""
    o, kh, kw, cf = filt.shape
    full = scratch(ctx, (kh * kw, groups, cf, groups, o // groups), np.float64, fill=0)
    blocks = filt.reshape(groups, o // groups, kh * kw, cf).transpose(2, 0, 3, 1)
    for g in range(groups):
        full[:, g, :, g, :] = blocks[:, g]
    return full.reshape(kh * kw * groups * cf, o)


def eval_conv16(rec: Conv16Record, inputs, outputs) -> None:
    np.copyto(rec.interior, inputs[0])
    np.copyto(rec.cols, rec.windows)
    np.matmul(rec.cols.reshape(len(rec.acc), -1), rec.weights, out=rec.acc)
    rec.output(rec.acc, outputs[0])


# --------------------------------------------------------------------------- DEPTHWISE


@dataclass(frozen=True)
class Depthwise16Record:
    interior: np.ndarray
    windows: np.ndarray  # (N, OH, OW, KH, KW, C) view
    multiplier: int  # depth multiplier M: output channel c * M + m reads input channel c
    weights: np.ndarray  # (KH, KW, C, M) float64
    acc: np.ndarray  # (N, OH, OW, C, M) float64
    output: Stage16


def prepare_depthwise16(ctx: OpContext):
    """reference_integer_ops::DepthwiseConvPerChannel (integer_ops/depthwise_conv.h),
    int16 x int8 with an int64 accumulator."""
    x, filt, stage = conv_operands16(ctx, lambda s: s[3], 3, "NHWC / 1HWO")
    n, h, w, c = x.shape
    one, kh, kw, o = filt.shape
    if one != 1 or o % c != 0:
        raise ctx.shape_error(f"filter shape {list(filt.shape)} must be [1, KH, KW, O] with O "
                              f"a multiple of the input channels ({c})")
    wh, ww, interior, windows = conv_windows16(ctx, x.shape, kh, kw)
    m = o // c
    acc = temporary(ctx, (n, wh.size_out, ww.size_out, c, m), np.float64)
    record = Depthwise16Record(interior=interior, windows=windows, multiplier=m,
                               weights=np.ascontiguousarray(filt[0].reshape(kh, kw, c, m)),
                               acc=acc, output=stage)
    return (OutputSpec((n, wh.size_out, ww.size_out, o), np.dtype(np.int16)),), record


def eval_depthwise16(rec: Depthwise16Record, inputs, outputs) -> None:
    np.copyto(rec.interior, inputs[0])
    rec.acc.fill(0.0)
    kh, kw = rec.weights.shape[:2]
    for ky in range(kh):
        for kx in range(kw):
            tap = rec.windows[:, :, :, ky, kx, :, None]  # (N, OH, OW, C, 1)
            np.add(rec.acc, tap * rec.weights[ky, kx], out=rec.acc)
    rec.output(rec.acc, outputs[0])


# --------------------------------------------------------------------------- FULLY_CONNECTED


@dataclass(frozen=True)
class FullyConnected16Record:
    rows: int
    depth: int
    weights_t: np.ndarray  # (K, O) float64
    x_work: np.ndarray  # (rows, K) float64
    acc: np.ndarray  # (rows, O) float64
    output: Stage16


def prepare_fully_connected16(ctx: OpContext, geometry):
    """reference_integer_ops::FullyConnected / FullyConnectedPerChannel, int16 x int8
    (fully_connected.cc FullyConnectedInt16 / FullyConnectedPerChannelInt16).
    ``geometry(ctx, x, w)`` -> (rows, depth, units, output shape)."""
    ops = operands16(ctx, lambda s: s[0], 0)
    x, weights = ops.x, ops.filt
    rows, depth, units, out_shape = geometry(ctx, x, ctx.input(1))
    stage = ops.stage(fc_requant(ctx, ops))
    record = FullyConnected16Record(
        rows=rows, depth=depth, weights_t=np.ascontiguousarray(weights.T),
        x_work=temporary(ctx, (rows, depth), np.float64),
        acc=temporary(ctx, (rows, units), np.float64), output=stage)
    return (OutputSpec(out_shape, np.dtype(np.int16)),), record


def eval_fully_connected16(rec: FullyConnected16Record, inputs, outputs) -> None:
    np.copyto(rec.x_work, inputs[0].reshape(rec.rows, rec.depth))
    np.matmul(rec.x_work, rec.weights_t, out=rec.acc)
    rec.output(rec.acc, outputs[0])


INT32_TYPE, INT64_TYPE = 2, 4  # TensorType codes of FullyConnectedOptions.quantized_bias_type


def fc_requant(ctx: OpContext, ops: Operands16):
    """fully_connected.cc EvalQuantized, int16 input and output, int8 weights:

    * the reference kernels, a bias read as int64 (an int64 bias tensor or
      quantized_bias_type INT64): FullyConnectedInt16 / FullyConnectedPerChannelInt16,
      i.e. the float overloads of the reference kernels (Float64Scale);
    * the default kernels with no bias or an int32 one: optimized_integer_ops (Neon32).

    FullyConnectedInt16 reads the bias as int32 only when quantized_bias_type is INT32:
    an int32 bias without it would be read as int64, so it is refused there."""
    bias_type = int(ctx.option("quantized_bias_type", 0))
    int64_bias = ops.bias_type == np.int64 or bias_type == INT64_TYPE
    if ctx.quant.micro:
        # TFLM (micro/kernels/fully_connected.cc, kTfLiteInt16): reference_integer_ops::
        # FullyConnected with MultiplyByQuantizedMultiplier -- the int64 overload for an
        # int64 bias, the int32 one (an int32 accumulator) for an int32 bias
        m, s = qm.quantize_multipliers(micro_fc_reals(ops.xq_scale, ops.w_scales,
                                                      ops.out_scale), ctx.quant.rounding)
        if int64_bias:
            return Mbqm64(np.asarray(m, np.int64), np.asarray(s, np.int64))
        return FixedRequant(np.asarray(m, np.int64), np.asarray(s, np.int64),
                            ctx.quant.rounding)
    if ctx.quant.reference or int64_bias:
        if ops.bias_type == np.int32 and bias_type != INT32_TYPE:
            raise ctx.unsupported(
                "an int32 bias on a 16x8 FULLY_CONNECTED without quantized_bias_type INT32: "
                "LiteRT's reference kernel reads it as int64; give an int64 bias")
        return Float64Scale(np.asarray(ops.reals, np.float64))
    m, s = qm.quantize_multipliers(ops.reals, ctx.quant.rounding)
    return Neon32(np.asarray(m, np.int64), np.asarray(s, np.int64))


CONV16 = Kernel(prepare_conv16, eval_conv16)
DEPTHWISE16 = Kernel(prepare_depthwise16, eval_depthwise16)


def fully_connected16(geometry) -> Kernel:
    return Kernel(lambda ctx: prepare_fully_connected16(ctx, geometry),
                  eval_fully_connected16)

