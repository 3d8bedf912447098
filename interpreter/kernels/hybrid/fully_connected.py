"""FULLY_CONNECTED, dynamic-range (hybrid): float32 input, int8 weights [units, depth]
(per tensor or per unit along axis 0), float32 bias and output.

Matches fully_connected.cc EvalHybrid / EvalHybridDense (REFERENCE: every input row
quantized by tensor_utils -- symmetric, or asymmetric with ``asymmetric_quantize_inputs``
-- then ``bias + acc * (s_r * s_w[u])`` as MatrixBatchVectorMultiplyAccumulate rounds it)
and the XNNPACK delegate's dynamically quantized fully connected (DEFAULT); hybrid/
has the arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..base import Kernel, OpContext, OutputSpec, temporary
from ..common.fc_geometry import fc_geometry
from . import (HybridOutput, InputQuant, Order, hybrid_output, input_quant, quantize_rows,
               require_int8_weights, weight_scales)


@dataclass(frozen=True, kw_only=True)
class HybridFCRecord:
    rows: int
    depth: int
    units: int
    quant: InputQuant
    x_q: np.ndarray  # (rows, depth) float64 scratch: q - o
    weights_t: np.ndarray  # (depth, units) float64
    acc: np.ndarray  # (rows, units) float64 scratch
    output: HybridOutput


def prepare(ctx: OpContext):
    ctx.check_arity(2, 3)
    x, w = ctx.input(0), ctx.input(1)
    rows, depth, units, out_shape = fc_geometry(ctx, x, w)
    weights = require_int8_weights(ctx, w)
    scales = weight_scales(ctx, w, units, 0)
    xnnpack = not ctx.quant.reference
    order = Order.FMA if xnnpack else Order.SCALE_FIRST
    output = hybrid_output(ctx, order, scales, ctx.optional_input(2))
    record = HybridFCRecord(
        rows=rows, depth=depth, units=units,
        quant=input_quant(ctx, xnnpack, bool(ctx.option("asymmetric_quantize_inputs", False))),
        x_q=temporary(ctx, (rows, depth), np.float64),
        weights_t=np.ascontiguousarray(weights.T), acc=temporary(ctx, (rows, units), np.float64),
        output=output)
    return (OutputSpec(out_shape, np.dtype(np.float32)),), record


def eval(rec: HybridFCRecord, inputs, outputs) -> None:
    row_scale = quantize_rows(inputs[0].reshape(rec.rows, rec.depth), rec.quant, rec.x_q)
    np.matmul(rec.x_q, rec.weights_t, out=rec.acc)
    rec.output(rec.acc, row_scale[:, None], outputs[0].reshape(rec.rows, rec.units))


KERNEL = Kernel(prepare, eval)
