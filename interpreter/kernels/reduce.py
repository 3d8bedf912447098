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
      out = clamp(rint(float32(sum(q) - n * z_in) * scale) + z_out)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

from .. import quant_math as qm
from .base import Chosen, Kernel, OpContext, OutputSpec, normalize_axis, run_chosen
from .opdef import OpDef, QuantRule
from .requantize import QUANTIZED, clamp_out, qparams, require_same_type
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


def _make_prepare(reducer: Callable, dtypes: tuple):
    """``reducer(dtype)``: the numpy reduction for the input's dtype."""
    def prepare(ctx: OpContext):
        ctx.check_arity(2, 2)
        x = ctx.input(0)
        ctx.require_dtype(x, dtypes, "input")
        axes, shape, keep_dims = _output_shape(ctx, x)
        return (OutputSpec(shape, x.dtype),), ReduceRecord(reducer(x.dtype), axes, keep_dims)

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
    scale: np.float32  # float32(s_in / s_out) * float32(1 / n)


def prepare_mean_quantized(ctx: OpContext):
    ctx.check_arity(2, 2)
    x = ctx.input(0)
    ctx.require_dtype(x, QUANTIZED, "input")
    require_same_type(ctx, x, ctx.outputs[0])
    axes, shape, keep_dims = _output_shape(ctx, x)
    count = 1
    for a in axes:
        count *= x.shape[a]
    if count == 0:
        raise ctx.shape_error(f"MEAN over an empty axis of shape {list(x.shape)}")
    xq, out = qparams(ctx, x, "input"), qparams(ctx, ctx.outputs[0], "output")
    info = np.iinfo(x.dtype)
    common = dict(axes=axes, keep_dims=keep_dims, offset=count * xq.zero_point,
                  z_out=out.zero_point, lo=int(info.min), hi=int(info.max))
    spec = (OutputSpec(shape, x.dtype),)
    if not ctx.quant.reference:
        scale = np.float32(xq.scale) / np.float32(out.scale)
        return spec, Chosen(eval_mean_xnn, XnnMeanRecord(
            scale=np.float32(scale * (np.float32(1.0) / np.float32(count))), **common))
    m, shift = qm.quantize_multiplier(xq.scale / out.scale, ctx.quant.rounding)
    k = min(count.bit_length() - 1, 32, 31 + shift)
    return spec, Chosen(eval_mean_fixed, FixedMeanRecord(
        multiplier=(m << k) // count, shift=shift - k, rounding=ctx.quant.rounding, **common))


def _centered_sum(rec: QMeanRecord, x: np.ndarray) -> np.ndarray:
    """sum(q) - n * z_in over the reduced axes, in int64."""
    total = np.add.reduce(x, axis=rec.axes, dtype=np.int64, keepdims=rec.keep_dims)
    total -= rec.offset
    return total


def eval_mean_fixed(rec: FixedMeanRecord, inputs, outputs) -> None:
    total = _centered_sum(rec, inputs[0])
    values = qm.multiply_by_quantized_multiplier(total, rec.multiplier, rec.shift, rec.rounding)
    values += rec.z_out
    clamp_out(np.asarray(values, np.int64), rec.lo, rec.hi, outputs[0])


def eval_mean_xnn(rec: XnnMeanRecord, inputs, outputs) -> None:
    total = _centered_sum(rec, inputs[0])
    values = np.rint(total.astype(np.float32) * rec.scale).astype(np.int64)
    values += rec.z_out
    clamp_out(np.asarray(values, np.int64), rec.lo, rec.hi, outputs[0])


def _reduction(name: str, reducer: Callable, dtypes: tuple = _NUMERIC, **facts) -> OpDef:
    return OpDef(name, float=Kernel(_make_prepare(reducer, dtypes), eval), reduction=True,
                 **facts)


# Versions (op_version.cc), by the input's type: MEAN, REDUCE_MAX and REDUCE_MIN int16 3,
# int8 2; SUM int8 2; REDUCE_PROD int8 / int16 2; REDUCE_ANY / REDUCE_ALL have no case: 1.
OPS = (
    _reduction("MEAN", _mean, integer=Kernel(prepare_mean_quantized, run_chosen),
               quant=QuantRule.OWN_RANGE, version=INT8_2_INT16_3),
    _reduction("SUM", _sum, version=INT8_2),
    _reduction("REDUCE_MAX", _max, version=INT8_2_INT16_3),
    _reduction("REDUCE_MIN", _min, version=INT8_2_INT16_3),
    _reduction("REDUCE_PROD", _prod, version=INT8_OR_INT16_2),
    _reduction("REDUCE_ANY", _any, (np.bool_,)),
    _reduction("REDUCE_ALL", _all, (np.bool_,)),
)
