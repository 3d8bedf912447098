"""What the int8 / uint8 kernels share: quantization parameters, fused-activation ranges,
lookup tables, accumulator requantization, and the dtype dispatch used by the registry.

A quantized tensor holds ``q`` with ``r = scale * (q - zero_point)``. Scales are float32
in the file and in TFLite's TfLiteQuantizationParams; we keep them as Python floats
holding that float32 value exactly, so ``float(s1) * float(s2)`` is TFLite's
``static_cast<double>(s1) * s2`` and ``np.float32(s1) * np.float32(s2)`` its float product.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from ... import native as native_backend
from . import native_ops
from ... import quant_math as qm
from ...kernel_set import QuantConfig
from ..base import Chosen, OpContext, TensorInfo, temporary
from .fused import NONE, RELU, RELU6, RELU_N1_TO_1, clamp_inplace
from .accumulator import AccumulatorPlan, bias_fits_float32, wrap_int32_float
from edgelite.errors import ModelFormatError
from edgelite.names import quoted

QUANTIZED = (np.int8, np.uint8)

# The float range each fused activation keeps (ConvertActivationToOutputRange in the
# XNNPACK delegate; CalculateActivationRangeQuantized quantizes the same bounds).
_ACT_RANGE = {NONE: (-math.inf, math.inf), RELU: (0.0, math.inf),
              RELU_N1_TO_1: (-1.0, 1.0), RELU6: (0.0, 6.0)}


def is_quantized16(t: TensorInfo | None) -> bool:
    """An int16 tensor with quantization parameters (16x8 quantization's activations)."""
    return (t is not None and t.dtype.type == np.int16 and t.quantization is not None
            and len(t.quantization.scale) > 0)


def is_quantized(t: TensorInfo | None) -> bool:
    """An int8 / uint8 tensor with quantization parameters (plain int8 data without
    them stays with the type-generic kernels)."""
    return (t is not None and t.dtype.type in QUANTIZED and t.quantization is not None
            and len(t.quantization.scale) > 0)


@dataclass(frozen=True)
class QParams:
    scale: float  # the tensor's float32 scale (exactly representable as a Python float)
    zero_point: int


def per_tensor_scale(ctx: OpContext, t: TensorInfo, role: str,
                     per_channel: str = "only weights may be") -> float:
    """The float32 scale of a tensor quantized per tensor (TfLiteTensor::params.scale);
    errors name the tensor, ``per_channel`` says why one scale per channel is refused."""
    q = t.quantization
    if q is None or len(q.scale) == 0:
        raise ctx.shape_error(
            f"{role} tensor {quoted(t.name)} is {t.dtype.name} but has no quantization parameters"
        )
    if len(q.scale) != 1:
        raise ctx.unsupported(
            f"{role} tensor {quoted(t.name)} is quantized per channel; {per_channel}")
    scale = float(np.float32(q.scale[0]))
    if not (math.isfinite(scale) and scale > 0):
        raise ctx.shape_error(f"{role} tensor {quoted(t.name)} has scale {scale}; it must be > 0")
    return scale


def qparams(ctx: OpContext, t: TensorInfo, role: str) -> QParams:
    """Per-tensor parameters of an activation tensor (errors name the tensor)."""
    scale = per_tensor_scale(ctx, t, role)
    q = t.quantization
    zero_point = int(q.zero_point[0]) if len(q.zero_point) else 0
    info = np.iinfo(t.dtype)
    if not info.min <= zero_point <= info.max:
        raise ctx.shape_error(
            f"{role} tensor {quoted(t.name)} has zero point {zero_point}, outside {t.dtype.name}"
        )
    return QParams(scale, zero_point)


def symmetric16(ctx: OpContext, *tensors: tuple[TensorInfo, str]) -> list[QParams]:
    """Per-tensor parameters of int16 activation tensors ``(tensor, role)`` of a 16x8
    kernel, which must be symmetric (TFLite's kernels check zero point 0)."""
    params = []
    for t, role in tensors:
        ctx.require_dtype(t, (np.int16,), role)
        q = qparams(ctx, t, role)
        if q.zero_point != 0:
            raise ctx.unsupported(f"int16 {role} tensor {quoted(t.name)} has zero point "
                                  f"{q.zero_point}; 16x8 quantization needs 0")
        params.append(q)
    return params


def channel_params(ctx: OpContext, t: TensorInfo, role: str, channels: int, axis: int):
    """(float32 scales [channels], int64 zero points [channels]) of a weight tensor:
    per-tensor parameters are broadcast; per-channel ones must lie along ``axis``."""
    q = t.quantization
    if q is None or len(q.scale) == 0:
        raise ctx.shape_error(f"{role} tensor {quoted(t.name)} has no quantization parameters")
    scales = np.asarray(q.scale, np.float32).reshape(-1)
    zps = np.asarray(q.zero_point, np.int64).reshape(-1) if len(q.zero_point) else \
        np.zeros(len(scales), np.int64)
    if len(scales) == 1:
        return np.full(channels, scales[0], np.float32), np.full(channels, zps[0], np.int64)
    if len(scales) != channels or q.quantized_dimension != axis or len(zps) != channels:
        raise ctx.shape_error(
            f"{role} tensor {quoted(t.name)} has {len(scales)} scales / {len(zps)} zero points on "
            f"dimension {q.quantized_dimension}; expected {channels} on dimension {axis}"
        )
    if not (np.all(np.isfinite(scales)) and np.all(scales > 0)):
        raise ctx.shape_error(f"{role} tensor {quoted(t.name)} has a scale that is not > 0")
    return scales, zps


def require_same_type(ctx: OpContext, a: TensorInfo, b: TensorInfo) -> None:
    if a.dtype != b.dtype:
        raise ctx.dtype_error(
            f"{quoted(a.name)} is {a.dtype.name} but {quoted(b.name)} is {b.dtype.name}; quantized "
            "kernels need one type"
        )


# --------------------------------------------------------------------------- clamps


def activation_bounds(ctx: OpContext, out: QParams, dtype, xnnpack: bool) -> tuple[int, int]:
    """The output clamp [lo, hi] of the op's fused activation, as the chosen kernels
    compute it:

    * TFLite (CalculateActivationRangeQuantized): q(v) = zp + round_half_away(v / s);
    * XNNPACK (xnn_qs8_quantize): q(v) = lrintf(clamp(v / s + zp)), half to even.
    """
    code = int(ctx.option("fused_activation_function", NONE))
    if code not in _ACT_RANGE:
        raise ctx.unsupported(
            f"fused activation code {code} is not supported on a quantized op "
            "(only NONE, RELU, RELU_N1_TO_1 and RELU6)"
        )
    if not xnnpack:
        # kernel_util.cc Quantize: round(v / s) must fit int32, or Prepare fails.
        for bound in (v for v in _ACT_RANGE[code] if math.isfinite(v)):
            with np.errstate(over="ignore"):
                steps = np.float32(qm.round_half_away(np.float32(bound) / np.float32(out.scale)))
            if not -(2.0**31) <= steps <= 2.0**31:
                raise ModelFormatError(
                    f"{ctx.describe()}: the fused activation's bound {bound:g} is "
                    f"{float(steps):.4g} steps of the output scale {out.scale:.4g}, beyond "
                    "int32; LiteRT refuses such an op (CalculateActivationRangeQuantized)")
    return activation_bounds_for(code, out, dtype, xnnpack)


def activation_bounds_for(code: int, out: QParams, dtype, xnnpack: bool) -> tuple[int, int]:
    info = np.iinfo(dtype)
    if not xnnpack:
        return qm.activation_range(code, out.scale, out.zero_point, dtype)
    lo, hi = _ACT_RANGE[code]
    return (xnn_quantize(lo, out.scale, out.zero_point, dtype) if lo > -math.inf else info.min,
            xnn_quantize(hi, out.scale, out.zero_point, dtype) if hi < math.inf else info.max)


def xnn_quantize(value: float, scale: float, zero_point: int, dtype) -> int:
    """XNNPACK's xnn_qs8_quantize / xnn_qu8_quantize:
    lrintf(min(max(v / s + zp, qmin), qmax)), all in float32."""
    info = np.iinfo(dtype)
    with np.errstate(over="ignore"):
        v = np.float32(value) / np.float32(scale) + np.float32(zero_point)
    v = min(max(v, np.float32(info.min)), np.float32(info.max))
    return int(np.rint(v))


def clamp_out(values: np.ndarray, lo: int, hi: int, out: np.ndarray) -> None:
    """Clamp integral ``values`` (int64 or float) to [lo, hi] and store them into the
    int8 / uint8 ``out``."""
    values = np.asarray(values)  # (a reduction to a scalar gives a numpy scalar)
    clamp_inplace(values, lo, hi)
    np.copyto(out, values.reshape(out.shape), casting="unsafe")


# --------------------------------------------------------------------------- lookup tables


@dataclass(frozen=True)
class LutRecord:
    lut: np.ndarray  # (256,) output values, indexed by the input bits as uint8


def apply_lut(rec: LutRecord, inputs, outputs) -> None:
    """eval() of an op that maps each 8-bit value to one 8-bit value through a table."""
    rec.lut.take(inputs[0].view(np.uint8), out=outputs[0].view(rec.lut.dtype))


def lut_kernel(ctx: OpContext, lut: np.ndarray) -> Chosen:
    """The eval and record looking ``lut`` up for input 0: native_ops' C lookup where the
    native backend runs, else apply_lut."""
    return native_ops.lut(ctx, lut) or Chosen(apply_lut, LutRecord(lut))


def make_lut(dtype, values_for, out_dtype=None) -> np.ndarray:
    """Table of ``values_for(q)`` (int64, any range; clamped to ``out_dtype``, default
    ``dtype``) over every q of ``dtype``, laid out so that ``lut[q.view(uint8)]`` is the
    entry of q (TFLite's LUTPopulate order)."""
    out_dtype = np.dtype(dtype if out_dtype is None else out_dtype)
    info, out_info = np.iinfo(dtype), np.iinfo(out_dtype)
    q = np.arange(info.min, info.max + 1, dtype=np.int64)
    out = np.clip(np.asarray(values_for(q), np.int64), out_info.min, out_info.max)
    lut = np.empty(256, out_dtype)
    lut[q.astype(dtype).view(np.uint8)] = out.astype(out_dtype)
    return lut


# --------------------------------------------------------------------------- requantize
#
# acc (int64) -> output value before the zero point, one of three ways, each its own
# type (the kernel set picks one in prepare()); ``multiplier`` / ``shift`` broadcast along
# the last axis (per channel).


@dataclass(frozen=True)
class FixedRequant:
    """MultiplyByQuantizedMultiplier(acc, m, shift) -- TFLite's integer kernels."""

    multiplier: np.ndarray  # int64 mantissas
    shift: np.ndarray
    rounding: qm.Rounding = qm.Rounding.DOUBLE
    float32_bias: ClassVar[bool] = False  # the output stage adds the bias exactly

    def __call__(self, acc: np.ndarray) -> np.ndarray:
        """``acc``: exact integer accumulators, as int64 or as integral float64 (the
        BLAS result). Returns integral values."""
        return qm.multiply_by_quantized_multiplier(acc.astype(np.int64, copy=False),
                                                   self.multiplier, self.shift, self.rounding)


@dataclass(frozen=True)
class Float64Requant:
    """round_half_away(double(acc) * M), M in double -- LiteRT's reference
    FULLY_CONNECTED (reference_integer_ops::FullyConnected with scales)."""

    multiplier: np.ndarray  # float64 M
    float32_bias: ClassVar[bool] = False

    def __call__(self, acc: np.ndarray) -> np.ndarray:
        scaled = qm.round_half_away(acc * self.multiplier)
        return np.clip(scaled, qm.INT32_MIN, qm.INT32_MAX, out=scaled)


@dataclass(frozen=True)
class Fp32Requant:
    """rint(float32(acc) * float32(M)) -- XNNPACK's fp32 requantization (the magic-bias
    / cvtps rounding is half to even). Fp32OutputStage applies it in place."""

    multiplier: np.ndarray  # float32 M
    float32_bias: ClassVar[bool] = True  # the bias is added in float32 too


Requant = FixedRequant | Float64Requant | Fp32Requant


# Per-channel parameters of accumulators up to this many values are stored tiled over the
# whole accumulator: a same-shape ufunc call costs less than a broadcasting one.
SMALL_TENSOR = 2**14


# native.h's el_requant_kind
NATIVE_KIND = {qm.Rounding.DOUBLE: 0, qm.Rounding.SINGLE: 1}
NATIVE_FLOAT64, NATIVE_FP32 = 2, 3


@dataclass(frozen=True, eq=False)
class NativeStage:
    """An output stage's parameters laid out for the C output stage (native/requant.c:
    one pass, the same formulas as the numpy stages); per-value arrays hold ``width``
    values. Calling it returns False where the C code cannot take the buffers (an
    accumulator that is not float32 / float64, a strided output): numpy runs then."""

    kind: int
    bias: np.ndarray | None
    multiplier: np.ndarray
    shift: np.ndarray | None
    width: int
    zp_out: int
    lo: int
    hi: int
    wrap: bool
    # the fixed-point tile stages' parameters (native.h el_fixed_planes), prepared by
    # native_gemm.tile_stage for the GEMM and depthwise kernels; None: per-value code
    planes: np.ndarray | None = None

    @classmethod
    def exact(cls, requant, bias, width, zp_out, lo, hi, wrap) -> "NativeStage | None":
        def per_value(values, dtype):
            return np.ascontiguousarray(
                np.broadcast_to(np.asarray(values, dtype).reshape(-1), (width,)))

        if isinstance(requant, Float64Requant):
            kind, mult, shift = NATIVE_FLOAT64, per_value(requant.multiplier, np.float64), None
        elif isinstance(requant, FixedRequant):
            kind = NATIVE_KIND[requant.rounding]
            mult = per_value(requant.multiplier, np.int64)
            shift = per_value(requant.shift, np.int64)
        else:   # a kernel's own requantization (e.g. transpose_conv's int64 one): numpy
            return None
        bias = None if bias is None else per_value(bias, np.float64)
        return cls(kind, bias, mult, shift, width, zp_out, lo, hi, wrap)

    def __call__(self, acc: np.ndarray, out: np.ndarray) -> bool:
        if acc.dtype not in (np.float32, np.float64) or not out.flags.c_contiguous \
                or out.dtype not in (np.int8, np.uint8) or acc.size != out.size:
            return False
        acc_f64 = acc.dtype == np.float64
        if self.bias is not None and self.kind == NATIVE_FP32 and \
                self.bias.dtype != acc.dtype:
            return False
        native_backend.module.output_stage(
            np.ascontiguousarray(acc), int(acc_f64), self.bias, self.kind, self.multiplier,
            self.shift, self.width, self.zp_out, self.lo, self.hi, int(self.wrap),
            out, int(out.dtype == np.uint8))
        return True


@dataclass(frozen=True)
class ExactOutputStage:
    """The end of every accumulating int8 / uint8 kernel with TFLite's fixed-point or the
    reference FULLY_CONNECTED's double requantization:
    ``out = clamp(requant(acc + bias) + zp_out, lo, hi)``, written into the output.

    ``acc`` holds exact integer sums as float32 or float64 (from BLAS), channels last;
    ``acc + bias`` is formed in float64 (exact below 2^53). With ``wrap`` (the kernel's
    bound could not rule out an int32 overflow) it is wrapped to int32 first, as
    TFLite's int32 accumulator wraps (accumulator)."""

    requant: FixedRequant | Float64Requant
    bias: np.ndarray | None  # (channels,) float64
    width: int  # values per row of acc as the stage sees it
    zp_out: int
    lo: int
    hi: int
    wrap: bool = False  # wrap acc + bias to int32
    native: NativeStage | None = None  # the same stage in C (native backend)

    def rows(self, index: tuple, batch: int, height: int) -> "ExactOutputStage":
        """The stage for output rows ``index``: this one (it keeps no scratch)."""
        return self

    def __call__(self, acc: np.ndarray, out: np.ndarray) -> None:
        if self.native is not None and self.native(acc, out):
            return
        acc = acc.reshape(-1, self.width).astype(np.float64)
        if self.bias is not None:
            acc += self.bias
        if self.wrap:
            wrap_int32_float(acc)
        values = self.requant(acc)
        values += self.zp_out
        clamp_out(values, self.lo, self.hi, out)


@dataclass(frozen=True)
class Fp32OutputStage:
    """The output stage with XNNPACK's fp32 requantization (the DEFAULT kernel set), all
    in place in float32:

        v = float32(acc + bias)      rounds like XNNPACK's int32 -> float conversion
        v = v * M                    float32 product, per channel
        v = clip(v, lo - zp, hi - zp); v = rint(v)
        out = v + zp                 (cast to int8 / uint8 on the way out)

    (clipping before rint equals XNNPACK's rint-then-clamp since the bounds are
    integers). ``acc + bias`` is exact in float64, and in float32 when the bias is
    representable there, so the float32 sum is the correctly rounded exact value; where
    the bias is not exact in float32 the kernel accumulates in float64 (with ``wrap``,
    wrapped to int32 first). The per-channel bias and M are stored tiled ``repeat``
    times (acc viewed as rows of repeat * channels values, e.g. OW * C), so numpy walks
    long contiguous rows."""

    bias: np.ndarray | None  # tiled, in acc's dtype
    multiplier: np.ndarray  # tiled float32 M
    width: int  # values per row of acc as the stage sees it
    zp_out: int
    bounds: tuple  # float32 (lo - zp_out, hi - zp_out)
    f32: np.ndarray | None = None  # float32 scratch (float64 acc)
    wrap: bool = False  # wrap acc + bias to int32 (acc is float64)
    native: NativeStage | None = None  # the same stage in C (native backend)

    def rows(self, index: tuple, batch: int, height: int) -> "Fp32OutputStage":
        """The stage for output rows ``index`` (an (N, OH) slice of an accumulator whose
        rows are OW * C values): its own part of the float32 scratch, so that slices
        can run at once."""
        if self.f32 is None:
            return self
        part = self.f32.reshape(batch, height, -1)[index].reshape(-1, self.width)
        return replace(self, f32=part)

    def __call__(self, acc: np.ndarray, out: np.ndarray) -> None:
        if self.native is not None and self.native(acc, out):
            return
        acc = acc.reshape(-1, self.width)
        if self.bias is not None:
            np.add(acc, self.bias, out=acc)
        if self.wrap:
            wrap_int32_float(acc)
        v = acc
        if self.f32 is not None:
            v = self.f32
            np.copyto(v, acc, casting="same_kind")
        np.multiply(v, self.multiplier, out=v)
        clamp_inplace(v, self.bounds[0], self.bounds[1])
        np.rint(v, out=v)
        np.add(v, self.zp_out, out=out.reshape(v.shape), casting="unsafe")


OutputStage = ExactOutputStage | Fp32OutputStage


def output_stage(ctx: OpContext, requant: Requant, bias: np.ndarray | None, zp_out: int,
                 lo: int, hi: int, acc_size: int, channels: int, plan: AccumulatorPlan,
                 repeat: int = 1) -> OutputStage:
    """The output stage for a (acc_size // channels, channels) accumulator of
    ``plan.acc_dtype``, wrapping to int32 if ``plan.wraps``; ``bias``: the integer bias
    or None; ``repeat`` must divide the number of rows. With fp32 requantization and a
    float32 accumulator the bias must be exact in float32 (plan_accumulator sees to
    that)."""
    acc_dtype = plan.acc_dtype
    if plan.wraps and acc_dtype != np.float64:
        raise ValueError("wrapping to int32 needs a float64 accumulator")
    if bias is not None:
        bias = np.asarray(bias, np.int64).reshape(-1)
    if not isinstance(requant, Fp32Requant):
        bias = None if bias is None else bias.astype(np.float64)
        native = NativeStage.exact(requant, bias, channels, zp_out, lo, hi, plan.wraps) \
            if ctx.quant.native else None
        return ExactOutputStage(requant=requant, bias=bias, width=channels, zp_out=zp_out,
                                lo=lo, hi=hi, wrap=plan.wraps, native=native)
    if acc_dtype == np.float32 and not bias_fits_float32(bias):
        raise ValueError("the bias is not exact in float32: accumulate in float64")
    if acc_size <= SMALL_TENSOR:  # tile over the whole accumulator: no broadcasting
        repeat = acc_size // channels
    rows = acc_size // (channels * repeat)

    def tiled(values, dtype):
        per_channel = np.broadcast_to(np.asarray(values, dtype).reshape(-1), (channels,))
        return np.ascontiguousarray(np.tile(per_channel, repeat))

    f32 = temporary(ctx, (rows, channels * repeat), np.float32) \
        if acc_dtype != np.float32 else None
    bias = None if bias is None else tiled(bias, acc_dtype)
    multiplier = tiled(requant.multiplier, np.float32)
    native = NativeStage(NATIVE_FP32, bias, multiplier, None, channels * repeat, zp_out, lo,
                         hi, plan.wraps) if ctx.quant.native else None
    return Fp32OutputStage(
        bias=bias, multiplier=multiplier, width=channels * repeat,
        zp_out=zp_out, bounds=(np.float32(lo - zp_out), np.float32(hi - zp_out)), f32=f32,
        wrap=plan.wraps, native=native)


def fixed_requant(reals, config: QuantConfig) -> FixedRequant:
    m, s = qm.quantize_multipliers(reals, config.rounding)
    return FixedRequant(m, s, config.rounding)


def micro_fc_reals(input_scale: float, weight_scales, output_scale: float) -> list[float]:
    """TFLM's FULLY_CONNECTED multipliers M (micro/kernels/fully_connected_common.cc
    CalculateOpDataFullyConnected), quantized by QuantizeMultiplier and applied with
    MultiplyByQuantizedMultiplier (reference_integer_ops::FullyConnected), where LiteRT's
    reference kernel rescales in double: per channel double(s_x) * double(s_w[o]) /
    double(s_out); per tensor GetQuantizedConvolutionMultipler (kernel_util.cc), the
    float32 product s_x * s_w divided in double by s_out."""
    scales = np.asarray(weight_scales, np.float32).reshape(-1)
    if scales.size == 1:
        return [float(np.float32(input_scale) * scales[0]) / float(output_scale)]
    return [float(np.float32(input_scale)) * float(s) / float(np.float32(output_scale))
            for s in scales]


def float64_requant(reals) -> Float64Requant:
    return Float64Requant(np.asarray(reals, np.float64))


def fp32_requant(scales32) -> Fp32Requant:
    return Fp32Requant(np.asarray(scales32, np.float32))
