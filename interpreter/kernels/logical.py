"""Comparisons, logical ops and selection: LESS, LESS_EQUAL, GREATER, GREATER_EQUAL,
EQUAL, NOT_EQUAL, LOGICAL_AND, LOGICAL_OR, SELECT, SELECT_V2.

* Comparisons (tensorflow/lite/kernels/comparisons.cc): two inputs of one type with
  numpy broadcasting; a bool output.
* LOGICAL_AND / LOGICAL_OR (logical.cc): bool inputs, broadcasting. (LOGICAL_NOT, one
  bool input, is in unary.py.)
* SELECT_V2 (select.cc): condition (bool), x, y of one type, all three broadcast
  against each other; out = condition ? x : y.
* SELECT (select.cc, v1): no broadcasting, except that a 1-D condition may pick whole
  slices along the first dimension of x / y.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .base import Kernel, OpContext, OutputSpec
from .binary import same_type_pair
from .opdef import OpDef
from .versions import INT8_2, INT8_2_INT16_3, OpSignature, T, by_input_type, first_version
from ..names import quoted

_NUMERIC = (np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_)


@dataclass(frozen=True)
class ElementwiseRecord:
    ufunc: Callable


def _broadcast(ctx: OpContext, *tensors) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*(t.shape for t in tensors)))
    except ValueError:
        shapes = ", ".join(str(list(t.shape)) for t in tensors)
        raise ctx.shape_error(f"input shapes {shapes} do not broadcast") from None


def _binary(ufunc: Callable, dtypes: tuple) -> Kernel:
    def prepare(ctx: OpContext):
        _, _, shape = same_type_pair(ctx, dtypes)
        return (OutputSpec(shape, np.dtype(np.bool_)),), ElementwiseRecord(ufunc)

    return Kernel(prepare, eval_binary)


def eval_binary(rec: ElementwiseRecord, inputs, outputs) -> None:
    rec.ufunc(inputs[0], inputs[1], out=outputs[0])


@dataclass(frozen=True)
class SelectRecord:
    condition_view: tuple[int, ...] | None  # SELECT with a 1-D condition: (n, 1, ..., 1)


def _select(v2: bool):
    def prepare(ctx: OpContext):
        ctx.check_arity(3, 3)
        cond, x, y = ctx.input(0), ctx.input(1), ctx.input(2)
        ctx.require_dtype(cond, (np.bool_,), "condition")
        if x.dtype != y.dtype:
            raise ctx.dtype_error(
                f"x {quoted(x.name)} is {x.dtype.name}, y {quoted(y.name)} is {y.dtype.name}"
            )
        if v2:
            return (OutputSpec(_broadcast(ctx, cond, x, y), x.dtype),), SelectRecord(None)
        view = None
        if cond.rank == 1 and x.rank > 1 and cond.shape[0] == x.shape[0]:
            view = cond.shape + (1,) * (x.rank - 1)
        elif cond.shape != x.shape:
            raise ctx.shape_error(
                f"condition {list(cond.shape)} must match x {list(x.shape)} (or be 1-D over "
                "its first dimension)"
            )
        if x.shape != y.shape:
            raise ctx.shape_error(f"x {list(x.shape)} and y {list(y.shape)} must match")
        return (OutputSpec(x.shape, x.dtype),), SelectRecord(view)

    return Kernel(prepare, eval_select)


def eval_select(rec: SelectRecord, inputs, outputs) -> None:
    cond, x, y = inputs
    if rec.condition_view is not None:
        cond = cond.reshape(rec.condition_view)
    np.copyto(outputs[0], y)
    np.copyto(outputs[0], x, where=cond)


def select_version(sig: OpSignature) -> int:
    """op_version.cc, SELECT: uint32 input 0 4; any of the three inputs 5-D 3; int8 input
    0 2 (input 0 is the bool condition, so these type cases never match in practice)."""
    if sig.input(0).type == T.UINT32:
        return 4
    if any(sig.input(i).rank == 5 for i in range(3)):
        return 3
    return 2 if sig.input(0).type == T.INT8 else 1


# Versions (op_version.cc), by input 0's type: LESS / GREATER_EQUAL int16 3, int8 2;
# LESS_EQUAL / GREATER int8 2; EQUAL int16 5, string 3, int8 2; NOT_EQUAL int16 4, string
# 3, int8 2; SELECT_V2 uint32 2; LOGICAL_AND / LOGICAL_OR have no case: 1.
OPS = tuple(OpDef(name, float=kernel, per_sample=True, version=version)
            for name, kernel, version in (
    ("LESS", _binary(np.less, _NUMERIC), INT8_2_INT16_3),
    ("LESS_EQUAL", _binary(np.less_equal, _NUMERIC), INT8_2),
    ("GREATER", _binary(np.greater, _NUMERIC), INT8_2),
    ("GREATER_EQUAL", _binary(np.greater_equal, _NUMERIC), INT8_2_INT16_3),
    ("EQUAL", _binary(np.equal, _NUMERIC), by_input_type({T.INT16: 5, T.STRING: 3, T.INT8: 2})),
    ("NOT_EQUAL", _binary(np.not_equal, _NUMERIC),
     by_input_type({T.INT16: 4, T.STRING: 3, T.INT8: 2})),
    ("LOGICAL_AND", _binary(np.logical_and, (np.bool_,)), first_version),
    ("LOGICAL_OR", _binary(np.logical_or, (np.bool_,)), first_version),
    # A 1-D condition picks whole samples (dim 0) of x / y: still one sample at a time.
    ("SELECT", _select(v2=False), select_version),
    ("SELECT_V2", _select(v2=True), by_input_type({T.UINT32: 2})),
))
