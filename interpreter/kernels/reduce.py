"""MEAN, SUM, REDUCE_PROD, REDUCE_MAX, REDUCE_MIN, REDUCE_ANY, REDUCE_ALL over constant
axes, with keep_dims.

Matches tensorflow/lite/kernels/reduce.cc:

* the axes are the 2nd input (int32 / int64, scalar or 1-D); negative axes count from
  the end (axis + rank) and repeated axes count once (ResizeOutputTensor);
* keep_dims keeps every reduced dimension as 1, otherwise they are dropped;
* a non-constant axis tensor makes the output dynamic in TFLite -- not supported here;
* REDUCE_MAX / REDUCE_MIN start from lowest() / max() and use ``in > acc ? in : acc``,
  which skips NaN like numpy's fmax / fmin reductions;
* MEAN: sum over the reduced elements divided by their count; for int32 / int64 the sum
  is taken in int64 and the division truncates toward zero (C++ integer division);
* REDUCE_PROD multiplies (integers wrap); REDUCE_ANY / REDUCE_ALL reduce bool tensors.

MEAN on int8 / uint8:

* REFERENCE -- reference_ops::QuantizedMeanOrSum (reference/reduce.h): with
  (m, shift) = QuantizeMultiplier(s_in / s_out) and n the number of reduced elements,
      k = min(floor(log2 n), 32, 31 + shift)
      m' = (m << k) / n, shift' = shift - k           (integer division)
      out = clamp(MBQM(sum(q) - n * z_in, m', shift') + z_out)
* DEFAULT -- the XNNPACK delegate (xnn_create_reduce_nd / update_params_mean_qs8):
      scale = float32(s_in / s_out) * float32(1 / n)
      out = clamp(rint(float32(sum(q)) * scale + (z_out - float32(n * z_in) * scale)))
  all in float32 (measured against LiteRT: z_out is added before rounding, and the input
  zero point is folded into that float bias, not subtracted from the integer sum).

MEAN on int16 (16x8: zero points 0) takes the REFERENCE arithmetic in both kernel sets
(reduce.cc EvalMean sends int16 to reference_ops::QuantizedMeanOrSum; XNNPACK takes no
int16).

SUM on int8 / uint8 / int16 (reduce.cc EvalSum -> QuantizedMeanOrSum, compute_sum):
(m, shift) = QuantizeMultiplier(s_in / s_out), no 1 / n;

* REFERENCE: out = clamp(MBQM(sum(q) - n * z_in, m, shift) + z_out). LiteRT's reference
  path reads the data *as uint8* whatever its type (GetTensorData<uint8_t>): an int8
  tensor's bits are summed as uint8 values and the result clamped to [0, 255] and stored
  as bits -- reproduced (measured); int16 would read half its bytes: refused.
* MICRO: TFLM's SUM (micro/kernels/reduce_common.cc EvalSumHelper) runs the same
  QuantizedMeanOrSum on int8 and int16 data read as their own types (no uint8 view).
* DEFAULT: XNNPACK for int8 / uint8 (the MEAN formula above with scale = float32(s_in) /
  float32(s_out)); int16 runs optimized_ops::QuantizedMeanOrSum:
  out = clamp(round_half_away(float32(sum(q)) * scale + float32(-z_in * scale * n)) + z_out).

REDUCE_MAX / REDUCE_MIN on int8 / uint8 / int16 move values: input and output must have
equal scale and zero point (reduce.cc EvalType refuses otherwise).

REDUCE_PROD on quantized int8 / int16 (reduce.cc PrepareProd / QuantizedReduceProd, both
kernel sets): with n reduced elements, (m, shift) = QuantizeMultiplier(s_in / s_out^(1/n))
(double), the product is rescaled after every step, in input order:
    acc = q_0 - z_in;  acc = MBQM64(acc * (q_i - z_in), m, shift)  (i = 1 .. n-1)
    out = clamp(MBQM64(acc, m, shift) + z_out)
with MBQM64 the int64 MultiplyByQuantizedMultiplier overload (common.h).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import Callable

import numpy as np

from .common import native_ops
from .. import quant_math as qm
from .base import Chosen, Kernel, OpContext, OutputSpec, normalize_axis, run_chosen
from .opdef import OpDef, QuantRule
from .common.requantize import QUANTIZED, clamp_out, qparams, require_same_type
from .common.same_params import checked
from .versions import INT8_2, INT8_2_INT16_3, INT8_OR_INT16_2


@dataclass(frozen=True)
class ReduceRecord:
    reduce: Callable  # numpy reduction called as reduce(x, axis=, keepdims=, out=)
    axes: tuple[int, ...]
    keep_dims: bool


def _max(dtype: np.dtype) -> Callable:
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    return partial(np.fmax.reduce, initial=info.min)


def _min(dtype: np.dtype) -> Callable:
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    return partial(np.fmin.reduce, initial=info.max)


def _prod(dtype: np.dtype) -> Callable:
    return partial(np.prod, dtype=dtype)


def _sum(dtype: np.dtype) -> Callable:
    return np.add.reduce


def _any(dtype: np.dtype) -> Callable:
    return np.any


def _all(dtype: np.dtype) -> Callable:
    return np.all


def _mean(dtype: np.dtype) -> Callable:
    return _float_mean if dtype.kind == "f" else _integer_mean


def _float_mean(x, axis, keepdims, out) -> None:
    """np.mean's own arithmetic (add.reduce, then a true divide by the count) without
    its Python wrapper."""
    np.add.reduce(x, axis=axis, keepdims=keepdims, out=out)
    np.true_divide(out, x.size // max(out.size, 1), out=out, casting="unsafe")


def _integer_mean(x, axis, keepdims, out) -> None:
    total = np.sum(x, axis=axis, keepdims=keepdims, dtype=np.int64)
    count = x.size // max(total.size, 1)
    quotient = np.abs(total) // max(count, 1)  # truncate toward zero
    np.copyto(out, np.where(total < 0, -quotient, quotient), casting="unsafe")


def resolve_axes(ctx: OpContext, axis_values: np.ndarray, rank: int) -> tuple[int, ...]:
    """Normalized, de-duplicated, sorted axes."""
    axis_values = np.asarray(axis_values)
    if axis_values.dtype.kind not in "iu":
        raise ctx.dtype_error(f"axis tensor must be int32 or int64, got {axis_values.dtype}")
    axes = {normalize_axis(ctx, int(a), rank) for a in axis_values.reshape(-1)}
    return tuple(sorted(axes))


def _output_shape(ctx: OpContext, x) -> tuple[tuple[int, ...], tuple[int, ...], bool]:
    """(axes, output shape, keep_dims) of a reduction of ``x`` over input 1's axes."""
    axes = resolve_axes(ctx, ctx.constant_input(1, "axis"), x.rank)
    keep_dims = bool(ctx.option("keep_dims", False))
    if keep_dims:
        shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    else:
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return axes, shape, keep_dims


@dataclass(frozen=True)
class FloatSumRecord(ReduceRecord):
    """A float32 MEAN / SUM whose axes form one block: numpy's eval, and on the native
    backend the same sums in C, bit for bit (native/reduce.c el_sum_f32: np.add.reduce's
    order) as one native step."""
    dims: tuple[int, int, int] = (1, 1, 1)  # (outer, count, inner)
    mean: bool = False

    def native_step(self, inputs, outputs):
        return native_ops.plain_step((inputs[0], outputs[0]), "sum_f32_step", inputs[0],
                                     *self.dims, self.mean, outputs[0])


def _make_prepare(reducer: Callable, dtypes: tuple):
    """``reducer(dtype)``: the numpy reduction for the input's dtype."""
    def prepare(ctx: OpContext):
        ctx.check_arity(2, 2)
        x = ctx.input(0)
        ctx.require_dtype(x, dtypes, "input")
        axes, shape, keep_dims = _output_shape(ctx, x)
        record = ReduceRecord(reducer(x.dtype), axes, keep_dims)
        dims = native_ops.sum_dims(x.shape, axes)
        if reducer in (_mean, _sum) and x.dtype == np.float32 and dims is not None \
                and 0 not in x.shape:
            record = FloatSumRecord(record.reduce, axes, keep_dims, dims, reducer is _mean)
        return (OutputSpec(shape, x.dtype),), record

    return prepare


def eval(rec: ReduceRecord, inputs, outputs) -> None:
    rec.reduce(inputs[0], axis=rec.axes, keepdims=rec.keep_dims, out=outputs[0])


_NUMERIC = (np.float32, np.int32, np.int64)


# --------------------------------------------------------------------------- MEAN, int8 / uint8


@dataclass(frozen=True, kw_only=True)
class QMeanRecord:
    axes: tuple[int, ...]
    keep_dims: bool
    offset: int  # n * z_in
    z_out: int
    lo: int
    hi: int


@dataclass(frozen=True, kw_only=True)
class FixedMeanRecord(QMeanRecord):
    multiplier: int  # m'
    shift: int  # shift'
    rounding: qm.Rounding


@dataclass(frozen=True, kw_only=True)
class XnnMeanRecord(QMeanRecord):
    scale: np.float32  # float32(s_in / s_out) * float32(1 / n)  (SUM: without 1 / n)
    bias: np.float32 = np.float32(0)  # z_out - float32(n * z_in) * scale

    def float_stage(self) -> tuple[float, float]:
        """finish_mean_xnn's float32 (scale, bias), for its C form (native_ops.NativeSums'
        native step, native/steps.c mean_step)."""
        return float(self.scale), float(self.bias)


_QUANTIZED_16 = QUANTIZED + (np.int16,)


def _quantized_operands(ctx: OpContext, dtypes: tuple = _QUANTIZED_16):
    """(x, output spec, n reduced elements, input / output QParams, the QMeanRecord
    fields) of a reduction of a quantized tensor; int16 needs zero points 0
    (reduce.cc PrepareSimple)."""
    ctx.check_arity(2, 2)
    x = ctx.input(0)
    ctx.require_dtype(x, dtypes, "input")
    require_same_type(ctx, x, ctx.outputs[0])
    axes, shape, keep_dims = _output_shape(ctx, x)
    count = 1
    for a in axes:
        count *= x.shape[a]
    if count == 0:
        raise ctx.shape_error(f"reduction over an empty axis of shape {list(x.shape)}")
    xq, out = qparams(ctx, x, "input"), qparams(ctx, ctx.outputs[0], "output")
    if x.dtype == np.int16 and (xq.zero_point or out.zero_point):
        raise ctx.shape_error(f"int16 input and output need zero points 0, got "
                              f"{xq.zero_point} and {out.zero_point}")
    info = np.iinfo(x.dtype)
    common = dict(axes=axes, keep_dims=keep_dims, offset=count * xq.zero_point,
                  z_out=out.zero_point, lo=int(info.min), hi=int(info.max))
    return x, (OutputSpec(shape, x.dtype),), count, xq, out, common


def prepare_mean_quantized(ctx: OpContext):
    x, spec, count, xq, out, common = _quantized_operands(ctx)
    if not ctx.quant.reference and x.dtype != np.int16:
        scale = np.float32(xq.scale) / np.float32(out.scale)
        record = xnn_record(np.float32(scale * (np.float32(1.0) / np.float32(count))), count,
                            xq, common)
        return spec, _with_sums(ctx, record, eval_mean_xnn, finish_mean_xnn)
    m, shift = qm.quantize_multiplier(xq.scale / out.scale, ctx.quant.rounding)
    k = min(count.bit_length() - 1, 32, 31 + shift)
    record = FixedMeanRecord(multiplier=(m << k) // count, shift=shift - k,
                             rounding=ctx.quant.rounding, **common)
    return spec, _with_sums(ctx, record, eval_mean_fixed, finish_mean_fixed)


def _sums(rec: QMeanRecord, x: np.ndarray) -> np.ndarray:
    """sum(q) over the reduced axes, in int64 (native_ops.eval_sums computes the same)."""
    return np.add.reduce(x, axis=rec.axes, dtype=np.int64, keepdims=rec.keep_dims)


def _with_sums(ctx: OpContext, rec: QMeanRecord, numpy_eval, finish) -> Chosen:
    """A quantized reduction that sums in int64 and ends in ``finish``: the sums in C
    where the native backend takes them (then ``finish``), else ``numpy_eval``."""
    return native_ops.sums(ctx, rec.axes, finish, rec) or Chosen(numpy_eval, rec)


def finish_mean_fixed(rec: FixedMeanRecord, total: np.ndarray, out: np.ndarray) -> None:
    total -= rec.offset  # sum(q) - n * z_in
    values = qm.multiply_by_quantized_multiplier(total, rec.multiplier, rec.shift, rec.rounding)
    values += rec.z_out
    clamp_out(np.asarray(values, np.int64), rec.lo, rec.hi, out)


def eval_mean_fixed(rec: FixedMeanRecord, inputs, outputs) -> None:
    finish_mean_fixed(rec, _sums(rec, inputs[0]), outputs[0])


def xnn_record(scale: np.float32, count: int, xq, common: dict) -> XnnMeanRecord:
    """XNNPACK's reduce output stage: v = float32(sum(q)) * scale + bias, with the
    zero points folded into the float32 bias z_out - float32(n * z_in) * scale."""
    bias = np.float32(np.float32(common["z_out"]) - np.float32(count * xq.zero_point) * scale)
    return XnnMeanRecord(scale=scale, bias=bias, **common)


def finish_mean_xnn(rec: XnnMeanRecord, total: np.ndarray, out: np.ndarray) -> None:
    values = np.array(total, np.float32)  # an array even for a 0-d result
    values *= rec.scale
    values += rec.bias
    np.rint(values, out=values)
    clamp_out(values, rec.lo, rec.hi, out)


def eval_mean_xnn(rec: XnnMeanRecord, inputs, outputs) -> None:
    finish_mean_xnn(rec, _sums(rec, inputs[0]), outputs[0])



# --------------------------------------------------------------------------- SUM, quantized


@dataclass(frozen=True, kw_only=True)
class RoundSumRecord(QMeanRecord):
    scale: np.float32  # float32(s_in) / float32(s_out)
    bias: np.float32  # float32(-z_in * scale * n)


def prepare_sum_quantized(ctx: OpContext):
    x, spec, count, xq, out, common = _quantized_operands(ctx)
    scale = np.float32(xq.scale) / np.float32(out.scale)
    if not ctx.quant.reference:
        if x.dtype != np.int16:
            record = xnn_record(scale, count, xq, common)
            return spec, _with_sums(ctx, record, eval_mean_xnn, finish_mean_xnn)
        # optimized_ops::QuantizedMeanOrSum: -z_in * scale * n in float32, left to right
        bias = np.float32(np.float32(-xq.zero_point) * scale * np.float32(count))
        return spec, Chosen(eval_sum_rounded, RoundSumRecord(scale=scale, bias=bias, **common))
    m, shift = qm.quantize_multiplier(xq.scale / out.scale, ctx.quant.rounding)
    record = FixedMeanRecord(multiplier=m, shift=shift, rounding=ctx.quant.rounding, **common)
    if ctx.quant.micro:  # TFLM's reduce_common.cc EvalSumHelper reads each type as itself
        return spec, _with_sums(ctx, record, eval_mean_fixed, finish_mean_fixed)
    if x.dtype == np.int16:
        raise ctx.unsupported(
            "int16 SUM with kernels='reference': LiteRT's reference kernel reads the int16 "
            "data as uint8 bytes, so there is no result to match; use kernels='default' or 'micro'")
    if x.dtype == np.int8:  # read and written as uint8 bits (see the module docstring)
        return spec, Chosen(eval_sum_as_uint8, replace(record, lo=0, hi=255))
    return spec, _with_sums(ctx, record, eval_mean_fixed, finish_mean_fixed)


def eval_sum_as_uint8(rec: FixedMeanRecord, inputs, outputs) -> None:
    eval_mean_fixed(rec, [inputs[0].view(np.uint8)], [outputs[0].view(np.uint8)])


def eval_sum_rounded(rec: RoundSumRecord, inputs, outputs) -> None:
    total = np.add.reduce(inputs[0], axis=rec.axes, dtype=np.int64, keepdims=rec.keep_dims)
    values = total.astype(np.float32) * rec.scale + rec.bias
    values = qm.round_half_away(values).astype(np.int64) + rec.z_out
    clamp_out(values, rec.lo, rec.hi, outputs[0])


# --------------------------------------------------------------------------- MAX / MIN / PROD


@dataclass(frozen=True, kw_only=True)
class ProdRecord(QMeanRecord):
    count: int  # n
    z_in: int
    multiplier: int
    shift: int


def prepare_prod_quantized(ctx: OpContext):
    x, spec, count, xq, out, common = _quantized_operands(ctx, (np.int8, np.int16))
    # GetQuantProdScaling: s_in / s_out^(1/n), in double
    m, shift = qm.quantize_multiplier(xq.scale / out.scale ** (1.0 / count), ctx.quant.rounding)
    return spec, Chosen(eval_prod_quantized, ProdRecord(
        count=count, z_in=xq.zero_point, multiplier=m, shift=shift, **common))


def eval_prod_quantized(rec: ProdRecord, inputs, outputs) -> None:
    x = inputs[0]
    kept = [a for a in range(x.ndim) if a not in rec.axes]
    # (outputs, n): each output's elements in input (row-major) order
    rows = np.transpose(x, kept + list(rec.axes)).reshape(-1, rec.count).astype(np.int64)
    rows -= rec.z_in
    acc = rows[:, 0].copy()
    for i in range(1, rec.count):
        acc = qm.multiply_by_quantized_multiplier_int64(acc * rows[:, i], rec.multiplier,
                                                        rec.shift)
    values = qm.multiply_by_quantized_multiplier_int64(acc, rec.multiplier, rec.shift)
    values += rec.z_out
    clamp_out(values, rec.lo, rec.hi, outputs[0])


def _reduction(name: str, reducer: Callable, dtypes: tuple = _NUMERIC, quantize16=False,
               **facts) -> OpDef:
    """A reduction; its integer kernel serves int16 (16x8) too, and the quantizer's 16x8
    mode emits it where ``quantize16``."""
    integer = facts.get("integer")
    return OpDef(name, float=Kernel(_make_prepare(reducer, dtypes), eval), reduction=True,
                 shape_operands=(1,),  # the axes
                 int16=integer if isinstance(integer, Kernel) else None,
                 quantize16=quantize16, **facts)


def _same_params(reducer: Callable) -> Kernel:
    """REDUCE_MAX / REDUCE_MIN on quantized data: values move, so the parameters must be
    equal (reduce.cc EvalType: TF_LITE_ENSURE_EQ on scale and zero point; int16 zero
    points 0) -- except where XNNPACK takes the op (int8 / uint8, DEFAULT set): it moves
    the values whatever the parameters (measured)."""
    plain = Kernel(_make_prepare(reducer, _QUANTIZED_16), eval)
    strict = checked(plain, int16_zero=True)

    def prepare(ctx: OpContext):
        xnnpack = not ctx.quant.reference and ctx.input(0).dtype != np.int16
        return (plain if xnnpack else strict).prepare(ctx)

    return Kernel(prepare, eval)


# Versions (op_version.cc), by the input's type: MEAN, REDUCE_MAX and REDUCE_MIN int16 3,
# int8 2; SUM int8 2; REDUCE_PROD int8 / int16 2; REDUCE_ANY / REDUCE_ALL have no case: 1.
OPS = (
    _reduction("MEAN", _mean, integer=Kernel(prepare_mean_quantized, run_chosen),
               quant=QuantRule.OWN_RANGE, quantize16=True, version=INT8_2_INT16_3),
    _reduction("SUM", _sum, integer=Kernel(prepare_sum_quantized, run_chosen),
               quant=QuantRule.OWN_RANGE, version=INT8_2),
    # Values move: the output keeps the input's parameters.
    _reduction("REDUCE_MAX", _max, integer=_same_params(_max), quant=QuantRule.SAME_AS_INPUT,
               exact=True, quantize16=True, version=INT8_2_INT16_3),
    _reduction("REDUCE_MIN", _min, integer=_same_params(_min), quant=QuantRule.SAME_AS_INPUT,
               exact=True, quantize16=True, version=INT8_2_INT16_3),
    _reduction("REDUCE_PROD", _prod, integer=Kernel(prepare_prod_quantized, run_chosen),
               quant=QuantRule.OWN_RANGE, uint8=False, version=INT8_OR_INT16_2),
    _reduction("REDUCE_ANY", _any, (np.bool_,)),
    _reduction("REDUCE_ALL", _all, (np.bool_,)),
)
