"""QUANTIZE: float32 -> int8 / uint8 / int16, and requantization between int8 / uint8 /
int16.

Matches tensorflow/lite/kernels/quantize.cc:

* float32 -> q, per-tensor output
  - REFERENCE: reference_ops::AffineQuantize (reference/quantize.h):
        q = clamp(round_half_away(x / s) + z)            (float32 division)
    where x / s beyond int32 (and NaN) converts to INT32_MIN as on x86.
  - DEFAULT, int8 / uint8: the XNNPACK delegate's f32 -> qs8 / qu8 convert
    (xnn_init_f32_qs8_cvt_scalar_params: scale = 1 / s in float32):
        q = clamp(rint(x * (1 / s)) + z)                  (float32 product, half to even)
    where NaN gives the type's maximum (minps(NaN, max) is max).
  - DEFAULT, int16 (XNNPACK converts no int16), and int8 / uint8 outputs with another
    quantized_dimension than 0 (the delegate's CheckTensorQInt8OrQUInt8Type refuses them
    even with a single scale): optimized_ops::AffineQuantize (optimized_ops.h). On x86 its
    NEON loop runs through NEON_2_SSE over the first n - n % 8 values:
        q = clamp(wrap32(cvtps(x * float32(1 / double(s))) + z))
    (float32 product, half to even; out of range and NaN convert to INT32_MIN, and
    vaddq_s32 wraps), and its scalar loop over the last n % 8:
        q = clamp(wrap32(int32(round_half_away(double(x) / double(s))) + z))
    -- see eval_optimized.
* float32 -> q, per-channel output (one scale and zero point per slice along
  quantized_dimension; TF's float conversion of a QAT graph quantizes its weights this
  way): reference_ops::PerChannelQuantize in both kernel sets (quantize.cc calls it
  whatever the kernel type; XNNPACK takes per-tensor outputs only):
        q = clamp(round_half_away(x / s[c]) + z[c])       (float32 division)
  i.e. AffineQuantize with the parameters broadcast along the channel dimension.
* q -> q' (any mix of int8 / uint8)
  - REFERENCE: reference_ops::Requantize with
    (m, shift) = QuantizeMultiplier(double(s_in) / double(s_out)):
        q' = clamp(MBQM(q - z_in, m, shift) + z_out)
  - DEFAULT: XNNPACK's qs8 / qu8 convert where the delegate takes it, else TFLite's
    optimized Requantize (eval_block_lut).
  Requantization maps 256 values to 256 values, so it runs as a lookup table.
* q -> q' with int16 on either side: reference_ops::Requantize (MBQM as above) in both
  kernel sets; an int16 input is looked up in a 65536-entry table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .common import native_ops
from .. import quant_math as qm
from edgelite.names import quoted
from .base import Chosen, Kernel, OpContext, OutputSpec, run_chosen, temporary
from .common.fused import clamp_inplace
from .opdef import OpDef
from .common.requantize import (QUANTIZED, LutRecord, apply_lut, channel_params, lut_kernel,
                                make_lut, qparams)
from .versions import OpSignature, T

ALL_INT16 = np.arange(-32768, 32768, dtype=np.int64)


@dataclass(frozen=True, kw_only=True)
class QuantizeRecord:
    """float32 -> q: the output's parameters and the type's range."""

    scale: np.float32 | np.ndarray  # REFERENCE: s (float32 [.., C, ..] per channel);
    #                                 DEFAULT: float32(1 / s)
    zero_point: int | np.ndarray  # int64 [.., C, ..] per channel
    lo: int
    hi: int


@dataclass(frozen=True, kw_only=True)
class XnnQuantizeRecord(QuantizeRecord):
    work: np.ndarray  # float32 scratch shaped like the input


@dataclass(frozen=True)
class BlockLutRecord:
    head: np.ndarray  # table for the first ``split`` values (the vectorized loop)
    tail: np.ndarray  # table for the rest (the scalar loop)
    split: int


NEON_BLOCK = 16  # optimized_ops::Requantize handles 16 values per NEON iteration


def _xnn_cvt_multiplier(s_in: float, s_out: float) -> int | None:
    """xnn_init_qs8_cvt_scalar_params: rint(256 * s_in / s_out), or None where XNNPACK
    refuses the ratio (outside [2^-8, 2^7]) and the op stays with TFLite."""
    ratio = np.float32(s_in) / np.float32(s_out)
    if not 2.0**-8 <= ratio <= 2.0**7:
        return None
    return int(np.rint(np.float32(256.0) * ratio))


def prepare(ctx: OpContext):
    ctx.check_arity(1, 1)
    x, y = ctx.input(0), ctx.outputs[0]
    ctx.require_dtype(x, (np.float32,) + QUANTIZED + (np.int16,), "input")
    if y.dtype.type not in QUANTIZED + (np.int16,):
        raise ctx.unsupported(f"output {quoted(y.name)} is {y.dtype.name}; int8, uint8 and "
                              "int16 only")
    spec = (OutputSpec(x.shape, y.dtype),)
    info = np.iinfo(y.dtype)
    if y.quantization is not None and len(y.quantization.scale) > 1:
        if x.dtype != np.float32:
            raise ctx.unsupported(f"per-channel output quantization of {quoted(y.name)} "
                                  "from a quantized input (TFLite requantizes per tensor)")
        return spec, Chosen(eval_reference, per_channel_record(ctx, x, y))
    out = qparams(ctx, y, "output")
    if x.dtype == np.float32:
        bounds = dict(zero_point=out.zero_point, lo=int(info.min), hi=int(info.max))
        native = (out.zero_point, int(info.min), int(info.max))  # native_ops' bounds
        if ctx.quant.reference:
            return spec, native_ops.quantize(ctx, native_ops.Q_REFERENCE, out.scale, native) \
                or Chosen(eval_reference, QuantizeRecord(scale=np.float32(out.scale), **bounds))
        if y.dtype == np.int16 or not _xnn_takes(y):  # TFLite's optimized kernel
            rec = optimized_record(x, out, bounds)
            return spec, native_ops.quantize(ctx, native_ops.Q_OPTIMIZED, rec.inverse, native,
                                             rec.scale, rec.split) \
                or Chosen(eval_optimized, rec)
        scale = np.float32(1.0) / np.float32(out.scale)
        return spec, native_ops.quantize(ctx, native_ops.Q_XNN, scale, native) or Chosen(
            eval_xnn, XnnQuantizeRecord(scale=scale, work=temporary(ctx, x.shape, np.float32),
                                        **bounds))
    xq = qparams(ctx, x, "input")
    m, shift = qm.quantize_multiplier(xq.scale / out.scale, ctx.quant.rounding)
    rounding = ctx.quant.rounding

    def scalar(q):  # reference_ops::Requantize, and the optimized kernel's scalar tail
        return qm.multiply_by_quantized_multiplier(q - xq.zero_point, m, shift,
                                                   rounding) + out.zero_point

    if np.int16 in (x.dtype, y.dtype):  # TFLite's Requantize, both kernel sets
        return spec, requantize16(x.dtype, scalar, y.dtype)
    lut = make_lut(x.dtype, scalar, y.dtype)
    if ctx.quant.reference:
        return spec, lut_kernel(ctx, lut)
    xnn = _xnn_cvt_multiplier(xq.scale, out.scale) \
        if x.dtype == y.dtype and _xnn_takes(x) and _xnn_takes(y) else None
    if xnn is not None:
        # XNNPACK qs8 / qu8 convert: ((q - z_in) * m + 128) >> 8, then + z_out.
        return spec, lut_kernel(ctx, make_lut(
            x.dtype, lambda q: (((q - xq.zero_point) * xnn + 128) >> 8) + out.zero_point,
            y.dtype))
    # TFLite's optimized Requantize: NEON rounding on whole blocks of 16, scalar tail.
    # (In a single-rounding build the NEON path rounds like the scalar one.)
    if rounding is qm.Rounding.SINGLE:
        return spec, lut_kernel(ctx, lut)
    vector = make_lut(x.dtype, lambda q: qm.multiply_by_quantized_multiplier_neon(
        q - xq.zero_point, m, shift) + out.zero_point, y.dtype)
    size = 1
    for d in x.shape:
        size *= d
    split = size - size % NEON_BLOCK
    return spec, (native_ops.lut(ctx, vector, lut, split)  # the same two lookups in C
                  or Chosen(eval_block_lut, BlockLutRecord(vector, lut, split)))


def per_channel_record(ctx: OpContext, x, y) -> QuantizeRecord:
    """reference_ops::PerChannelQuantize's parameters, shaped to broadcast along
    ``quantized_dimension``."""
    axis = y.quantization.quantized_dimension
    if not 0 <= axis < x.rank:
        raise ctx.shape_error(f"output {quoted(y.name)} is quantized along dimension {axis} "
                              f"of shape {list(x.shape)}")
    scales, zps = channel_params(ctx, y, "output", x.shape[axis], axis)
    bshape = [1] * x.rank
    bshape[axis] = len(scales)
    info = np.iinfo(y.dtype)
    return QuantizeRecord(scale=scales.reshape(bshape), zero_point=zps.reshape(bshape),
                          lo=int(info.min), hi=int(info.max))


def _xnn_takes(t) -> bool:
    """The XNNPACK delegate quantizes only along dimension 0 (CheckTensorQInt8OrQUInt8Type
    refuses any other quantized_dimension, even with a single scale)."""
    return t.quantization is None or t.quantization.quantized_dimension == 0


@dataclass(frozen=True, kw_only=True)
class OptimizedRecord:
    inverse: np.float32  # float32(1.0f / double(s)): the NEON loop's multiplier
    scale: np.float64  # double(s): the scalar loop's divisor
    zero_point: int
    lo: int
    hi: int
    split: int  # n - n % 8: values the NEON loop converts


OPT_BLOCK = 8  # optimized_ops::AffineQuantize converts 8 values per NEON iteration


def optimized_record(x, out, bounds) -> OptimizedRecord:
    size = 1
    for d in x.shape:
        size *= d
    return OptimizedRecord(inverse=np.float32(1.0 / np.float64(np.float32(out.scale))),
                           scale=np.float64(np.float32(out.scale)),
                           split=size - size % OPT_BLOCK, **bounds)


def _to_int32_x86(r: np.ndarray) -> np.ndarray:
    """An integral float array as int64 holding the int32 that x86's conversions give:
    out of range and NaN become INT32_MIN (cvtps2dq / cvttsd2si)."""
    bad = ~(np.abs(r) < 2.0**31)
    return np.where(bad, qm.INT32_MIN, np.where(bad, 0, r)).astype(np.int64)


def eval_optimized(rec: OptimizedRecord, inputs, outputs) -> None:
    x, k = inputs[0].reshape(-1), rec.split
    with np.errstate(over="ignore", invalid="ignore"):
        # NEON loop (vmulq_f32, RoundToNearest = vcvtnq_s32_f32: half to even).
        head = _to_int32_x86(np.rint(x[:k] * rec.inverse))
        # Scalar loop: static_cast<int32>(TfLiteRound(val / scale)) with a double scale.
        tail = _to_int32_x86(qm.round_half_away(x[k:].astype(np.float64) / rec.scale))
    q = qm.wrap_int32(np.concatenate((head, tail)) + rec.zero_point)
    np.clip(q, rec.lo, rec.hi, out=q)
    np.copyto(outputs[0], q.reshape(outputs[0].shape), casting="unsafe")


def requantize16(x_dtype, values, y_dtype) -> Chosen:
    """q -> q' with int16 on either side: reference_ops::Requantize (MBQM) in both kernel
    sets, as a table over every input value (65536 entries for an int16 input)."""
    if x_dtype != np.int16:
        return Chosen(apply_lut, LutRecord(make_lut(x_dtype, values, y_dtype)))
    info = np.iinfo(y_dtype)
    table = np.clip(values(ALL_INT16), info.min, info.max).astype(y_dtype)
    return Chosen(eval_table16, Table16Record(table))


@dataclass(frozen=True)
class Table16Record:
    table: np.ndarray  # (65536,) output per int16 input, indexed by x + 32768


def eval_table16(rec: Table16Record, inputs, outputs) -> None:
    np.take(rec.table, inputs[0].astype(np.int64) + 32768, out=outputs[0])


def eval_xnn(rec: XnnQuantizeRecord, inputs, outputs) -> None:
    # XNNPACK clamps in float before converting: overflow saturates, and NaN gives the
    # maximum (x86's minps(NaN, max) returns max).
    # Clipping to [lo - z, hi - z] before adding z equals clipping after (integral
    # bounds), so it all stays in place in float32.
    f = rec.work
    # (overflow and NaN without warnings: runloop.quiet is on around every run)
    np.multiply(inputs[0], rec.scale, out=f)
    np.rint(f, out=f)
    if np.isnan(np.add.reduce(f, axis=None)):  # one cheap pass; NaN is rare
        np.nan_to_num(f, copy=False, nan=rec.hi - rec.zero_point)
    clamp_inplace(f, np.float32(rec.lo - rec.zero_point), np.float32(rec.hi - rec.zero_point))
    np.add(f, rec.zero_point, out=outputs[0], casting="unsafe")


def eval_reference(rec: QuantizeRecord, inputs, outputs) -> None:
    # static_cast<int32_t>(TfLiteRound(x / s)) + z: out-of-range and NaN values convert
    # to INT32_MIN on x86 (cvttss2si), and the int32 sum wraps.
    q = _to_int32_x86(qm.round_half_away(inputs[0] / rec.scale))
    q = np.asarray(qm.wrap_int32(q + rec.zero_point))  # (a 0-d input gives a scalar)
    np.clip(q, rec.lo, rec.hi, out=q)
    np.copyto(outputs[0], q, casting="unsafe")


def eval_block_lut(rec: BlockLutRecord, inputs, outputs) -> None:
    x, out = inputs[0].reshape(-1).view(np.uint8), outputs[0].reshape(-1)
    np.take(rec.head, x[:rec.split], out=out[:rec.split])
    np.take(rec.tail, x[rec.split:], out=out[rec.split:])


def version(sig: OpSignature) -> int:
    """op_version.cc, QUANTIZE: uint4 on either side 5; int4 on either side 4; a per-axis
    output (several scales along its quantized dimension) 3; int16 output 2."""
    x, out = sig.input(0), sig.output(0)
    for v, t in ((5, T.UINT4), (4, T.INT4)):
        if t in (x.type, out.type):
            return v
    if out.per_axis:
        return 3
    return 2 if out.type == T.INT16 else 1


OPS = (
    # One kernel for every input: float32 -> q and q -> q (no float path to choose).
    OpDef("QUANTIZE", boundary=True,
          float=Kernel(prepare, run_chosen), per_sample=True, version=version),
)
