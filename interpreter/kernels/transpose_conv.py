"""TRANSPOSE_CONV (float32; int8, uint8 and 16x8 below; dynamic-range -- float32 input,
int8 weights -- in hybrid/transpose_conv.py): the gradient of CONV_2D with respect to its
input.

Inputs (tensorflow/lite/kernels/transpose_conv.cc): output_shape (int32 [4], constant
here: it is the output's shape), weights OHWI (O output channels, I = input channels;
constant here), input NHWC, optional bias [O]. TransposeConvOptions: padding,
stride_h, stride_w, fused activation.

reference_ops::TransposeConv (tensorflow/lite/kernels/internal/reference/
transpose_conv.h) scatters every input pixel through the filter:

    out[n, y*sh + ky - pad_t, x*sw + kx - pad_l, o] += in[n, y, x, c] * w[o, ky, kx, c]

dropping positions outside the output, then adds the bias and clamps. The padding is
that of a CONV_2D whose *input* has the output's size (ComputePaddingHeightWidth on
output_shape's H and W with stride s, dilation 1):

    conv_out = SAME: ceil(H / s)  VALID: (H - K + s) // s
    pad_t    = max(0, (conv_out - 1) * s + K - H) // 2

and, as in TFLite's Prepare, conv_out must equal the input's height (width): several
output sizes map to one input size (7 and 8 both give 4 at stride 2, SAME), which is why
the op takes output_shape at all.

Here: one matmul gives every tap's contribution, cols[n, y, x, ky, kx, o] =
in[n, y, x, :] @ w[o, ky, kx, :]; each of the KH * KW taps is added into a zeroed canvas
through a strided view, and the output is the canvas window starting at (pad_t, pad_l).
The sums run in a different order than the reference's loops (float rounding only).

int8 (per-channel int8 weights, zero point 0, int32 bias) and 16x8 (int16 input and
output with zero points 0, int8 weights, int64 or int32 bias): transpose_conv.cc
EvalQuantizedPerChannel(16x8) with reference_integer_ops::TransposeConv
(reference/integer_ops/transpose_conv.h):

    acc[c] = sum (x - z_in) * w        scattered as above, in an int32 (int64) scratch
    acc[c] += bias[c]
    out[c] = clamp(requant_c(acc[c]) + z_out)      (16x8: no z_out, it is 0)

Here the sum is the float64 scatter of x - z_in through the integer weights (exact: the
partial sums are integers far below 2^53), wrapped to int32 for the int32 scratch. The
multipliers are the convolution's, M_c = s_in * s_w[c] / s_out (PopulateConvolution-
QuantizationParams), and requant_c depends on the kernel set:

* REFERENCE: int8 -- MultiplyByQuantizedMultiplier (int32 overload); 16x8 -- its int64
  overload with an int64 bias, the int32 one with an int32 bias;
* DEFAULT: int8 runs on XNNPACK (its deconvolution, fp32 requantization as CONV_2D's:
  rint(float32(acc) * float32(M_c)) with XNNPACK's clamp); 16x8 with an int64 bias falls
  back to the reference kernel (transpose_conv.cc: no optimized int64-bias kernel);
  16x8 with an int32 bias runs optimized_integer_ops::TransposeConvV2, whose Quantize
  rounds its own way (NeonChannelsRequant).

uint8 (per-tensor uint8 weights with a zero point; reference_ops::TransposeConv):
acc = sum (x - z_in) * (w - z_w) + bias, M = float(s_in * s_w) / s_out
(GetQuantizedConvolutionMultipler). REFERENCE: MultiplyByQuantizedMultiplier; DEFAULT
(XNNPACK takes no uint8 weights): optimized_ops::TransposeConvV2's Quantize
(NeonRowsRequant).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import quant_math as qm
from edgelite.names import quoted
from .common.accumulator import AccumulatorPlan, GemmPath
from .base import Chosen, Kernel, OpContext, OutputSpec, run_chosen, scratch
from .conv import conv_requant
from .hybrid import transpose_conv as hybrid_transpose_conv
from .common.fused import activation_clamp, apply_clamp
from .opdef import Affine, OpDef, QuantRule
from .common.requantize import (OutputStage, activation_bounds, channel_params, output_stage,
                                qparams, require_same_type)
from .versions import OpSignature, T
from .common.transpose_scatter import TransposeConvRecord, geometry, scatter, scatter_record


def prepare(ctx: OpContext):
    g = geometry(ctx)
    ctx.require_dtype(ctx.input(2), (np.float32,), "input")
    ctx.require_dtype(ctx.input(1), (np.float32,), "weights")
    bias = ctx.optional_input(3)
    if bias is not None:
        ctx.require_dtype(bias, (np.float32,), "bias")
    filt = ctx.constant_input(1, "weights")
    record = scatter_record(ctx, g, filt, np.float32, activation_clamp(ctx, np.float32))
    return (OutputSpec(g.out_shape, np.dtype(np.float32)),), record


def eval(rec: TransposeConvRecord, inputs, outputs) -> None:
    x, bias, out = inputs[2], (inputs[3] if len(inputs) > 3 else None), outputs[0]
    scatter(rec, x)
    np.copyto(out, rec.window)
    if bias is not None:
        np.add(out, bias, out=out)
    apply_clamp(rec.clamp, out)


# --------------------------------------------------------------------------- int8, 16x8


@dataclass(frozen=True)
class Fixed64Requant:
    """MultiplyByQuantizedMultiplier's int64 overload (16x8 with an int64 bias)."""

    multiplier: np.ndarray
    shift: np.ndarray
    float32_bias = False

    def __call__(self, acc: np.ndarray) -> np.ndarray:
        return qm.multiply_by_quantized_multiplier_int64(acc.astype(np.int64), self.multiplier,
                                                         self.shift)


@dataclass(frozen=True)
class NeonRowsRequant:
    """optimized_ops::Quantize (uint8, TransposeConvV2): the output's flat values in
    blocks of 16 through MultiplyByQuantizedMultiplier4Rows (the NEON form, which LiteRT's
    x86 build runs too; the double-rounding build's, quant_math ..._neon), the last
    size % 16 through the scalar MultiplyByQuantizedMultiplier."""

    multiplier: np.ndarray  # one multiplier (per tensor)
    shift: np.ndarray
    rounding: qm.Rounding
    float32_bias = False

    def __call__(self, acc: np.ndarray) -> np.ndarray:
        flat = acc.astype(np.int64).reshape(-1)
        split = flat.size - flat.size % 16
        m, shift = int(self.multiplier[0]), int(self.shift[0])
        out = np.empty_like(flat)
        out[:split] = qm.multiply_by_quantized_multiplier_neon(flat[:split], m, shift)
        out[split:] = qm.multiply_by_quantized_multiplier(flat[split:], m, shift, self.rounding)
        return out.reshape(acc.shape)


@dataclass(frozen=True)
class NeonChannelsRequant:
    """optimized_ops::Quantize (per channel, int16 output; TransposeConvV2 16x8): the
    channels in blocks of 8 on NEON (which LiteRT's x86 build runs too), the last O % 8
    through the scalar MultiplyByQuantizedMultiplier. The NEON form depends on the build:

    * DOUBLE rounding: MultiplyByQuantizedMultiplier4Rows's arithmetic -- vqrdmulh after
      the left shift, then vrshl, which rounds half up (quant_math ..._neon);
    * SINGLE rounding: with r = min(shift, -1), l = shift - r,
      y = (wrap_int32(acc << l) * m) >> 31 (vqdmulh: truncating), out = (y + 2^(-r-1)) >> -r.
    """

    multiplier: np.ndarray  # per channel
    shift: np.ndarray
    rounding: qm.Rounding
    float32_bias = False

    def __call__(self, acc: np.ndarray) -> np.ndarray:
        acc = acc.astype(np.int64)
        blocked = acc.shape[-1] - acc.shape[-1] % 8
        m, shift = self.multiplier[:blocked], self.shift[:blocked]
        out = np.empty_like(acc)
        if self.rounding is qm.Rounding.DOUBLE:
            out[:, :blocked] = qm.multiply_by_quantized_multiplier_neon(acc[:, :blocked], m,
                                                                        shift)
        else:
            right = np.minimum(shift, -1)
            y = (qm.wrap_int32(np.left_shift(acc[:, :blocked], shift - right)) * m) >> 31
            out[:, :blocked] = (y + np.left_shift(1, -right - 1)) >> -right
        out[:, blocked:] = qm.multiply_by_quantized_multiplier(
            acc[:, blocked:], self.multiplier[blocked:], self.shift[blocked:], self.rounding)
        return out


@dataclass(frozen=True)
class QTransposeConvRecord:
    scatter: TransposeConvRecord  # float64, through the integer weights
    centered: np.ndarray  # float64 scratch: x - z_in
    z_in: int
    output: OutputStage  # bias, wrap, requantization, zero point, clamp


_INT32, _INT64 = 2, 4  # schema TensorType codes


def _int32_accumulator_16x8(ctx: OpContext, bias) -> bool:
    """Whether a 16x8 TRANSPOSE_CONV accumulates in int32 (else int64): only when
    TransposeConvOptions.quantized_bias_type says INT32 (transpose_conv.cc Prepare). Left
    unset, LiteRT takes the int64 path and would read an int32 bias as int64 values:
    refused."""
    kind = int(ctx.option("quantized_bias_type", 0))
    if kind not in (0, _INT32, _INT64):
        raise ctx.unsupported(f"quantized_bias_type {kind} (only INT32 or INT64)")
    want = {_INT32: np.int32, _INT64: np.int64}.get(kind)
    if bias is not None and want is not None and bias.dtype != want:
        raise ctx.dtype_error(f"bias {quoted(bias.name)} is {bias.dtype.name} but "
                              f"quantized_bias_type says {np.dtype(want).name}")
    if kind == 0 and bias is not None and bias.dtype == np.int32:
        raise ctx.unsupported(
            f"16x8 bias {quoted(bias.name)} is int32 but quantized_bias_type is not INT32: "
            "LiteRT would read it as int64; set the option or use an int64 bias")
    return kind == _INT32


def prepare_quantized(ctx: OpContext):
    g = geometry(ctx)
    w_t, x, out_t = ctx.input(1), ctx.input(2), ctx.outputs[0]
    bias = ctx.optional_input(3)
    ctx.require_dtype(x, (np.int8, np.uint8, np.int16), "input")
    ctx.require_dtype(w_t, (np.uint8,) if x.dtype == np.uint8 else (np.int8,), "weights")
    require_same_type(ctx, x, out_t)
    sixteen, legacy = x.dtype == np.int16, x.dtype == np.uint8
    if bias is not None:
        ctx.require_dtype(bias, (np.int64, np.int32) if sixteen else (np.int32,), "bias")
    o = g.w_shape[0]
    xq, out = qparams(ctx, x, "input"), qparams(ctx, out_t, "output")
    scales, zps = channel_params(ctx, w_t, "weights", o, 0)
    if legacy and len(w_t.quantization.scale) != 1:
        raise ctx.unsupported(f"uint8 weights {quoted(w_t.name)} must be quantized per tensor")
    if not legacy and np.any(zps != 0):
        raise ctx.unsupported(f"int8 weights {quoted(w_t.name)} must be symmetric (zero point 0)")
    if sixteen and (xq.zero_point or out.zero_point):
        raise ctx.shape_error(f"16x8: input and output need zero points 0, got "
                              f"{xq.zero_point} and {out.zero_point}")
    narrow = sixteen and _int32_accumulator_16x8(ctx, bias)
    xnnpack = not ctx.quant.reference and x.dtype == np.int8
    requant = conv_requant(ctx, x, xq, scales, out, xnnpack)
    if sixteen and not narrow:
        requant = Fixed64Requant(requant.multiplier, requant.shift)
    if legacy and not ctx.quant.reference:
        requant = NeonRowsRequant(requant.multiplier, requant.shift, requant.rounding)
    if narrow and not ctx.quant.reference:
        requant = NeonChannelsRequant(requant.multiplier, requant.shift, requant.rounding)
    lo, hi = activation_bounds(ctx, out, x.dtype, xnnpack)
    bias_values = None if bias is None else \
        ctx.constant_input(3, "bias").astype(np.int64).reshape(-1)
    filt = ctx.constant_input(1, "weights").astype(np.int64) - zps.reshape(o, 1, 1, 1)
    rec = scatter_record(ctx, g, filt, np.float64, None)
    k = g.w_shape[1] * g.w_shape[2] * g.w_shape[3]
    # int32 scratch (int8; 16x8 with an int32 bias) wraps; int64 does not
    plan = AccumulatorPlan(GemmPath.FLOAT64, ((0, k),), not isinstance(requant, Fixed64Requant),
                           np.dtype(np.float64))
    size = int(np.prod(g.out_shape))
    stage = output_stage(ctx, requant, bias_values, out.zero_point, lo, hi, size, o, plan)
    record = QTransposeConvRecord(rec, scratch(ctx, g.x_shape, np.float64), xq.zero_point,
                                  stage)
    return (OutputSpec(g.out_shape, x.dtype),), Chosen(eval_quantized, record)


def eval_quantized(rec: QTransposeConvRecord, inputs, outputs) -> None:
    np.subtract(inputs[2], rec.z_in, out=rec.centered, dtype=np.float64)
    scatter(rec.scatter, rec.centered)
    acc = rec.scatter.window.reshape(-1, rec.scatter.window.shape[-1]).copy()
    rec.output(acc, outputs[0])


def version(sig: OpSignature) -> int:
    """op_version.cc, TRANSPOSE_CONV (inputs: output shape, weights, data, bias): inputs 0
    and 1 int16 and int8, output int16, and a quantized_bias_type 5 (input 0 is the int32
    output shape, so as written this never matches); a fused activation 4; a bias 3; int8
    weights 2."""
    if sig.types() == (T.INT16, T.INT8, T.INT16) and sig.option("quantized_bias_type"):
        return 5
    if sig.option("fused_activation_function"):
        return 4
    if len(sig.inputs) == 4 and sig.inputs[3].type is not None:
        return 3
    return 2 if sig.input(1).type == T.INT8 else 1


_QUANTIZED = Kernel(prepare_quantized, run_chosen)

OPS = (
    # Inputs: output_shape, weights (OHWI), input, bias: the slots are chosen on input 2
    # (affine.data) and the weights.
    OpDef("TRANSPOSE_CONV", shape_operands=(0,),
          float=Kernel(prepare, eval),
          hybrid=Kernel(hybrid_transpose_conv.prepare, run_chosen),
          integer=_QUANTIZED, int16=_QUANTIZED,  # one kernel serves both
          quant=QuantRule.OWN_RANGE,
          affine=Affine(data=2, weights=1, bias=3, out_axis=0, in_axis=3),
          fused_activation=True,
          per_sample=True,
          version=version),
)
