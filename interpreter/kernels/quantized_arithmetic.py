"""ADD, SUB and MUL on int8 / uint8 tensors, with numpy broadcasting and a fused clamp.

REFERENCE (and TFLite's optimized kernels, which do the same arithmetic):

* ADD / SUB -- tensorflow/lite/kernels/add.cc, sub.cc (Prepare), reference_integer_ops::
  AddElementwise (tensorflow/lite/kernels/internal/reference/integer_ops/add.h) and
  reference_ops::SubElementwise (reference/sub.h). Both inputs are brought to a common
  scale 2 * max(s1, s2) with 20 bits of headroom, summed, and rescaled:

      left_shift = 20
      T = 2 * max(s1, s2)                      # double
      M1 = s1 / T, M2 = s2 / T                 # < 1: QuantizeMultiplierSmallerThanOneExp
      Mo = T / (2^20 * s_out)
      a = MBQM((x1 - z1) * 2^20, M1)           # r1 / T in units of 2^-20
      b = MBQM((x2 - z2) * 2^20, M2)
      out = clamp(MBQM(a +/- b, Mo) + z_out)

* MUL -- mul.cc / reference_integer_ops::MulElementwise:
      M = s1 * s2 / s_out                      # computed in float32, then QuantizeMultiplier
      out = clamp(MBQM((x1 - z1) * (x2 - z2), M) + z_out)

DEFAULT (the XNNPACK delegate takes all three):

* ADD / SUB -- xnn_init_qs8_add_minmax_scalar_params and the qs8/qu8 vadd micro-kernels:
  per-input float32 scales Ma = s1 / s_out, Mb = +/- s2 / s_out; with
  e = exponent of max(|Ma|, |Mb|) and shift = 20 - e, integer multipliers
  ma = rint(Ma * 2^shift), mb = rint(Mb * 2^shift) (21 bits), and

      out = ((x1 - z1) * ma + (x2 - z2) * mb + 2^(shift-1)) >> shift     (floor shift)
      out = clamp(out + z_out)

* MUL -- xnn_init_qs8_mul_minmax_scalar_params + vmul fp32 micro-kernels:
      out = clamp(rint(float32((x1 - z1) * (x2 - z2)) * float32(s1 * s2 / s_out)) + z_out)

  The fused activation clamp is XNNPACK's (requantize.activation_bounds). Scale
  ratios XNNPACK cannot represent (ADD / SUB: s_i / s_out outside [2^-10, 2^8); MUL:
  outside [2^-16, 2^8)) stay with TFLite, whose optimized kernels compute what the
  reference ones do (measured; results that overflow int32 may differ there).

Speed: the output depends on the two input values only, so prepare() evaluates the
arithmetic above once for all 256 x 256 pairs, and invoke() is a table lookup indexed
by (x1 << 8) | x2 (as bytes): three passes over the output whatever the kernel set.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import quant_math as qm
from .base import Kernel, OpContext, OutputSpec, temporary
from .requantize import QUANTIZED, activation_bounds, clamp_out, qparams, require_same_type

LEFT_SHIFT = 20  # add.cc: data->left_shift for int8 / uint8


@dataclass(frozen=True)
class QBinaryRecord:
    kind: str  # "add_fixed", "add_xnn", "mul_fixed", "mul_xnn"
    z1: int
    z2: int
    z_out: int
    params: tuple  # multipliers / shifts, by kind
    rounding: qm.Rounding
    lo: int
    hi: int


@dataclass(frozen=True)
class QBinaryTable:
    table: np.ndarray  # (65536,) output for input bytes (x1 << 8) | x2
    index: np.ndarray  # uint16 scratch with the output's shape


def _float32_bits_exponent(value: np.float32) -> int:
    """Unbiased binary exponent of a normal float32 (float_as_uint32(x) >> 23) - 127."""
    return int((np.float32(value).view(np.uint32) >> 23) & 0xFF) - 127


def _xnn_add_params(s1: float, s2: float, s_out: float, subtract: bool):
    """xnn_init_qs8_add_minmax_scalar_params (qu8 alike): (ma, mb, shift)."""
    a = np.float32(s1) / np.float32(s_out)
    b = np.float32(s2) / np.float32(s_out)
    if subtract:
        b = -b
    shift = 20 - _float32_bits_exponent(max(abs(a), abs(b)))  # in [12, 30]
    # |M| * 2^shift is exact in float32 (an exponent change); lrintf rounds half to even.
    ma = int(np.rint(np.float32(abs(a)) * np.float32(2.0**shift)))
    mb = int(np.rint(np.float32(abs(b)) * np.float32(2.0**shift)))
    return (-ma if a < 0 else ma), (-mb if b < 0 else mb), shift


def _make_prepare(op: str):
    def prepare(ctx: OpContext):
        ctx.check_arity(2, 2)
        x1, x2 = ctx.input(0), ctx.input(1)
        ctx.require_dtype(x1, QUANTIZED, "first input")
        require_same_type(ctx, x1, x2)
        require_same_type(ctx, x1, ctx.outputs[0])
        try:
            shape = np.broadcast_shapes(x1.shape, x2.shape)
        except ValueError:
            raise ctx.shape_error(
                f"input shapes {list(x1.shape)} and {list(x2.shape)} do not broadcast"
            ) from None
        q1, q2 = qparams(ctx, x1, "first input"), qparams(ctx, x2, "second input")
        out = qparams(ctx, ctx.outputs[0], "output")
        rounding = ctx.quant.rounding
        # The delegate refuses scale ratios XNNPACK cannot represent; TFLite runs those.
        if op == "MUL":
            ratio = np.float32(np.float32(q1.scale) * np.float32(q2.scale)) / np.float32(out.scale)
            xnn_ok = 2.0**-16 <= ratio < 2.0**8
        else:
            xnn_ok = all(2.0**-10 <= np.float32(s) / np.float32(out.scale) < 2.0**8
                         for s in (q1.scale, q2.scale))
        xnnpack = not ctx.quant.reference and xnn_ok
        lo, hi = activation_bounds(ctx, out, x1.dtype, xnnpack)
        if op == "MUL":
            if xnnpack:
                kind = "mul_xnn"
                params = (np.float32(np.float32(q1.scale) * np.float32(q2.scale))
                          / np.float32(out.scale),)
            else:
                kind = "mul_fixed"
                real = float(np.float32(np.float32(q1.scale) * np.float32(q2.scale))
                             / np.float32(out.scale))
                params = qm.quantize_multiplier(real, rounding)
        elif xnnpack:
            kind = "add_xnn"
            params = _xnn_add_params(q1.scale, q2.scale, out.scale, op == "SUB")
        else:
            kind = "add_fixed"
            twice_max = 2.0 * max(q1.scale, q2.scale)
            m1 = qm.quantize_multiplier_smaller_than_one_exp(q1.scale / twice_max, rounding)
            m2 = qm.quantize_multiplier_smaller_than_one_exp(q2.scale / twice_max, rounding)
            mo = qm.quantize_multiplier_smaller_than_one_exp(
                twice_max / ((1 << LEFT_SHIFT) * out.scale), rounding)
            params = (m1, m2, mo, -1 if op == "SUB" else 1)
        record = QBinaryRecord(kind, q1.zero_point, q2.zero_point, out.zero_point, params,
                               rounding, lo, hi)
        # Every (x1, x2) pair, as bytes: row u1, column u2.
        values = np.arange(256, dtype=np.uint8).view(x1.dtype)
        table = np.empty((256, 256), x1.dtype)
        compute(record, values[:, None], values[None, :], table)
        index = temporary(ctx, tuple(shape), np.uint16)
        return (OutputSpec(tuple(shape), x1.dtype),), QBinaryTable(table.reshape(-1), index)

    return prepare


def compute(rec: QBinaryRecord, x1: np.ndarray, x2: np.ndarray, out: np.ndarray) -> None:
    """The kernel set's arithmetic on arrays of values (int64), stored into ``out``."""
    a = x1.astype(np.int64) - rec.z1
    b = x2.astype(np.int64) - rec.z2
    if rec.kind == "add_fixed":
        (m1, s1), (m2, s2), (mo, so), sign = rec.params
        mbqm = qm.multiply_by_quantized_multiplier_smaller_than_one_exp
        a = mbqm(a << LEFT_SHIFT, m1, s1, rec.rounding)
        b = mbqm(b << LEFT_SHIFT, m2, s2, rec.rounding)
        values = mbqm(a + sign * b, mo, so, rec.rounding)
    elif rec.kind == "add_xnn":
        ma, mb, shift = rec.params
        values = (a * ma + b * mb + (1 << (shift - 1))) >> shift
    elif rec.kind == "mul_fixed":
        m, s = rec.params
        values = qm.multiply_by_quantized_multiplier(a * b, m, s, rec.rounding)
    else:  # mul_xnn
        values = np.rint((a * b).astype(np.float32) * rec.params[0]).astype(np.int64)
    values = np.broadcast_to(values, out.shape) + rec.z_out
    clamp_out(values, rec.lo, rec.hi, out)


def eval(rec: QBinaryTable, inputs, outputs) -> None:
    index = rec.index
    np.left_shift(inputs[0].view(np.uint8), 8, out=index, dtype=np.uint16)
    np.bitwise_or(index, inputs[1].view(np.uint8), out=index)
    rec.table.take(index, out=outputs[0])


ADD = Kernel(_make_prepare("ADD"), eval)
SUB = Kernel(_make_prepare("SUB"), eval)
MUL = Kernel(_make_prepare("MUL"), eval)
