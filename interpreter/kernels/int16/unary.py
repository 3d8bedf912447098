"""16x8 element-wise activations: int16 in and out, symmetric (zero point 0), as one
65536-entry table built in prepare() (every int16 input evaluated once with LiteRT's
arithmetic) and a lookup per invoke. XNNPACK takes no int16: the kernel sets differ
only where TFLite's own kernels do (LOGISTIC / TANH with power-of-two input scales).

* RELU / RELU6 / LEAKY_RELU -- activations.cc QuantizedReluX<int16_t> / QuantizeLeakyRelu
  (activations.py's formulas; RELU_N1_TO_1, RELU_0_TO_1 and HARD_SWISH have no int16
  kernel in LiteRT).
* LOGISTIC / TANH (activations.cc SigmoidPrepare / TanhPrepare; output scale 2^-15):
  with x the input, s its scale and CheckedLog2(s) = (pot, l):

  - REFERENCE, or a scale that is not 2^-12 (LOGISTIC) / 2^-12 or 2^-11 (TANH):
    reference_integer_ops::Logistic / Tanh (integer_ops/logistic.h, tanh.h): x rescaled
    to units of 1 / (3 * 4096) (``input_multiplier`` m, ``input_left_shift`` k: m =
    int(s * 3 * 4096 * 2^k) with k the first shift taking it above 16383.5; for the
    power-of-two scales m = 3 << k', k = 0), then linear interpolation in
    ``sigmoid_table_uint16`` (256 samples of sigmoid(i / 24) in Q0.16), mirrored for
    x < 0 (tanh via tanh(x) = 2 sigmoid(2x) - 1).
  - DEFAULT with those power-of-two scales: optimized_ops::Logistic / Tanh, gemmlowp's
    fixed-point logistic / tanh on FixedPoint<int16, 3> (fixed_point16.py; TANH with
    scale 2^-11 doubles x first, saturating).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..base import Kernel, OpContext, OutputSpec
from ..common.fixed_point16 import logistic_table, lookup, tanh_table
from ..common.requantize import QParams, symmetric16
from .arith import checked_log2

ALL_INT16 = np.arange(-32768, 32768, dtype=np.int64)


@dataclass(frozen=True)
class Lut16Record:
    table: np.ndarray  # (65536,) int16 output per input, indexed by x + 32768


def apply_lut16(rec: Lut16Record, inputs, outputs) -> None:
    lookup(rec.table, inputs[0], outputs[0])


def unary16_operands(ctx: OpContext) -> tuple[QParams, QParams]:
    """(input, output) parameters of a 16x8 element-wise op, checked."""
    ctx.check_arity(1, 1)
    xq, out = symmetric16(ctx, (ctx.input(0), "input"), (ctx.outputs[0], "output"))
    return xq, out


def table16(values) -> np.ndarray:
    """``values(q)`` over every int16 q, clamped to int16, indexed by q + 32768."""
    return np.clip(np.asarray(values(ALL_INT16), np.int64), -32768, 32767).astype(np.int16)


def lut16_kernel(values_for) -> Kernel:
    """A 16x8 element-wise kernel: ``values_for(ctx, xq, out)`` returns the int64 -> int64
    function of the op (activations.py's formulas)."""

    def prepare(ctx: OpContext):
        xq, out = unary16_operands(ctx)
        table = table16(values_for(ctx, xq, out))
        return (OutputSpec(ctx.input(0).shape, np.dtype(np.int16)),), Lut16Record(table)

    return Kernel(prepare, apply_lut16)


# --------------------------------------------------------------------------- LOGISTIC / TANH


# sigmoid_table_uint16 (internal/common.h) is sigmoid(i / 24) in Q0.16, i = 0..255, the
# last entry capped at 65535. It equals round(65536 * sigmoid(i / 24)) except at these
# indices, where it is one more (checked entry by entry against the table).
_SIGMOID_TABLE_PLUS_ONE = (
    4, 8, 12, 14, 15, 16, 17, 19, 20, 21, 22, 25, 27, 28, 29, 30, 31, 33, 34, 35, 37, 39,
    40, 41, 43, 44, 45, 46, 49, 50, 54, 62, 63, 64, 66, 82, 86, 93, 100, 103, 112, 116,
    135, 255,
)


@functools.lru_cache(maxsize=1)
def sigmoid_table_uint16() -> np.ndarray:
    """reference_integer_ops' sigmoid_table_uint16, as int64."""
    i = np.arange(256, dtype=np.float64)
    table = np.minimum(np.round(65536.0 / (1.0 + np.exp(-i / 24.0))), 65535).astype(np.int64)
    table[list(_SIGMOID_TABLE_PLUS_ONE)] += 1
    table.setflags(write=False)
    return table


def _input_scaling(ctx: OpContext, xq: QParams, out: QParams, pot_shifts: tuple):
    """(input_multiplier, input_left_shift) of SigmoidPrepare / TanhPrepare; multiplier 0
    for the power-of-two scales (left shift in ``pot_shifts``)."""
    pot_out, log_out = checked_log2(out.scale)
    if not pot_out or log_out != -15:
        raise ctx.unsupported(f"int16 {ctx.op_name} needs output scale 2^-15, the file "
                              f"gives {out.scale}")
    pot, log2 = checked_log2(xq.scale)
    left_shift = 12 + log2  # (15 - kInputIntegerBits) + log2(s), kInputIntegerBits = 3
    if pot and left_shift in pot_shifts:
        return 0, left_shift
    multiplier = float(np.float32(xq.scale)) * 4096.0 * 3.0
    left_shift = 0
    while multiplier <= 32767.0 / 2.0 and left_shift <= 30:
        left_shift += 1
        multiplier *= 2.0
    return int(multiplier), left_shift


def _rescaled(q: np.ndarray, multiplier: int, left_shift: int) -> np.ndarray:
    """x in units of 1 / (3 * 4096): (x * m + round) >> k (integer_ops/logistic.h)."""
    if multiplier == 0:  # power of two: m = 3 << k, no shift
        multiplier, left_shift = 3 << left_shift, 0
    rounding = (1 << (left_shift - 1)) if left_shift > 0 else 0
    return (q * multiplier + rounding) >> left_shift


def _interpolated(x: np.ndarray, bits: int, saturated: int) -> np.ndarray:
    """sigmoid_table_uint16 at |x| / 2^bits, interpolated linearly with the low ``bits``
    bits (Q0.16 * 2^bits); ``saturated`` from the table's last step on."""
    table = sigmoid_table_uint16()
    a = np.abs(x)
    uh = np.minimum(a >> bits, 254)
    ua, ub = table[uh], table[uh + 1]
    fraction = a & ((1 << bits) - 1)
    return np.where((a >> bits) >= 255, saturated, (ua << bits) + fraction * (ub - ua))


def reference_logistic(q: np.ndarray, multiplier: int, left_shift: int) -> np.ndarray:
    """reference_integer_ops::Logistic (int16): mirrored for x < 0, back to Q0.15."""
    x = _rescaled(q, multiplier, left_shift)
    r = _interpolated(x, 9, 0x7FFF << 10)
    return np.where(x >= 0, r + (1 << 9), (1 << 25) - r + (1 << 9) - 1) >> 10


def reference_tanh(q: np.ndarray, multiplier: int, left_shift: int) -> np.ndarray:
    """reference_integer_ops::Tanh (int16): 2 sigmoid(2x) - 1, back to Q0.15."""
    x = _rescaled(q, multiplier, left_shift)
    r = _interpolated(x, 8, 0xFFFF << 8)
    return np.where(x >= 0, r - (1 << 23) + (1 << 7), -r + (1 << 23) + (1 << 7) - 1) >> 8


def _prepare_sigmoid_like(ctx: OpContext, pot_shifts: tuple, reference, optimized):
    xq, out = unary16_operands(ctx)
    multiplier, left_shift = _input_scaling(ctx, xq, out, pot_shifts)
    if ctx.quant.reference or multiplier > 0:
        table = table16(lambda q: reference(q, multiplier, left_shift))
    else:
        table = optimized(left_shift)
    return (OutputSpec(ctx.input(0).shape, np.dtype(np.int16)),), Lut16Record(table)


def _optimized_tanh(left_shift: int) -> np.ndarray:
    """optimized_ops::Tanh (int16): gemmlowp tanh on F3, the input doubled (saturating)
    first when the scale is 2^-11."""
    table = tanh_table(3)
    if left_shift == 0:
        return table
    doubled = np.clip(ALL_INT16 * 2, -32768, 32767)
    return table[doubled + 32768]


def prepare_logistic16(ctx: OpContext):
    return _prepare_sigmoid_like(ctx, (0,), reference_logistic, lambda k: logistic_table(3))


def prepare_tanh16(ctx: OpContext):
    return _prepare_sigmoid_like(ctx, (0, 1), reference_tanh, _optimized_tanh)


LOGISTIC16 = Kernel(prepare_logistic16, apply_lut16)
TANH16 = Kernel(prepare_tanh16, apply_lut16)
