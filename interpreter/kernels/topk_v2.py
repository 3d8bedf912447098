"""TOPK_V2: the k largest values along the last axis, and their indices.

Matches tensorflow/lite/kernels/topk_v2.cc (ResizeOutput / TopContainer / TopK):

* input 0: float32, int8, uint8, int16, int32 or int64, rank >= 1; output 0 (the values)
  has its type, output 1 (the indices) is int32 or int16 as the file declares; both have
  the input's shape with the last dimension replaced by k. Quantized int8 / uint8 values
  are selected as they are (the order of the codes is the order of the real values);
* input 1: k, int32 or int16, one element, in [0, last dimension]; constant here (it
  fixes the output shapes);
* the result is always sorted: by value, largest first, and equal values by index,
  smallest first (TopContainer::compare_fun: ``values[b] < values[a]``, ties ``a < b``).
  That order is total for every input without NaN, so any correct sort gives LiteRT's
  result: eval() takes a stable ascending argsort of each row reversed, which read
  backwards is (value descending, index ascending). -0.0 and +0.0 are equal values.

NaN compares neither smaller nor larger than anything, which breaks compare_fun's order:
LiteRT's result for a row with NaN then depends on its heap and sort algorithms. edgelite
ranks NaN above every number (numpy sorts NaN last), so such rows are well defined but
may differ from LiteRT's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Kernel, OpContext, OutputSpec, num_elements
from .opdef import TYPE_GENERIC, OpDef, QuantRule
from .versions import OpSignature, T
from edgelite.names import quoted

DTYPES = (np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64)


@dataclass(frozen=True)
class TopKRecord:
    rows: tuple[int, int]  # the input viewed as (rows, row size)
    k: int


def prepare(ctx: OpContext):
    ctx.check_arity(2, 2, num_outputs=2)
    x, k_t = ctx.input(0), ctx.input(1)
    ctx.require_dtype(x, DTYPES, "input")
    ctx.require_dtype(k_t, (np.int32, np.int16), "k")
    if num_elements(k_t.shape) != 1:
        raise ctx.shape_error(f"k {quoted(k_t.name)} must hold one value, has shape "
                              f"{list(k_t.shape)}")
    if x.rank < 1:
        raise ctx.shape_error(f"input {quoted(x.name)} must have at least one dimension")
    k = int(ctx.constant_input(1, "k").reshape(-1)[0])
    n = x.shape[-1]
    if not 0 <= k <= n:
        raise ctx.shape_error(f"k = {k} must lie in [0, {n}], the size of the last dimension "
                              f"of {list(x.shape)}")
    index_type = ctx.output_dtype(1)
    if index_type.type not in (np.int32, np.int16):
        raise ctx.dtype_error(f"output 1 (the indices) must be int32 or int16, the file "
                              f"declares {index_type.name}")
    rows = num_elements(x.shape[:-1])
    shape = x.shape[:-1] + (k,)
    return (OutputSpec(shape, x.dtype), OutputSpec(shape, index_type)), TopKRecord((rows, n), k)


def eval(rec: TopKRecord, inputs, outputs) -> None:
    rows, n = rec.rows
    x = inputs[0].reshape(rec.rows)
    values, indices = outputs[0].reshape(rows, rec.k), outputs[1].reshape(rows, rec.k)
    ascending = np.argsort(x[:, ::-1], axis=1, kind="stable")
    top = (n - 1) - ascending[:, ::-1][:, :rec.k]
    np.copyto(indices, top, casting="unsafe")  # int16 indices: LiteRT's Tidx cast
    np.copyto(values, np.take_along_axis(x, top, axis=1))


def version(sig: OpSignature) -> int:
    """op_version.cc, TOPK_V2: int16 values, k or indices 3; int8 values 2."""
    if T.INT16 in (sig.input(0).type, sig.input(1).type, sig.output(1).type):
        return 3
    return 2 if sig.input(0).type == T.INT8 else 1


OPS = (
    # Selects values: the quantizer gives the values the input's parameters. Rows are the
    # last axis: a rank-1 input is one row across the samples of a batch (last_axis).
    OpDef("TOPK_V2", shape_operands=(1,), float=Kernel(prepare, eval), integer=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT, per_sample=True, last_axis=True, exact=True,
          version=version),
)
