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
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

from .base import Kernel, OpContext, OutputSpec, normalize_axis


@dataclass(frozen=True)
class ReduceRecord:
    reduce: Callable  # numpy reduction called as reduce(x, axis=, keepdims=, out=)
    axes: tuple[int, ...]
    keep_dims: bool


def _reducer(kind: str, dtype: np.dtype) -> Callable:
    """The numpy reduction for one op and dtype, with its start value bound."""
    if kind == "max":
        info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
        return partial(np.fmax.reduce, initial=info.min)
    if kind == "min":
        info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
        return partial(np.fmin.reduce, initial=info.max)
    if kind == "prod":
        return partial(np.prod, dtype=dtype)
    if kind in ("any", "all"):
        return np.any if kind == "any" else np.all
    if kind == "mean":
        return _float_mean if dtype.kind == "f" else _integer_mean
    return np.add.reduce


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


def _make_prepare(kind: str, dtypes: tuple):
    def prepare(ctx: OpContext):
        ctx.check_arity(2, 2)
        x = ctx.input(0)
        ctx.require_dtype(x, dtypes, "input")
        axes = resolve_axes(ctx, ctx.constant_input(1, "axis"), x.rank)
        keep_dims = bool(ctx.option("keep_dims", False))
        if keep_dims:
            shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        else:
            shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return (OutputSpec(shape, x.dtype),), ReduceRecord(_reducer(kind, x.dtype), axes, keep_dims)

    return prepare


def eval(rec: ReduceRecord, inputs, outputs) -> None:
    rec.reduce(inputs[0], axis=rec.axes, keepdims=rec.keep_dims, out=outputs[0])


_NUMERIC = (np.float32, np.int32, np.int64)

MEAN = Kernel(_make_prepare("mean", _NUMERIC), eval)
SUM = Kernel(_make_prepare("sum", _NUMERIC), eval)
REDUCE_MAX = Kernel(_make_prepare("max", _NUMERIC), eval)
REDUCE_MIN = Kernel(_make_prepare("min", _NUMERIC), eval)
REDUCE_PROD = Kernel(_make_prepare("prod", _NUMERIC), eval)
REDUCE_ANY = Kernel(_make_prepare("any", (np.bool_,)), eval)
REDUCE_ALL = Kernel(_make_prepare("all", (np.bool_,)), eval)
