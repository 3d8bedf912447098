"""Where LiteRT's quantized ADD / SUB leave the reference formula: which of add.cc's and
sub.cc's code paths computes each output element, and what the paths that differ compute.

arithmetic.FixedAdd is reference_integer_ops::AddElementwise / reference_ops::SubElementwise:

    a = RDBPOT(SRDHM(x1c * 2^L, m1), -s1)        x1c = x1 - z1, L = 20 (int16: 15)
    b = RDBPOT(SRDHM(x2c * 2^L, m2), -s2)
    y = SRDHM(a +/- b, mo);  out = RDBPOT(y, -so) + z_out, clamped

(SRDHM: SaturatingRoundingDoublingHighMul, RDBPOT: RoundingDivideByPOT.) Two cases leave
it in ai-edge-litert 2.3.0 on x86-64 (measured element by element against LiteRT; the
evidence is tests/interpreter/kernels/common/test_add_paths.py):

1. SUB whose output multiplier T / (2^L * s_out) is above 1 (a near-zero output range:
   TF's int8 file of IsFinite's x - x has s_out = 7.8e-9). sub.cc Prepare quantizes it with
   QuantizeMultiplierGreaterThanOne (so = k > 0), but the kernels still call
   MultiplyByQuantizedMultiplierSmallerThanOneExp, i.e. RoundingDivideByPOT(y, -k): a
   negative exponent, whose shifts x86 takes modulo the register width. With
   mask = int32((1 << (-k mod 64)) - 1) and threshold = (mask >> 1) + (y < 0):

       scalar code       (y >> (-k mod 32)) + ((y & mask) > threshold)
       vectorised code   (y >> 31) + ((y & mask) > threshold)  (SSE shifts fill with the sign)

   and in the vectorised int8 / uint8 loop the mask is all ones whatever k. For k <= 32 the
   scalar form is (y >> (32 - k)) + (y >= 0) and the vector form +1 / -1: the result is no
   longer a rescaling of a - b. The compiler vectorises the flat loop of reference_ops::Sub
   four elements at a time (elements [0, 4 * (n // 4)) vectorised, the rest scalar); the
   broadcasting kernel (BroadcastQuantSubSlow) stays scalar; int16's default kernel
   (optimized_integer_ops::BroadcastSubDispatch) runs the flat loop on each row of its
   five-fold broadcast. A multiplier of exactly 1 fails a TFLITE_CHECK (LiteRT aborts), as
   does any ADD multiplier >= 1, and TFLite Micro aborts on every multiplier >= 1:
   `check_output_multiplier` refuses those in one line.

2. int8 / uint8 ADD in the default kernels where XNNPACK declines the scales (s_i / s_out
   outside [2^-10, 2^8)): optimized_integer_ops::AddElementwiseInt8 and optimized_ops::
   AddElementwise (uint8) run NEON code (NEON_2_SSE on x86) on blocks of 16 (int8) / 8
   (uint8) elements, and AddScalarBroadcast on blocks of 8:

       int8 blocks:      a = SRDHM(x1c << (L + s1), m1)           (the input shift first)
       uint8 blocks, every scalar-broadcast block:
                         a = SRDHM(x1c << L, m1) >> -s1            (floor, no rounding)
       then y = RDBPOT(SRDHM(a + b, mo), -so), narrowed to int16 (wrapping: vmovn),
       plus z_out in int16 (wrapping), saturated to 8 bits, clamped.

   At scale ratios past ~2^6 the int16 narrowing wraps large sums around; elements outside
   the blocks (each row's tail, generic broadcasts) take the reference formula.

Broadcasts follow optimized_ops::ProcessBroadcastShapes: equal shapes (after padding with
leading 1s) run flat; otherwise the shapes fold into a five-fold loop y0..y4 whose innermost
calls handle rows of y4 elements (elementwise) or, when y4 is 1, rows of y3 against one
value (scalar broadcast); shapes that do not fold run the generic (scalar) kernel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ... import quant_math as qm
from edgelite.errors import ModelFormatError
from ..base import OpContext

SCALAR, ELEMENTWISE, SCALAR_BROADCAST = 0, 1, 2  # the path of one output element


# --------------------------------------------------------------------------- which path


@dataclass(frozen=True)
class Loops:
    """How a kernel's loops take the elements: vector widths (0: scalar code)."""

    elementwise: int  # lanes of the flat / per-row elementwise loop
    scalar_broadcast: int = 0  # lanes of the scalar-broadcast loop (five-fold rows of y3)
    five_fold: bool = False  # broadcasts run the five-fold loops (else all scalar)


def five_fold(shape1, shape2) -> tuple[str, tuple[int, ...] | None]:
    """ProcessBroadcastShapes: ("flat", None), ("generic", None) or ("fold", (y0..y4))."""
    n = max(len(shape1), len(shape2))
    s1 = (1,) * (n - len(shape1)) + tuple(shape1)
    s2 = (1,) * (n - len(shape2)) + tuple(shape2)
    if s1 == s2:
        return "flat", None
    differ = [i for i in range(n) if s1[i] != s2[i]][-1]
    if 1 not in (s1[differ], s2[differ]):
        return "generic", None
    # "a" is the input whose dimension is 1 at the innermost difference.
    a, b = (s1, s2) if s1[differ] == 1 else (s2, s1)
    y = [1] * 5
    i = n - 1
    for slot, keep in ((4, lambda i: a[i] == b[i]), (3, lambda i: a[i] == 1),
                       (2, lambda i: a[i] == b[i]), (1, lambda i: b[i] == 1),
                       (0, lambda i: a[i] == b[i])):
        while i >= 0 and keep(i):
            y[slot] *= max(a[i], b[i])
            i -= 1
    return ("generic", None) if i >= 0 else ("fold", tuple(y))


def path_map(shape1, shape2, size: int, loops: Loops) -> np.ndarray | None:
    """The path (SCALAR, ELEMENTWISE, SCALAR_BROADCAST) of each flat output element, or None
    when every element takes the scalar path."""
    kind, y = five_fold(shape1, shape2)
    if kind == "flat":
        row, lanes, path = size, loops.elementwise, ELEMENTWISE
    elif kind == "generic" or not loops.five_fold:
        return None
    elif y[4] > 1:
        row, lanes, path = y[4], loops.elementwise, ELEMENTWISE
    else:
        row, lanes, path = y[3], loops.scalar_broadcast, SCALAR_BROADCAST
    if not lanes or row < lanes:
        return None
    position = np.arange(size, dtype=np.int64) % row
    return np.where(position < row // lanes * lanes, path, SCALAR).astype(np.uint8)


# --------------------------------------------------------------------------- refusals


def check_output_multiplier(ctx: OpContext, op: str, real: float, shift: int,
                            micro: bool) -> None:
    """Refuse (one line) the output multipliers LiteRT or TFLite Micro abort on: their
    QuantizeMultiplierSmallerThanOneExp checks real < 1 and a quantized shift <= 0; only
    LiteRT's SUB takes real > 1 (QuantizeMultiplierGreaterThanOne)."""
    smaller_than_one = op == "ADD" or micro or real <= 1.0
    if not smaller_than_one or (real < 1.0 and shift <= 0):
        return
    runtime = "TFLite Micro" if micro else "LiteRT"
    raise ModelFormatError(
        f"{ctx.describe()}: the output scale is too small for {op}: the output multiplier "
        f"2 * max(input scales) / (2^left_shift * output scale) is {real:.6g}, and "
        f"{runtime}'s kernel aborts on it (it needs < 1); quantize the output with a wider "
        "range")


# --------------------------------------------------------------------------- arithmetic


def _inputs_reference(a, b, m1, m2, left_shift):
    srdhm = qm.saturating_rounding_doubling_high_mul
    a = qm.rounding_divide_by_pot(srdhm(a << left_shift, m1[0]), -m1[1])
    b = qm.rounding_divide_by_pot(srdhm(b << left_shift, m2[0]), -m2[1])
    return a, b


def rounding_divide_by_negative_pot(y: np.ndarray, k: int, vector: bool,
                                    wide_mask: bool) -> np.ndarray:
    """gemmlowp RoundingDivideByPOT(y, -k), k > 0, as x86 code computes it (module doc)."""
    mask = -1 if vector and wide_mask else int(qm.wrap_int32((1 << (-k % 64)) - 1))
    threshold = (mask >> 1) + (y < 0)
    return (y >> (31 if vector else -k % 32)) + ((y & mask) > threshold)


@dataclass(frozen=True)
class SubAboveOne:
    """TFLite's SUB with an output shift so = k > 0 (module doc, case 1)."""

    m1: tuple[int, int]
    m2: tuple[int, int]
    mo: tuple[int, int]  # shift > 0
    left_shift: int
    vector: bool
    wide_mask: bool  # int8 / uint8 vector loops
    narrow16 = False

    def __call__(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = _inputs_reference(a, b, self.m1, self.m2, self.left_shift)
        y = qm.saturating_rounding_doubling_high_mul(qm.wrap_int32(a - b), self.mo[0])
        return rounding_divide_by_negative_pot(y, self.mo[1], self.vector, self.wide_mask)


def _neon_shift(x: np.ndarray, n: int) -> np.ndarray:
    """vshlq_s32 by n: a left shift (wrapping), or for n < 0 an arithmetic (floor) right shift."""
    return qm.wrap_int32(x << n) if n >= 0 else x >> min(-n, 31)


@dataclass(frozen=True)
class NeonAdd:
    """TFLite's NEON ADD blocks (module doc, case 2): the value before the output offset,
    which the caller adds in int16 (``narrow16``)."""

    m1: tuple[int, int]
    m2: tuple[int, int]
    mo: tuple[int, int]
    shift_first: bool  # int8 elementwise blocks: x << (L + s) before SRDHM
    left_shift: int = 20
    narrow16 = True

    def __call__(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        srdhm = qm.saturating_rounding_doubling_high_mul
        scaled = []
        for x, (m, s) in ((a, self.m1), (b, self.m2)):
            if self.shift_first:
                scaled.append(srdhm(_neon_shift(x, self.left_shift + s), m))
            else:
                scaled.append(_neon_shift(srdhm(x << self.left_shift, m), s))
        y = srdhm(qm.wrap_int32(scaled[0] + scaled[1]), self.mo[0])
        return wrap_int16(qm.rounding_divide_by_pot(y, -self.mo[1]))


def wrap_int16(x: np.ndarray) -> np.ndarray:
    return ((np.asarray(x, np.int64) + 2**15) & 0xFFFF) - 2**15


def with_offset(arithmetic, values: np.ndarray, zero_point: int) -> np.ndarray:
    """``values`` + the output zero point, as the path adds it (int16 in the NEON blocks)."""
    if getattr(arithmetic, "narrow16", False):
        return wrap_int16(values + zero_point)
    return values + zero_point


# --------------------------------------------------------------------------- per op


def sub_above_one(multipliers, left_shift: int, int16: bool, reference: bool):
    """(arithmetic per path, Loops) of a SUB whose output shift is > 0."""
    m1, m2, mo = multipliers
    scalar = SubAboveOne(m1, m2, mo, left_shift, vector=False, wide_mask=not int16)
    vector = SubAboveOne(m1, m2, mo, left_shift, vector=True, wide_mask=not int16)
    loops = Loops(elementwise=4, five_fold=int16 and not reference)
    return (scalar, vector, scalar), loops


def neon_add(base, multipliers, uint8: bool):
    """(arithmetic per path, Loops) of an 8-bit ADD in TFLite's optimized kernels."""
    m1, m2, mo = multipliers
    after = NeonAdd(m1, m2, mo, shift_first=False)
    if uint8:
        return (base, after, after), Loops(8, 8, five_fold=True)
    return (base, NeonAdd(m1, m2, mo, shift_first=True), after), Loops(16, 8, five_fold=True)


@dataclass(frozen=True)
class Selected:
    """Per-element choice between path formulas on whole operands (the int16 kernels)."""

    paths: tuple
    which: np.ndarray  # path index per output element, in the output's shape

    def __call__(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        shape = self.which.shape
        a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
        return np.choose(self.which, [path(a, b) for path in self.paths])


def output_multiplier(s1: float, s2: float, s_out: float, left_shift: int) -> float:
    """add.cc / sub.cc Prepare: 2 * max(s1, s2) / (2^left_shift * s_out), in double."""
    with np.errstate(over="ignore"):
        real = 2.0 * max(s1, s2) / ((1 << left_shift) * s_out)
    return real if math.isfinite(real) else math.inf
