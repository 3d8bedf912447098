"""16x8 SOFTMAX (int16 in and out, zero point 0, output scale 2^-15): reference_ops::
SoftmaxInt16 (internal/reference/softmax.h) with the tables of activations.cc
SoftmaxPrepare -- both LiteRT kernel sets run it. Per row of the last axis:

    d = x - max(row)                                   (int32, in [-65535, 0])
    z = MBQM(d, M),  M = float32(s_in * beta) / (10 / 65535)   (d = -65535 -> -10.0)
    e = LUTLookup(clamp(z + 32767, int16), exp_lut)   (exp on [-10, 0], Q0.15)
    S = sum(e)                                         (Q16.15)
    h = CountLeadingZeros(S)
    t = ((S << (h - 1)) + 2^13) >> 14                  (S normalised to [1, 2), Q1.15)
    r = LUTLookup(clamp(t - 2^15 - 2^16, int16), one_over_one_plus_x_lut)   (1 / t)
    out = clamp((e * r + 2^(30 - h)) >> (31 - h), 0, 32767)

The 513-entry tables come from LUTPopulate<int16_t> in double (common.h, LUTPopulateInt16:
512 samples, each biased by half the interpolation error at its midpoint, and the end
point); LUTLookup interpolates between entries with the low 7 bits of the index.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ... import libm
from ... import quant_math as qm
from ..base import Kernel, OpContext, OutputSpec, num_elements
from ..common.lut import cfloat, populate_int16
from ..common.requantize import QParams, symmetric16

RANGE = 65535  # int16 max - min


def lut_populate_int16(input_scale: float, input_zero_point: int, output_scale: float,
                       transform) -> np.ndarray:
    """detail::LUTPopulateInt16<double> (internal/common.h), output zero point 0."""
    input_min = input_scale * (-32768 - input_zero_point)
    input_max = input_scale * (32767 - input_zero_point)
    output_min, output_max = output_scale * -32768, output_scale * 32767
    steps = 512
    step = (input_max - input_min) / steps
    half_step = step / 2
    inv = 65536.0 / (output_max - output_min)
    i = np.arange(steps, dtype=np.float64)
    val = transform(input_min + i * step)
    val_mid = transform(input_min + i * step + half_step)
    val_next = transform(input_min + (i + 1) * step)
    rnd = qm.round_half_away
    sample = rnd(val * inv)
    midpoint_interp = rnd((val_next * inv + rnd(val * inv)) / 2)
    midpoint_err = midpoint_interp - rnd(val_mid * inv)
    bias = rnd(midpoint_err / 2)
    lut = np.empty(steps + 1, np.int64)
    lut[:steps] = np.clip(sample - bias, -32768, 32767)
    lut[steps] = np.clip(rnd(transform(np.float64(input_max)) * inv), -32768, 32767)
    return lut


@functools.lru_cache(maxsize=1)
def softmax_luts() -> tuple[np.ndarray, np.ndarray]:
    """(exp_lut over [-10, 0], one_over_one_plus_x_lut over [0, 1]) of SoftmaxPrepare."""
    exp_lut = lut_populate_int16(10.0 / RANGE, 32767, 2.0 / RANGE, libm.exp)
    recip_lut = lut_populate_int16(1.0 / RANGE, -32768, 2.0 / RANGE, lambda v: 1.0 / (1.0 + v))
    return exp_lut, recip_lut


@functools.lru_cache(maxsize=1)
def micro_softmax_luts() -> tuple[np.ndarray, np.ndarray]:
    """TFLM's tables (micro/kernels/softmax_common.cc CalculateSoftmaxParams): the same two
    functions through LUTPopulate<int16_t> with float callbacks, i.e. LUTPopulateInt16<float>
    -- every step in float32, exp as expf -- where LiteRT's SoftmaxPrepare populates in
    double (1 LSB apart on a few outputs)."""
    f32, span = np.float32, np.float32(RANGE)
    expf = cfloat("expf")
    exp_lut = populate_int16(QParams(float(f32(10.0) / span), 32767),
                             QParams(float(f32(2.0) / span), 0), expf)
    recip_lut = populate_int16(QParams(float(f32(1.0) / span), -32768),
                               QParams(float(f32(2.0) / span), 0),
                               lambda v: f32(1.0) / (f32(1.0) + v))
    return exp_lut, recip_lut


def lut_lookup(value: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """LUTLookup (int16 -> int16 with interpolation), on int64 arrays of int16 values."""
    index = 256 + (value >> 7)
    offset = value & 0x7F
    base = lut[index]
    slope = ((lut[index + 1] - base + 32768) & 0xFFFF) - 32768  # int16_t difference
    delta = (slope * offset + 64) >> 7
    return ((base + delta + 32768) & 0xFFFF) - 32768  # static_cast<int16_t>


@dataclass(frozen=True)
class Softmax16Record:
    rows: int
    depth: int
    multiplier: int
    shift: int
    rounding: qm.Rounding
    luts: tuple[np.ndarray, np.ndarray]  # (exp, 1 / (1 + x)): softmax_luts or micro's


def prepare_softmax16(ctx: OpContext, beta: np.float32):
    ctx.check_arity(1, 1)
    x, y = ctx.input(0), ctx.outputs[0]
    xq, out = symmetric16(ctx, (x, "input"), (y, "output"))
    if x.rank < 1 or x.shape[-1] == 0:
        raise ctx.shape_error(f"needs a non-empty last dimension, input is {list(x.shape)}")
    # TF_LITE_ENSURE_NEAR(output scale, 1 / 32768, 0.001 / 32768)
    if abs(np.float32(out.scale) - np.float32(1 / 32768)) > np.float32(0.001 / 32768):
        raise ctx.unsupported(f"int16 SOFTMAX needs output scale 2^-15, the file gives "
                              f"{out.scale}")
    real = float(np.float32(np.float32(xq.scale) * beta)) / (10.0 / 65535.0)
    m, shift = qm.quantize_multiplier(real, ctx.quant.rounding)
    luts = micro_softmax_luts() if ctx.quant.micro else softmax_luts()
    record = Softmax16Record(num_elements(x.shape[:-1]), x.shape[-1], m, shift,
                             ctx.quant.rounding, luts)
    return (OutputSpec(x.shape, np.dtype(np.int16)),), record


def eval_softmax16(rec: Softmax16Record, inputs, outputs) -> None:
    exp_lut, recip_lut = rec.luts
    x = inputs[0].reshape(rec.rows, rec.depth).astype(np.int64)
    diff = x - x.max(axis=1, keepdims=True)
    scaled = qm.multiply_by_quantized_multiplier(diff, rec.multiplier, rec.shift, rec.rounding)
    e = lut_lookup(np.clip(scaled + 32767, -32768, 32767), exp_lut)
    total = e.sum(axis=1, keepdims=True)  # Q16.15, > 0
    headroom = 32 - np.frexp(total.astype(np.float64))[1]  # CountLeadingZeros(uint32)
    shifted = ((total << (headroom - 1)) + (1 << 13)) >> 14
    r = lut_lookup(np.clip(shifted - (1 << 15) - (1 << 16), -32768, 32767), recip_lut)
    right = 31 - headroom
    result = (e * r + (np.int64(1) << (right - 1))) >> right
    np.copyto(outputs[0], np.clip(result, 0, 32767).reshape(outputs[0].shape), casting="unsafe")


def softmax16(beta_of) -> Kernel:
    """The 16x8 SOFTMAX kernel; ``beta_of(ctx)`` reads (and checks) beta."""
    return Kernel(lambda ctx: prepare_softmax16(ctx, beta_of(ctx)), eval_softmax16)
