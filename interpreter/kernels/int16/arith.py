"""16x8 ADD, SUB, MUL: int16 inputs and output (symmetric, zero point 0), broadcasting.

The int8 table trick of arithmetic.py does not scale to 65536 x 65536 pairs, so these
evaluate the integer formula on the operands (int64 arrays, numpy broadcasting).
XNNPACK takes no int16: both LiteRT kernel sets run TFLite's integer arithmetic.

* ADD / SUB, general scales (add.cc / sub.cc Prepare with pot_scale_int16 false, or any
  scale not a power of two): arithmetic.FixedAdd with 15 bits of headroom
  (data->left_shift = 15 for int16; reference_integer_ops::AddElementwise,
  reference_ops::SubElementwise and their broadcasting forms):

      T = 2 * max(s1, s2); a = MBQM(x1 * 2^15, s1 / T); b = MBQM(x2 * 2^15, s2 / T)
      out = clamp(MBQM(a +/- b, T / (2^15 * s_out)))

* ADD / SUB, power-of-two scales (pot_scale_int16 true, the option's default, and all
  three scales powers of two: CheckedLog2): reference_ops::Add / Sub16 on int16
  FixedPoint<int16, 0> values; one input may be at a finer scale than the output
  (shift_i = log2(s_i) - log2(s_out) <= 0, one of them 0):

      out = clamp(SaturatingAdd(RDBPOT(x1, -shift1), +/- RDBPOT(x2, -shift2)))

* MUL: reference_integer_ops::MulElementwise, as for int8 (arithmetic.FixedMul):
      out = clamp(MBQM(x1 * x2, float32(s1 * s2) / s_out))
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import quant_math as qm
from ..base import Kernel, OpContext, OutputSpec
from ..binary import same_type_pair
from ..common.requantize import QParams, activation_bounds, symmetric16

INT16_LEFT_SHIFT = 15  # add.cc / sub.cc: data->left_shift for int16


def checked_log2(scale: float) -> tuple[bool, int]:
    """CheckedLog2 (quantization_util): (is a power of two within 1e-3, rounded log2), in
    float32 like TFLite: log(x) * (1 / log(2)), std::round."""
    inv_log2 = np.float32(1.0) / np.float32(np.log(np.float32(2.0)))
    x_log2 = np.float32(np.log(np.float32(scale))) * inv_log2
    rounded = np.float32(qm.round_half_away(np.float64(x_log2)))
    return bool(abs(np.float32(x_log2 - rounded)) < np.float32(1e-3)), int(rounded)


@dataclass(frozen=True)
class PotAdd16:
    """reference_ops::Add (int16) / Sub16: saturating int16 FixedPoint add / subtract of
    the inputs brought to the output's power-of-two scale."""

    right1: int  # -shift1 >= 0
    right2: int
    sign: int  # -1 for SUB

    def __call__(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a = qm.rounding_divide_by_pot(a, self.right1) if self.right1 else a
        b = qm.rounding_divide_by_pot(b, self.right2) if self.right2 else b
        return np.clip(a + self.sign * b, -32768, 32767)  # SaturatingAdd on int16


@dataclass(frozen=True)
class Binary16Record:
    arithmetic: object  # FixedAdd | PotAdd16 | FixedMul | add_paths.Selected: (a, b) -> int64
    lo: int
    hi: int


def _pot_add(ctx: OpContext, op: str, q1: QParams, q2: QParams, out: QParams):
    """PotAdd16 when ADD / SUB take the power-of-two path, else None."""
    if not ctx.option("pot_scale_int16", True):
        return None
    logs = [checked_log2(q.scale) for q in (q1, q2, out)]
    if not all(pot for pot, _ in logs):
        return None
    if ctx.input(0).shape != ctx.input(1).shape:
        # reference_ops::Add (int16) / Sub16 walk MatchingElementsSize values of each input.
        raise ctx.unsupported(f"power-of-two int16 {op} does not broadcast (input shapes "
                              f"{list(ctx.input(0).shape)} and {list(ctx.input(1).shape)}); "
                              "set pot_scale_int16 false for the general kernel")
    shift1, shift2 = logs[0][1] - logs[2][1], logs[1][1] - logs[2][1]
    if shift1 > 0 or shift2 > 0 or (shift1 != 0 and shift2 != 0):
        raise ctx.unsupported(
            f"power-of-two int16 {op}: input scales 2^{logs[0][1]} and 2^{logs[1][1]} with "
            f"output scale 2^{logs[2][1]} (TFLite needs one input at the output's scale and "
            "the other no coarser)")
    return PotAdd16(-shift1, -shift2, -1 if op == "SUB" else 1)


def make_prepare16(op: str, general_arithmetic):
    """prepare() of the 16x8 ``op``; ``general_arithmetic(ctx, q1, q2, out)`` builds the
    general-scale formula (arithmetic.py's, with 15 bits of headroom for ADD / SUB)."""

    def prepare(ctx: OpContext):
        x1, x2, shape = same_type_pair(ctx, (np.int16,))
        q1, q2, out = symmetric16(ctx, (x1, "first input"), (x2, "second input"),
                                  (ctx.outputs[0], "output"))
        arithmetic = _pot_add(ctx, op, q1, q2, out) if op != "MUL" else None
        if arithmetic is None:
            arithmetic = general_arithmetic(ctx, q1, q2, out)
        lo, hi = activation_bounds(ctx, out, np.int16, xnnpack=False)
        return (OutputSpec(shape, np.dtype(np.int16)),), Binary16Record(arithmetic, lo, hi)

    return prepare


def eval16(rec: Binary16Record, inputs, outputs) -> None:
    values = rec.arithmetic(inputs[0].astype(np.int64), inputs[1].astype(np.int64))
    np.clip(values, rec.lo, rec.hi, out=values)
    np.copyto(outputs[0], np.broadcast_to(values, outputs[0].shape), casting="unsafe")


def kernel16(op: str, general_arithmetic) -> Kernel:
    return Kernel(make_prepare16(op, general_arithmetic), eval16)
