"""EMBEDDING_LOOKUP: out[i] = table[ids[i]] -- float32, int8 / uint8 / int32 row copies, and
dynamic-range (hybrid): an int8 / uint8 table with a float32 output.

Matches tensorflow/lite/kernels/embedding_lookup.cc:

* ids: 1-D int32; the table has rank >= 2; output shape = [len(ids)] + table.shape[1:];
* every id must lie in [0, rows): LiteRT fails the invoke otherwise ("index out of
  bounds"), so does edgelite (one ShapeError naming the op and the bad id);
* same output type as the table (EvalSimple): the row bytes are copied -- a quantized
  table's values are copied as they are, whatever the output's parameters;
* int8 / uint8 table, float32 output (EvalHybrid): the row is dequantized with the
  table's scale (zero point 0, which Prepare requires), one per tensor or one per row
  (scales along dimension 0): ``out = float(double(q) * double(scale))``. EvalHybrid
  reads a uint8 table through an int8 pointer, so values >= 128 count as q - 256
  (measured with the installed LiteRT); edgelite does the same.

INT4 (packed) tables have no numpy type here and are refused.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.errors import ShapeError
from edgelite.names import quoted
from .base import Kernel, OpContext, OutputSpec, num_elements
from .opdef import OpDef
from .versions import OpSignature, T

COPIED = (np.float32, np.int8, np.uint8, np.int32)


@dataclass(frozen=True)
class EmbeddingRecord:
    rows: int
    row_size: int
    scale: np.ndarray | None  # hybrid: (rows, 1) float64 dequantization scales
    where: str  # the op, for errors raised by invoke()


def prepare(ctx: OpContext):
    ctx.check_arity(2, 2)
    ids, table = ctx.input(0), ctx.input(1)
    out = ctx.outputs[0]
    ctx.require_dtype(ids, (np.int32,), "ids")
    if ids.rank != 1:
        raise ctx.shape_error(f"ids {quoted(ids.name)} must be 1-D, not {list(ids.shape)}")
    if table.dtype is None or table.dtype.type not in COPIED:
        name = "this type" if table.dtype is None else table.dtype.name
        raise ctx.unsupported(
            f"table {quoted(table.name)} has {name}; this kernel supports float32, int8, "
            "uint8 and int32 tables")
    if table.rank < 2:
        raise ctx.shape_error(
            f"table {quoted(table.name)} must have at least 2 dimensions, not "
            f"{list(table.shape)}")
    rows = table.shape[0]
    scale = None
    if table.dtype.type in (np.int8, np.uint8) and out.dtype == np.float32:
        scale = _row_scales(ctx, table, rows)
    elif out.dtype != table.dtype:
        raise ctx.dtype_error(
            f"output {quoted(out.name)} is {out.dtype.name} but the table is "
            f"{table.dtype.name}; only an int8 / uint8 table may give float32 (hybrid)")
    shape = (ids.shape[0],) + tuple(table.shape[1:])
    record = EmbeddingRecord(rows=rows, row_size=num_elements(table.shape[1:]), scale=scale,
                             where=ctx.describe())
    return (OutputSpec(shape, np.dtype(np.float32) if scale is not None else table.dtype),), \
        record


def _row_scales(ctx: OpContext, table, rows: int) -> np.ndarray:
    q = table.quantization
    if q is None or len(q.scale) == 0:
        raise ctx.unsupported(
            f"dynamic-range (hybrid) table {quoted(table.name)} has no quantization "
            "parameters")
    if any(int(z) != 0 for z in q.zero_point):
        raise ctx.unsupported(
            f"dynamic-range (hybrid) table {quoted(table.name)} must have zero point 0")
    scales = np.asarray(q.scale, np.float32).astype(np.float64)
    if scales.size not in (1, rows) or (scales.size > 1 and q.quantized_dimension != 0):
        raise ctx.shape_error(
            f"table {quoted(table.name)} has {scales.size} scales on dimension "
            f"{q.quantized_dimension}; expected 1, or {rows} on dimension 0")
    return np.broadcast_to(scales, (rows,)).reshape(rows, 1).copy()


def eval(rec: EmbeddingRecord, inputs, outputs) -> None:
    ids, table = inputs
    if ids.size and (ids.min() < 0 or ids.max() >= rec.rows):
        bad = ids[(ids < 0) | (ids >= rec.rows)][0]
        raise ShapeError(
            f"{rec.where}: id {int(bad)} is out of bounds; ids must lie in [0, {rec.rows})")
    rows = table.reshape(rec.rows, rec.row_size)
    out = outputs[0].reshape(ids.size, rec.row_size)
    if rec.scale is None:
        np.take(rows, ids, axis=0, out=out)
    else:  # EvalHybrid: the table read as int8
        q = rows.view(np.int8)[ids].astype(np.float64)
        np.multiply(q, rec.scale[ids], out=out, casting="same_kind")


def version(sig: OpSignature) -> int:
    """op_version.cc, EMBEDDING_LOOKUP: an int4 table or one quantized per channel 4,
    else 1."""
    table = sig.input(1)
    return 4 if table.type == T.INT4 or table.scales > 1 else 1


OPS = (
    # Not per sample: the ids' dimension is not the table's batch.
    OpDef("EMBEDDING_LOOKUP", float=Kernel(prepare, eval), version=version),
)
