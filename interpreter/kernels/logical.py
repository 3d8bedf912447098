"""Comparisons, logical ops and selection: LESS, LESS_EQUAL, GREATER, GREATER_EQUAL,
EQUAL, NOT_EQUAL, LOGICAL_AND, LOGICAL_OR, SELECT, SELECT_V2.

* Comparisons (tensorflow/lite/kernels/comparisons.cc): two inputs of one type with
  numpy broadcasting; a bool output. Quantized int8 / uint8 inputs are compared on a
  common fixed-point scale, so inputs with different parameters compare their real
  values (ComparisonQuantized with reference_ops::ComparisonWithScaling; every LiteRT
  kernel set runs it, XNNPACK takes no comparison):

      m, shift = QuantizeMultiplier(double(s))        per input, from its own scale
      v = MBQMSmallerThanOneExp((q - z) * 2^8, m, shift)
      out = op(v1, v2)

  int16 inputs with parameters are rescaled the same way by EQUAL and NOT_EQUAL (LiteRT
  2.3.0, measured: -1, 0 and 1 at scale 0.001 all rescale to 0 and compare equal) and
  compared raw by the other four.
* LOGICAL_AND / LOGICAL_OR (logical.cc): bool inputs, broadcasting. (LOGICAL_NOT, one
  bool input, is in unary.py.)
* SELECT_V2 (select.cc): condition (bool), x, y of one type, all three broadcast
  against each other; out = condition ? x : y. Quantized x / y are selected raw, so the
  quantizer gives x, y and the output one set of parameters (QuantRule.SHARED).
* SELECT (select.cc, v1): no broadcasting, except that a 1-D condition may pick whole
  slices along the first dimension of x / y.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import quant_math as qm
from .base import Chosen, Kernel, OpContext, OutputSpec, run_chosen
from .binary import same_type_pair
from .opdef import TYPE_GENERIC, OpDef, QuantRule
from .common.requantize import QUANTIZED, make_lut, qparams
from .versions import INT8_2, INT8_2_INT16_3, OpSignature, T, by_input_type
from edgelite.names import quoted

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


# --------------------------------------------------------------------------- quantized


@dataclass(frozen=True)
class QuantizedCompareRecord:
    ufunc: Callable
    rescale: tuple[Callable, Callable]  # each input's q -> v (int64)


def _rescaler(ctx: OpContext, t, role: str) -> Callable:
    """q -> v = MBQMSmallerThanOneExp((q - z) * 2^8, QuantizeMultiplier(s)): a table
    lookup for 8-bit inputs, the arithmetic for int16 ones."""
    p = qparams(ctx, t, role)
    if p.scale >= 1.0:
        # comparisons.cc then calls QuantizeMultiplierGreaterThanOne and shifts right by
        # a negative amount (undefined in C++): no defined result to reproduce.
        raise ctx.unsupported(f"{role} {quoted(t.name)} has scale {p.scale}; a quantized "
                              "comparison needs scales below 1")
    m, shift = qm.quantize_multiplier(p.scale, ctx.quant.rounding)

    def rescale(q):
        return qm.multiply_by_quantized_multiplier((q.astype(np.int64) - p.zero_point) * 256,
                                                   m, shift, ctx.quant.rounding)

    if t.dtype == np.int16:
        return rescale
    lut = make_lut(t.dtype, rescale, np.int64)
    return lambda q: lut.take(q.view(np.uint8))


def _prepare_compare_quantized(ctx: OpContext, ufunc: Callable, dtypes: tuple):
    a, b, shape = same_type_pair(ctx, dtypes)
    rescale = (_rescaler(ctx, a, "first input"), _rescaler(ctx, b, "second input"))
    return (OutputSpec(shape, np.dtype(np.bool_)),), QuantizedCompareRecord(ufunc, rescale)


def _compare_quantized(ufunc: Callable) -> Kernel:
    return Kernel(lambda ctx: _prepare_compare_quantized(ctx, ufunc, QUANTIZED),
                  eval_compare_quantized)


def eval_compare_quantized(rec: QuantizedCompareRecord, inputs, outputs) -> None:
    rec.ufunc(rec.rescale[0](inputs[0]), rec.rescale[1](inputs[1]), out=outputs[0])


def _equality16(ufunc: Callable) -> Kernel:
    """EQUAL / NOT_EQUAL on int16 with parameters: rescaled like int8 (comparisons.cc)."""
    def prepare_int16(ctx: OpContext):
        specs, rec = _prepare_compare_quantized(ctx, ufunc, (np.int16,))
        return specs, Chosen(eval_compare_quantized, rec)

    return Kernel(prepare_int16, run_chosen)


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
def _comparison(name: str, ufunc: Callable, version) -> OpDef:
    # EQUAL / NOT_EQUAL run 16x8 files; the quantizer's int16x8 mode keeps them int8.
    int16 = _equality16(ufunc) if name in ("EQUAL", "NOT_EQUAL") else None
    return OpDef(name, float=_binary(ufunc, _NUMERIC), integer=_compare_quantized(ufunc),
                 int16=int16, quantize16=False, quant=QuantRule.OWN_RANGE, per_sample=True,
                 comparison=True, broadcast_rank=4, version=version)


def _select_op(name: str, v2: bool, version) -> OpDef:
    # A 1-D condition picks whole samples (dim 0) of x / y: still one sample at a time.
    return OpDef(name, int16=TYPE_GENERIC,
                 float=_select(v2), integer=TYPE_GENERIC, quant=QuantRule.SHARED,
                 exact=True, per_sample=True, version=version,
                 broadcast_rank=5 if v2 else 0)  # select.cc: SELECT_V2 broadcasts up to 5-D


OPS = (
    _comparison("LESS", np.less, INT8_2_INT16_3),
    _comparison("LESS_EQUAL", np.less_equal, INT8_2),
    _comparison("GREATER", np.greater, INT8_2),
    _comparison("GREATER_EQUAL", np.greater_equal, INT8_2_INT16_3),
    _comparison("EQUAL", np.equal, by_input_type({T.INT16: 5, T.STRING: 3, T.INT8: 2})),
    _comparison("NOT_EQUAL", np.not_equal, by_input_type({T.INT16: 4, T.STRING: 3, T.INT8: 2})),
    OpDef("LOGICAL_AND", broadcast_rank=4,
          float=_binary(np.logical_and, (np.bool_,)), per_sample=True),
    OpDef("LOGICAL_OR", broadcast_rank=4,
          float=_binary(np.logical_or, (np.bool_,)), per_sample=True),
    _select_op("SELECT", False, select_version),
    _select_op("SELECT_V2", True, by_input_type({T.UINT32: 2})),
)
