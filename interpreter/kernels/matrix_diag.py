"""MATRIX_DIAG and MATRIX_SET_DIAG: the main diagonal of the innermost matrices.

Matches tensorflow/lite/kernels/matrix_diag.cc and matrix_set_diag.cc (FillDiagImpl) as
LiteRT runs them (both kernel sets share the one implementation):

* MATRIX_DIAG: input [..., N] (rank >= 1) -> output [..., N, N] with the input on the
  main diagonal and 0 elsewhere -- the stored value 0, so a quantized tensor gets code 0
  off the diagonal, whatever its zero point;
* MATRIX_SET_DIAG: input [..., R, C] (rank >= 2) and a diagonal of the input's type ->
  the input with its main diagonal replaced. FillDiagImpl reads batch * min(R, C)
  diagonal values in order and checks nothing else: edgelite requires exactly that many
  (LiteRT reads past a shorter diagonal);
* element types: float32, int8, uint8, int16, int32, int64. LiteRT's switch falls back to
  float for any other type and then moves 4-byte elements (bool / float16 come out
  scrambled, measured): refused here;
* both ops have no operator version rule in op_version.cc (version 1).

TF's converter writes MATRIX_DIAG / MATRIX_SET_DIAG for tf.linalg.diag / set_diag with
k = 0, square output and zero padding only; converter/lower/linalg.py lowers the other
cases to GATHER / SELECT_V2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.names import quoted
from .base import Kernel, OpContext, OutputSpec, num_elements
from .opdef import TYPE_GENERIC, OpDef, QuantRule

TYPES = (np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64)


@dataclass(frozen=True)
class DiagRecord:
    matrices: int  # batch: the number of innermost matrices
    rows: int
    cols: int

    @property
    def diagonal(self) -> slice:
        """The main diagonal's flat positions in one row-major R x C matrix: i * (C + 1)
        for i < min(R, C)."""
        return slice(0, min(self.rows, self.cols) * (self.cols + 1), self.cols + 1)


def prepare_diag(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, TYPES, "input")
    if x.rank < 1:
        raise ctx.shape_error(f"input {quoted(x.name)} is a scalar; MATRIX_DIAG needs at "
                              "least one dimension")
    n = x.shape[-1]
    record = DiagRecord(num_elements(x.shape[:-1]), n, n)
    return (OutputSpec(tuple(x.shape) + (n,), x.dtype),), record


def eval_diag(rec: DiagRecord, inputs, outputs) -> None:
    out = outputs[0].reshape(rec.matrices, rec.rows * rec.cols)
    out.fill(0)
    out[:, rec.diagonal] = inputs[0].reshape(rec.matrices, rec.rows)


def prepare_set_diag(ctx: OpContext):
    ctx.check_arity(2, 2)
    x, diag = ctx.input(0), ctx.input(1)
    ctx.require_dtype(x, TYPES, "input")
    if diag.dtype != x.dtype:
        raise ctx.dtype_error(f"diagonal {quoted(diag.name)} has type {diag.dtype.name}, the "
                              f"input {quoted(x.name)} {x.dtype.name}; they must be equal")
    if x.rank < 2:
        raise ctx.shape_error(f"input {quoted(x.name)} has shape {list(x.shape)}; "
                              "MATRIX_SET_DIAG needs at least two dimensions")
    rows, cols = x.shape[-2:]
    record = DiagRecord(num_elements(x.shape[:-2]), rows, cols)
    want = record.matrices * min(rows, cols)
    if num_elements(diag.shape) != want:
        raise ctx.shape_error(
            f"diagonal {quoted(diag.name)} has shape {list(diag.shape)}; the input "
            f"{quoted(x.name)} {list(x.shape)} takes {want} diagonal values "
            f"({list(x.shape[:-2]) + [min(rows, cols)]})")
    return (OutputSpec(tuple(x.shape), x.dtype),), record


def eval_set_diag(rec: DiagRecord, inputs, outputs) -> None:
    np.copyto(outputs[0], inputs[0])
    out = outputs[0].reshape(rec.matrices, rec.rows * rec.cols)
    out[:, rec.diagonal] = inputs[1].reshape(rec.matrices, -1)


OPS = (
    # Float only for the quantizer: the kernel writes the stored 0 off the diagonal, which
    # is 0.0 only for a zero point of 0. (A quantized file's raw codes run as in LiteRT.)
    # Not per sample: for a rank-1 input (rank-2 for MATRIX_SET_DIAG) dim 0 is a matrix
    # dimension.
    OpDef("MATRIX_DIAG", float=Kernel(prepare_diag, eval_diag)),
    # Moves values only: input, diagonal and output share one set of parameters.
    OpDef("MATRIX_SET_DIAG", float=Kernel(prepare_set_diag, eval_set_diag),
          integer=TYPE_GENERIC, quant=QuantRule.SHARED, exact=True),
)
