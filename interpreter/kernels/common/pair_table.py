"""Quantized elementwise ops on two 8-bit inputs as a 65536-entry table: DIV,
SQUARED_DIFFERENCE and PRELU (int8 / uint8); DIV also takes int16 (16x8), computed per
invoke with the same arithmetic.

Each output value depends only on the pair of input values, so prepare() runs LiteRT's
integer arithmetic once on all 256 x 256 pairs and eval() looks every element up at
``a_bits * 256 + b_bits`` (the inputs' bits read as uint8, broadcast against each other
as numpy broadcasts). Both LiteRT kernel sets compute these alike (measured: XNNPACK
takes none of the three quantized, not even PRELU with a constant alpha).

DIV (div.cc with reference_ops::Div / optimized_ops::Div, which agree):

    M, shift = QuantizeMultiplier(s_a / (s_b * s_out))     float32 products
    x = q_a - z_a, y = q_b - z_b;  y < 0 -> x = -x, y = -y
    inv, bits = GetReciprocal(y, 31)                       1/y in Q0.31, y's bits over one
    h = CountLeadingSignBits(x)
    u = MBQMGreaterThanOne(x, inv, h)                      SRDHM(x << h, inv)
    out = clamp(RoundingDivideByPOT(SRDHM(u, M), -(shift - bits - h)) + z_out)

For tiny |x| the final exponent exceeds 31, where gemmlowp's RoundingDivideByPOT is not
defined in C++; on x86 (what LiteRT runs) the mask is ``int32(2^(e mod 64) - 1)`` and the
shift is ``e mod 32`` -- reproduced, so x = 0 gives z_out + 1 as LiteRT does. A divisor
equal to its zero point (a real 0) fails the invoke, as in div.cc.

SQUARED_DIFFERENCE (squared_difference.cc, int8 only), with t = 2 * max(s_a, s_b):

    M_a = QuantizeMultiplierSmallerThanOneExp(s_a / t), M_b likewise
    M_out = QuantizeMultiplierSmallerThanOneExp(t * t / (2^14 * s_out))
    d = MBQM((q_a - z_a) * 2^7, M_a) - MBQM((q_b - z_b) * 2^7, M_b)
    out = clamp(MBQM(d * d, M_out) + z_out)

PRELU (activations.cc PreluEval, reference_ops::BroadcastPrelu4DSlow), with alpha the
second input:

    x = q - z_in
    out = clamp(z_out + (x >= 0 ? MBQM(x, M_1) : MBQM(x * (q_alpha - z_alpha), M_2)))
    M_1 = QuantizeMultiplier(s_in / s_out), M_2 = QuantizeMultiplier(s_in * s_alpha / s_out)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ... import quant_math as qm
from edgelite.errors import EdgeliteError
from ..base import Chosen, Kernel, OpContext, OutputSpec, run_chosen, scratch
from .requantize import QUANTIZED, QParams, activation_bounds, qparams
from ..softmax import get_reciprocal

PairFn = Callable[[np.ndarray, np.ndarray], np.ndarray]  # (q_a, q_b) int64 -> int64


@dataclass(frozen=True)
class PairTableRecord:
    table: np.ndarray  # (65536,) in the output dtype: table[a_bits * 256 + b_bits]
    index: np.ndarray  # intp scratch of the output's shape
    zero_divisor: int | None = None  # DIV: this value of the second input fails the invoke
    where: str = ""  # the op, for that error


def pair_table(dtype, values: PairFn, lo: int, hi: int) -> np.ndarray:
    """values(q_a, q_b) over every pair of ``dtype`` values, clamped to [lo, hi], laid
    out by the inputs' bits."""
    info = np.iinfo(dtype)
    q = np.arange(info.min, info.max + 1, dtype=np.int64)
    grid = np.clip(values(q[:, None], q[None, :]), lo, hi).astype(dtype)
    bits = q.astype(dtype).view(np.uint8).astype(np.intp)
    table = np.empty(65536, dtype)
    table[(bits[:, None] * 256 + bits[None, :]).reshape(-1)] = grid.reshape(-1)
    return table


def eval_pair_table(rec: PairTableRecord, inputs, outputs) -> None:
    a, b = inputs
    if rec.zero_divisor is not None and (b == rec.zero_divisor).any():
        raise EdgeliteError(f"{rec.where}: division by zero (the divisor holds its zero "
                            f"point {rec.zero_divisor})")
    np.multiply(a.view(np.uint8), 256, out=rec.index, dtype=np.intp)
    np.add(rec.index, b.view(np.uint8), out=rec.index)
    rec.table.take(rec.index, out=outputs[0])


@dataclass(frozen=True)
class DirectRecord:
    """An int16 binary op computed per invoke (its pairs are too many for a table)."""

    values: PairFn
    lo: int
    hi: int
    zero_divisor: int | None
    where: str


def eval_direct(rec: DirectRecord, inputs, outputs) -> None:
    a, b = inputs
    if rec.zero_divisor is not None and (b == rec.zero_divisor).any():
        raise EdgeliteError(f"{rec.where}: division by zero (the divisor holds its zero "
                            f"point {rec.zero_divisor})")
    v = rec.values(a.astype(np.int64), b.astype(np.int64))
    np.copyto(outputs[0], np.clip(v, rec.lo, rec.hi), casting="unsafe")


def quantized_pair_kernel(values_for: Callable, dtypes: tuple = QUANTIZED,
                          divides: bool = False) -> Kernel:
    """Kernel of a binary op whose quantized arithmetic is
    ``values_for(ctx, a_params, b_params, out_params, dtype) -> (PairFn, lo, hi)``: a
    table for 8-bit inputs, the arithmetic per invoke for int16 ones (the record is a
    Chosen); ``divides``: the second input's zero point fails the invoke."""
    def prepare(ctx: OpContext):
        ctx.check_arity(2, 2)
        a, b, out = ctx.input(0), ctx.input(1), ctx.outputs[0]
        ctx.require_dtype(a, dtypes, "first input")
        for t in (b, out):
            if t.dtype != a.dtype:
                raise ctx.dtype_error(f"inputs and output must share one type ({a.dtype.name}), "
                                      f"not {t.dtype.name}")
        try:
            shape = tuple(np.broadcast_shapes(a.shape, b.shape))
        except ValueError:
            raise ctx.shape_error(
                f"input shapes {list(a.shape)} and {list(b.shape)} do not broadcast") from None
        params = [qparams(ctx, t, role) for t, role in ((a, "first input"),
                                                        (b, "second input"), (out, "output"))]
        fn, lo, hi = values_for(ctx, *params, a.dtype)
        zero_divisor = params[1].zero_point if divides else None
        if a.dtype == np.int16:
            record = DirectRecord(fn, lo, hi, zero_divisor, ctx.describe())
            return (OutputSpec(shape, a.dtype),), Chosen(eval_direct, record)
        table = pair_table(a.dtype, fn, lo, hi)
        record = PairTableRecord(table, scratch(ctx, shape, np.intp), zero_divisor,
                                 ctx.describe())
        return (OutputSpec(shape, a.dtype),), Chosen(eval_pair_table, record)

    return Kernel(prepare, run_chosen)


# --------------------------------------------------------------------------- DIV


def _clz32(x: np.ndarray) -> np.ndarray:
    """CountLeadingZeros of non-negative int32 values (32 for 0)."""
    return 32 - np.frexp(np.asarray(x, np.float64))[1].astype(np.int64)


def count_leading_sign_bits(x: np.ndarray) -> np.ndarray:
    """TFLite CountLeadingSignBits of int32 values (x > INT32_MIN)."""
    x = np.asarray(x, np.int64)
    return np.where(x >= 0, _clz32(x) - 1, _clz32(2 * -x - 1))


def rounding_divide_by_pot_x86(x: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """gemmlowp RoundingDivideByPOT on int32 as x86 runs it for any exponent >= 0: the
    mask is int32(2^(e mod 64) - 1) (1ll << e, narrowed), the shift e mod 32 (SAR).
    Equal to qm.rounding_divide_by_pot for e <= 31."""
    x = np.asarray(x, np.int64)
    e = np.asarray(exponent, np.int64)
    mask = qm.wrap_int32(np.left_shift(np.int64(1), e & 63) - 1)
    threshold = np.right_shift(mask, 1) + (x < 0)
    return np.right_shift(x, e & 31) + (np.bitwise_and(x, mask) > threshold)


def div_values(ctx: OpContext, a: QParams, b: QParams, out: QParams, dtype):
    rounding = ctx.quant.rounding
    real = np.float32(a.scale) / np.float32(np.float32(b.scale) * np.float32(out.scale))
    m, shift = qm.quantize_multiplier(float(real), rounding)
    lo, hi = activation_bounds(ctx, out, dtype, xnnpack=False)
    info = np.iinfo(dtype)
    # the final exponent -(shift - bits - h) is smallest for the largest |x| (h least)
    # with y = 1 (bits 0); below 0 gemmlowp would shift by a negative amount
    widest = max(info.max - a.zero_point, a.zero_point - info.min)
    if shift - int(count_leading_sign_bits(np.int64(widest))) > 0:
        raise ctx.unsupported(f"the scales give a rescaling factor {float(real)} too large "
                              "for TFLite's quantized DIV")

    def values(qa, qb):
        x, y = np.broadcast_arrays(qa - a.zero_point, qb - b.zero_point)
        x = np.where(y < 0, -x, x)
        y = np.abs(y)
        inverse, bits = get_reciprocal(y, 31)
        headroom = count_leading_sign_bits(x)
        unscaled = qm.saturating_rounding_doubling_high_mul(qm.wrap_int32(x << headroom), inverse)
        exponent = -(shift - bits - headroom)
        scaled = qm.saturating_rounding_doubling_high_mul(unscaled, m)
        return rounding_divide_by_pot_x86(scaled, exponent) + out.zero_point

    return values, lo, hi


# --------------------------------------------------------------------------- SQUARED_DIFFERENCE

SQUARED_DIFFERENCE_LEFT_SHIFT = 7


def squared_difference_values(ctx: OpContext, a: QParams, b: QParams, out: QParams, dtype):
    rounding = ctx.quant.rounding
    twice_max = 2.0 * max(a.scale, b.scale)
    m_a = qm.quantize_multiplier_smaller_than_one_exp(a.scale / twice_max, rounding)
    m_b = qm.quantize_multiplier_smaller_than_one_exp(b.scale / twice_max, rounding)
    real_out = twice_max * twice_max / ((1 << 2 * SQUARED_DIFFERENCE_LEFT_SHIFT) * out.scale)
    if real_out >= 1.0:
        raise ctx.unsupported(f"output scale {out.scale} is too small for input scales "
                              f"{a.scale} and {b.scale} (TFLite needs (2 max(s_a, s_b))^2 < "
                              "2^14 s_out)")
    m_out = qm.quantize_multiplier_smaller_than_one_exp(real_out, rounding)
    info = np.iinfo(dtype)

    def values(qa, qb):
        shift = 1 << SQUARED_DIFFERENCE_LEFT_SHIFT
        da = qm.multiply_by_quantized_multiplier((qa - a.zero_point) * shift, *m_a, rounding)
        db = qm.multiply_by_quantized_multiplier((qb - b.zero_point) * shift, *m_b, rounding)
        d = da - db
        return qm.multiply_by_quantized_multiplier(d * d, *m_out, rounding) + out.zero_point

    return values, int(info.min), int(info.max)


# --------------------------------------------------------------------------- PRELU


def prelu_values(ctx: OpContext, x: QParams, alpha: QParams, out: QParams, dtype):
    rounding = ctx.quant.rounding
    s_in, s_alpha, s_out = (np.float32(p.scale) for p in (x, alpha, out))
    m_1 = qm.quantize_multiplier(float(s_in / s_out), rounding)
    m_2 = qm.quantize_multiplier(float(np.float32(s_in * s_alpha) / s_out), rounding)
    info = np.iinfo(dtype)

    def values(qx, qa):
        d = qx - x.zero_point
        positive = qm.multiply_by_quantized_multiplier(d, *m_1, rounding)
        negative = qm.multiply_by_quantized_multiplier(d * (qa - alpha.zero_point), *m_2,
                                                       rounding)
        return np.where(d >= 0, positive, negative) + out.zero_point

    return values, int(info.min), int(info.max)
