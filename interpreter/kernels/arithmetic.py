"""ADD, SUB, MUL with numpy broadcasting and a fused activation: float32, int32, int64,
and int8 / uint8.

Matches tensorflow/lite/kernels/add.cc, sub.cc and mul.cc for non-quantized types:

* both inputs and the output share one type;
* when the input shapes differ the output has the broadcast shape
  (CalculateShapeForBroadcast in kernel_util.cc uses numpy's rules: align from the
  right, a dimension of 1 stretches);
* the result is clamped to the fused activation range (CalculateActivationRange,
  which for int32/int64 gives [0, max] for RELU, [0, 6] for RELU6, ...).
  (The operand checks are binary.py's, shared with DIV and the others.)

int8 / uint8 REFERENCE (and TFLite's optimized kernels, which do the same arithmetic):

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
  reference ones do, except ADD's NEON blocks (add_paths.py).

Where LiteRT leaves the formula above -- SUB with an output multiplier above 1, ADD's
optimized NEON blocks -- add_paths.py says which elements take which code path and what
each computes; prepare() then builds one table per path. Output multipliers LiteRT or
TFLite Micro abort on (ADD's >= 1, SUB's exactly 1, any >= 1 in TFLM) are refused.

Speed: the output depends on the two input values only (and the element's code path),
so prepare() evaluates the arithmetic above once for all 256 x 256 pairs, and invoke()
is a table lookup indexed by (x1 << 8) | x2 (as bytes; plus path << 16 where paths
differ): three passes over the output whatever the kernel set. The native backend
(native_ops.py, native/elementwise.c) makes one pass: XNNPACK's formulas computed
directly (they vectorize), any other kernel set's table looked up, broadcasting by strides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .common import native_ops, native_split
from .common.native_float_ops import clamp_bounds
from .. import quant_math as qm
from .common import add_paths
from .base import Chosen, Kernel, OpContext, OutputSpec, temporary
from .binary import same_type_pair
from .common.fused import Clamp, activation_clamp, apply_clamp
from .opdef import OpDef, QuantRule
from .int16.arith import INT16_LEFT_SHIFT, kernel16
from .common.requantize import QUANTIZED, activation_bounds, clamp_out, qparams, require_same_type
from .versions import OpSignature, T

SUPPORTED = (np.float32, np.int32, np.int64)


@dataclass(frozen=True)
class BinaryRecord:
    ufunc: Callable  # np.add / np.subtract / np.multiply
    clamp: Clamp


@dataclass(frozen=True)
class FloatBinaryRecord(BinaryRecord):
    """float32 ADD / SUB / MUL: the numpy eval, and on the native backend the same
    operation and clamp in C (native/binary_f32.c, the ufunc's bits) as one native step,
    its values split over the C pool when large."""

    code: int = 0  # binary_f32.c: 0 ADD, 1 SUB, 2 MUL
    dims: tuple[int, ...] = ()  # [collapsed shape, strides of a, strides of b] (values)
    split: tuple[int, int] = (1, 1)  # (threads, tasks)

    def native_step(self, inputs, outputs):
        a, b, out = inputs[0], inputs[1], outputs[0]
        return native_ops.plain_step((a, b, out), "binary_f32_step", a, b, out, self.code,
                                     np.array(self.dims, np.int64), *clamp_bounds(self.clamp),
                                     *self.split)


_FLOAT_CODES = {np.add: 0, np.subtract: 1, np.multiply: 2}


def _make_prepare(ufunc):
    def prepare(ctx: OpContext):
        a, b, shape = same_type_pair(ctx, SUPPORTED)
        record = BinaryRecord(ufunc, activation_clamp(ctx, a.dtype))
        dims, sa, sb = native_ops.collapse(a.shape, b.shape)
        size = math.prod(dims)
        if a.dtype == np.float32 and size and len(dims) <= native_ops.MAX_DIMS:
            tasks = native_split.tasks(ctx.threads, size, size // 64,
                                       native_split.SPLIT_ELEMENTS)
            record = FloatBinaryRecord(ufunc, record.clamp, _FLOAT_CODES[ufunc],
                                       dims + sa + sb,
                                       (ctx.threads if tasks > 1 else 1, tasks))
        return (OutputSpec(shape, a.dtype),), record

    return prepare


def eval(rec: BinaryRecord, inputs, outputs) -> None:
    out = outputs[0]
    # inf - inf, overflow: the IEEE results, as in LiteRT (warnings off: runloop.quiet).
    rec.ufunc(inputs[0], inputs[1], out=out)
    apply_clamp(rec.clamp, out)


ADD = Kernel(_make_prepare(np.add), eval)
SUB = Kernel(_make_prepare(np.subtract), eval)
MUL = Kernel(_make_prepare(np.multiply), eval)


# --------------------------------------------------------------------------- int8 / uint8
#
# The arithmetic of each kernel set, on int64 arrays of centered values a = x1 - z1,
# b = x2 - z2 (before the output zero point and the clamp): one type per formula.

LEFT_SHIFT = 20  # add.cc: data->left_shift for int8 / uint8


@dataclass(frozen=True)
class FixedAdd:
    """TFLite: both inputs at the common scale 2 * max(s1, s2) with 20 bits of headroom."""

    m1: tuple[int, int]  # (multiplier, shift) of s1 / T
    m2: tuple[int, int]  # of s2 / T
    mo: tuple[int, int]  # of T / (2^20 * s_out)
    sign: int  # -1 for SUB
    rounding: qm.Rounding
    left_shift: int = LEFT_SHIFT  # 15 for int16 (int16/arith.py)

    def __call__(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        mbqm = qm.multiply_by_quantized_multiplier_smaller_than_one_exp
        a = mbqm(a << self.left_shift, *self.m1, self.rounding)
        b = mbqm(b << self.left_shift, *self.m2, self.rounding)
        # The output shift is > 0 only in SUB's single-rounding build, where
        # MultiplyByQuantizedMultiplierSmallerThanOneExp is MultiplyByQuantizedMultiplier
        # (the double-rounding build's is add_paths.SubAboveOne).
        return qm.multiply_by_quantized_multiplier(a + self.sign * b, *self.mo, self.rounding)


@dataclass(frozen=True)
class XnnAdd:
    """XNNPACK's qs8 / qu8 vadd: 21-bit integer multipliers and a floor shift."""

    ma: int
    mb: int  # negated for SUB
    shift: int

    def __call__(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return (a * self.ma + b * self.mb + (1 << (self.shift - 1))) >> self.shift

    def native(self, zero_points, bounds) -> native_ops.Formula:
        """This formula for the C kernel (native/elementwise.c)."""
        return native_ops.Formula(native_ops.XNN_ADD, zero_points, bounds,
                                  (self.ma, self.mb, self.shift))


@dataclass(frozen=True)
class FixedMul:
    """TFLite: MultiplyByQuantizedMultiplier of the product."""

    multiplier: int
    shift: int
    rounding: qm.Rounding

    def __call__(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return qm.multiply_by_quantized_multiplier(a * b, self.multiplier, self.shift,
                                                   self.rounding)


@dataclass(frozen=True)
class XnnMul:
    """XNNPACK's fp32 vmul: the float32 product times the float32 scale, rounded to even."""

    scale: np.float32

    def __call__(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.rint((a * b).astype(np.float32) * self.scale).astype(np.int64)

    def native(self, zero_points, bounds) -> native_ops.Formula:
        """This formula for the C kernel (native/elementwise.c)."""
        return native_ops.Formula(native_ops.XNN_MUL, zero_points, bounds,
                                  scale=float(self.scale))


@dataclass(frozen=True)
class QBinaryTable:
    table: np.ndarray  # (65536,) output for input bytes (x1 << 8) | x2
    index: np.ndarray  # uint16 scratch with the output's shape


@dataclass(frozen=True)
class QBinaryPaths:
    """One table per code path (add_paths.py) and each output element's path."""

    table: np.ndarray  # (paths * 65536,) output for path << 16 | x1 << 8 | x2
    index: np.ndarray  # uint32 scratch with the output's shape
    offsets: np.ndarray  # uint32 path << 16 per output element


def _float32_bits_exponent(value: np.float32) -> int:
    """Unbiased binary exponent of a normal float32 (float_as_uint32(x) >> 23) - 127."""
    return int((np.float32(value).view(np.uint32) >> 23) & 0xFF) - 127


def _xnn_add(s1: float, s2: float, s_out: float, subtract: bool) -> XnnAdd:
    """xnn_init_qs8_add_minmax_scalar_params (qu8 alike)."""
    a = np.float32(s1) / np.float32(s_out)
    b = np.float32(s2) / np.float32(s_out)
    if subtract:
        b = -b
    shift = 20 - _float32_bits_exponent(max(abs(a), abs(b)))  # in [12, 30]
    # |M| * 2^shift is exact in float32 (an exponent change); lrintf rounds half to even.
    ma = int(np.rint(np.float32(abs(a)) * np.float32(2.0**shift)))
    mb = int(np.rint(np.float32(abs(b)) * np.float32(2.0**shift)))
    return XnnAdd((-ma if a < 0 else ma), (-mb if b < 0 else mb), shift)


def _mul(q1, q2, out, rounding: qm.Rounding, xnnpack: bool, micro: bool = False):
    """MUL's formula in the kernel set (``micro``: TFLM's multiplier)."""
    scale = np.float32(np.float32(q1.scale) * np.float32(q2.scale)) / np.float32(out.scale)
    if xnnpack:
        return XnnMul(scale)
    real = qm.mul_multiplier(q1.scale, q2.scale, out.scale, micro)
    return FixedMul(*qm.quantize_multiplier(real, rounding), rounding)


def _add_sub(ctx: OpContext, op: str, q1, q2, out, xnnpack: bool,
             left_shift: int = LEFT_SHIFT):
    """ADD / SUB in the kernel set: the formula of each code path (add_paths.py) and the
    Loops telling which elements take which; one path and no Loops where every element
    takes the same formula. ``left_shift``: the headroom, 15 for int16."""
    if xnnpack:
        return (_xnn_add(q1.scale, q2.scale, out.scale, op == "SUB"),), None
    rounding = ctx.quant.rounding
    twice_max = 2.0 * max(q1.scale, q2.scale)
    real = add_paths.output_multiplier(q1.scale, q2.scale, out.scale, left_shift)
    mo = qm.quantize_multiplier(real, rounding) if math.isfinite(real) else (0, 99)
    add_paths.check_output_multiplier(ctx, op, real, mo[1], ctx.quant.micro)
    multipliers = (qm.quantize_multiplier_smaller_than_one_exp(q1.scale / twice_max, rounding),
                   qm.quantize_multiplier_smaller_than_one_exp(q2.scale / twice_max, rounding),
                   mo)
    int16 = left_shift != LEFT_SHIFT
    if mo[1] > 0 and rounding is qm.Rounding.DOUBLE:
        return add_paths.sub_above_one(multipliers, left_shift, int16, ctx.quant.reference)
    base = FixedAdd(*multipliers, -1 if op == "SUB" else 1, rounding, left_shift)
    if op == "ADD" and not ctx.quant.reference and not int16:
        return add_paths.neon_add(base, multipliers, uint8=ctx.input(0).dtype == np.uint8)
    return (base,), None


def _arithmetic16(op: str):
    """The general-scale 16x8 formula of ``op`` (TFLite's: XNNPACK takes no int16)."""
    def build(ctx: OpContext, q1, q2, out):
        if op == "MUL":
            return _mul(q1, q2, out, ctx.quant.rounding, False, ctx.quant.micro)
        paths, loops = _add_sub(ctx, op, q1, q2, out, False, INT16_LEFT_SHIFT)
        shape = np.broadcast_shapes(ctx.input(0).shape, ctx.input(1).shape)
        which = loops and add_paths.path_map(ctx.input(0).shape, ctx.input(1).shape,
                                             math.prod(shape), loops)
        return paths[0] if which is None else add_paths.Selected(paths, which.reshape(shape))
    return build


def _make_prepare_quantized(op: str):
    def prepare(ctx: OpContext):
        x1, x2, shape = same_type_pair(ctx, QUANTIZED)
        require_same_type(ctx, x1, ctx.outputs[0])
        q1, q2 = qparams(ctx, x1, "first input"), qparams(ctx, x2, "second input")
        out = qparams(ctx, ctx.outputs[0], "output")
        # The delegate refuses scale ratios XNNPACK cannot represent; TFLite runs those.
        if op == "MUL":
            ratio = np.float32(np.float32(q1.scale) * np.float32(q2.scale)) / np.float32(out.scale)
            xnn_ok = 2.0**-16 <= ratio < 2.0**8
        else:
            with np.errstate(over="ignore"):
                xnn_ok = all(2.0**-10 <= np.float32(s) / np.float32(out.scale) < 2.0**8
                             for s in (q1.scale, q2.scale))
        xnnpack = not ctx.quant.reference and xnn_ok
        lo, hi = activation_bounds(ctx, out, x1.dtype, xnnpack)
        if op == "MUL":
            paths, which = (_mul(q1, q2, out, ctx.quant.rounding, xnnpack, ctx.quant.micro),), None
        else:
            paths, loops = _add_sub(ctx, op, q1, q2, out, xnnpack)
            which = loops and add_paths.path_map(x1.shape, x2.shape, math.prod(shape), loops)
            paths = paths if which is not None else paths[:1]
        # Every (x1, x2) pair of each path, as bytes: row u1, column u2.
        values = np.arange(256, dtype=np.uint8).view(x1.dtype).astype(np.int64)
        a, b = values[:, None] - q1.zero_point, values[None, :] - q2.zero_point
        lut = np.empty((len(paths), 256, 256), x1.dtype)
        for table, arithmetic in zip(lut, paths):
            result = np.broadcast_to(arithmetic(a, b), (256, 256))
            clamp_out(add_paths.with_offset(arithmetic, result, out.zero_point), lo, hi, table)
        specs = (OutputSpec(shape, x1.dtype),)
        offsets = None if which is None else (which.astype(np.uint32) << 16).reshape(shape)
        # In C: the XNNPACK formula computed directly, any other looked up in the table.
        formula = paths[0].native((q1.zero_point, q2.zero_point, out.zero_point), (lo, hi)) \
            if isinstance(paths[0], (XnnAdd, XnnMul)) and which is None else None
        native = native_ops.binary(ctx, lut.reshape(-1), offsets, formula)
        if native is not None:
            return specs, native
        if which is None:
            return specs, QBinaryTable(lut.reshape(-1), temporary(ctx, shape, np.uint16))
        return specs, Chosen(eval_paths, QBinaryPaths(lut.reshape(-1),
                                                      temporary(ctx, shape, np.uint32), offsets))

    return prepare


def eval_quantized(rec: QBinaryTable, inputs, outputs) -> None:
    index = rec.index
    np.left_shift(inputs[0].view(np.uint8), 8, out=index, dtype=np.uint16)
    np.bitwise_or(index, inputs[1].view(np.uint8), out=index)
    rec.table.take(index, out=outputs[0])


def eval_paths(rec: "QBinaryPaths", inputs, outputs) -> None:
    index = rec.index
    np.left_shift(inputs[0].view(np.uint8), 8, out=index, dtype=np.uint32)
    np.bitwise_or(index, inputs[1].view(np.uint8), out=index)
    np.add(index, rec.offsets, out=index)
    rec.table.take(index, out=outputs[0])


def add_version(sig: OpSignature) -> int:
    """op_version.cc, ADD: float16 6; int16 without quantization parameters 5; int64 4;
    16x8 quantized without power-of-two scales (pot_scale_int16 false) 3; int8 2."""
    x = sig.input(0)
    if x.type == T.FLOAT16:
        return 6
    if x.type == T.INT16 and not x.quantized:
        return 5
    if x.type == T.INT64:
        return 4
    if sig.int16_in_out and not sig.option("pot_scale_int16", True):
        return 3
    return 2 if x.type == T.INT8 else 1


def sub_version(sig: OpSignature) -> int:
    """op_version.cc, SUB: 16x8 quantized without power-of-two scales 5; int64 4; a
    broadcast with more than 4 dimensions 3; int8 2."""
    if sig.int16_in_out and not sig.option("pot_scale_int16", True):
        return 5
    if sig.input(0).type == T.INT64:
        return 4
    if sig.broadcasts_beyond_4d:
        return 3
    return 2 if sig.input(0).type == T.INT8 else 1


def mul_version(sig: OpSignature) -> int:
    """op_version.cc, MUL: float16 8; int16 with neither input quantized, or uint32, 7;
    complex64 6; int64 5; int16 4; quantized with s1 * s2 / s_out >= 1 (first scales,
    float32 arithmetic as op_version.cc's floats) 3; int8 2."""
    x, y, out = sig.input(0), sig.input(1), sig.output(0)
    if x.type == T.FLOAT16:
        return 8
    if (x.type == T.INT16 and not (x.quantized or y.quantized)) or x.type == T.UINT32:
        return 7
    table = {T.COMPLEX64: 6, T.INT64: 5, T.INT16: 4}
    if x.type in table:
        return table[x.type]
    scales = np.float32([x.scale, y.scale, out.scale])
    with np.errstate(over="ignore"):  # a huge scale from a file: inf >= 1
        rescale = scales[0] * scales[1] / scales[2] if scales.all() else 0.0
    if rescale >= 1.0:
        return 3
    return 2 if x.type == T.INT8 else 1


def _op(name: str, ufunc, version, neutral: float) -> OpDef:
    return OpDef(name,
                 float=Kernel(_make_prepare(ufunc), eval),
                 integer=Kernel(_make_prepare_quantized(name), eval_quantized),
                 int16=kernel16(name, _arithmetic16(name)),
                 quant=QuantRule.OWN_RANGE,
                 fused_activation=True,
                 per_sample=True,
                 neutral=neutral,
                 broadcast_rank=6,  # add.cc / sub.cc / mul.cc broadcast up to 6-D
                 version=version)


OPS = (
    _op("ADD", np.add, add_version, neutral=0.0),
    _op("SUB", np.subtract, sub_version, neutral=0.0),
    _op("MUL", np.multiply, mul_version, neutral=1.0),
)
