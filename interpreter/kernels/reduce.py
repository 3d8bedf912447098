"""MEAN, SUM, REDUCE_MAX, REDUCE_MIN over constant axes, with keep_dims.

Matches tensorflow/lite/kernels/reduce.cc:

* the axes are the 2nd input (int32 / int64, scalar or 1-D); negative axes count from
  the end (axis + rank) and repeated axes count once (ResizeOutputTensor);
* keep_dims keeps every reduced dimension as 1, otherwise they are dropped;
* a non-constant axis tensor makes the output dynamic in TFLite -- not supported here;
* REDUCE_MAX / REDUCE_MIN start from lowest() / max() and use ``in > acc ? in : acc``,
  which skips NaN like numpy's fmax / fmin reductions;
* MEAN is float32 only: sum over the reduced elements divided by their count.
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
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    if kind == "max":
        return partial(np.fmax.reduce, initial=info.min)
    if kind == "min":
        return partial(np.fmin.reduce, initial=info.max)
    return np.mean if kind == "mean" else np.sum


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

MEAN = Kernel(_make_prepare("mean", (np.float32,)), eval)
SUM = Kernel(_make_prepare("sum", _NUMERIC), eval)
REDUCE_MAX = Kernel(_make_prepare("max", _NUMERIC), eval)
REDUCE_MIN = Kernel(_make_prepare("min", _NUMERIC), eval)
