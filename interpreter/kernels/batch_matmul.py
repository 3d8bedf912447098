"""BATCH_MATMUL: batched lhs @ rhs with broadcast batch dimensions; float32, dynamic-range
(hybrid: float32 lhs, constant int8 rhs), and full-integer int8 and int16.

Matches tensorflow/lite/kernels/batch_matmul.cc (ResizeOutputTensor, EvalHybrid,
EvalQuantized) and reference_ops::BatchMatMul (tensorflow/lite/kernels/internal/
reference/batch_matmul.h):

* both operands have rank >= 2; the last two dimensions are the matrices, the ones
  before are batch dimensions that broadcast like numpy (aligned from the right, 1
  stretches; TFLite allows up to 5 dimensions in all);
* adj_x / adj_y (BatchMatMulOptions) transpose the matrices of lhs / rhs first;
* output = broadcast(batch dims) + [lhs rows, rhs columns].

float32: one np.matmul on (transposed) views into the output.

Hybrid (EvalHybrid): every lhs row (of the depth, after adj_x) is quantized on its own,
symmetric or with ``asymmetric_quantize_inputs`` asymmetric; the rhs is int8 per tensor;
``out = acc * (s_r * s_w)`` (hybrid/). With more than one batch dimension that is
not broadcast, LiteRT's reference kernel reads the scale, offset and weight column sums
of another matrix than the one it multiplies (_batch_strides): REFERENCE reproduces
that. The DEFAULT kernel set is XNNPACK's dynamically quantized batch matrix multiply
(qd8 per lhs row, ``(acc * s_r) * s_w``), which does not.

int8 / int16 (EvalQuantized with reference_ops::BatchMatMul; the optimized kernel
rounds alike):

    acc = sum_k (lhs - zp_lhs) * (rhs - zp_rhs)        (int32 for int8, int64 for int16)
    out = clamp(MultiplyByQuantizedMultiplier(acc, M) + zp_out)
    M = double(float(s_lhs * s_rhs)) / double(s_out)    (GetQuantizedConvolutionMultipler)

int16 has zero points 0 and takes the int64 overload of MultiplyByQuantizedMultiplier
(its 16-bit mantissa makes the float32 product matter). DEFAULT: XNNPACK takes int8 with
a zero rhs zero point, ``rint(float32(acc) * float32((s_lhs * s_rhs) / s_out))``.
Both operands per tensor; either may be a constant or computed. The sums are exact in
float64 BLAS.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import quant_math as qm
from .base import Chosen, Kernel, OpContext, OutputSpec, TensorInfo, run_chosen, temporary
from .hybrid import (HybridOutput, InputQuant, Order, input_quant,
                     quantize_rows, require_int8_weights, weight_scales)
from .opdef import OpDef, QuantRule
from .common.requantize import qparams, require_same_type
from .versions import OpSignature, T


def _shapes(ctx: OpContext, a: TensorInfo, b: TensorInfo) -> tuple[bool, bool, tuple]:
    """(adj_x, adj_y, output shape), checked."""
    if a.rank < 2 or b.rank < 2:
        raise ctx.shape_error(
            f"lhs {list(a.shape)} and rhs {list(b.shape)} must have at least 2 dimensions"
        )
    adj_x = bool(ctx.option("adj_x", False))
    adj_y = bool(ctx.option("adj_y", False))
    rows, inner_a = a.shape[-2:][::-1] if adj_x else a.shape[-2:]
    inner_b, cols = b.shape[-2:][::-1] if adj_y else b.shape[-2:]
    if inner_a != inner_b:
        raise ctx.shape_error(
            f"lhs {list(a.shape)} (adj_x={adj_x}) and rhs {list(b.shape)} (adj_y={adj_y}) "
            f"have different inner dimensions ({inner_a} vs {inner_b})"
        )
    try:
        batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    except ValueError:
        raise ctx.shape_error(
            f"batch dimensions of lhs {list(a.shape)} and rhs {list(b.shape)} do not broadcast"
        ) from None
    return adj_x, adj_y, batch + (rows, cols)


def _operands(a: np.ndarray, b: np.ndarray, adj_x: bool, adj_y: bool):
    return (a.swapaxes(-1, -2) if adj_x else a), (b.swapaxes(-1, -2) if adj_y else b)


# --------------------------------------------------------------------------- float32


@dataclass(frozen=True)
class BatchMatMulRecord:
    adj_x: bool
    adj_y: bool


def prepare(ctx: OpContext):
    ctx.check_arity(2, 2)
    a, b = ctx.input(0), ctx.input(1)
    ctx.require_dtype(a, (np.float32,), "lhs")
    ctx.require_dtype(b, (np.float32,), "rhs")
    adj_x, adj_y, out_shape = _shapes(ctx, a, b)
    return (OutputSpec(out_shape, a.dtype),), BatchMatMulRecord(adj_x, adj_y)


def eval(rec: BatchMatMulRecord, inputs, outputs) -> None:
    a, b = _operands(inputs[0], inputs[1], rec.adj_x, rec.adj_y)
    np.matmul(a, b, out=outputs[0])


# --------------------------------------------------------------------------- hybrid


@dataclass(frozen=True, kw_only=True)
class HybridRecord:
    adj_x: bool
    lhs_shape: tuple  # after adj_x: (..., rows, depth)
    quant: InputQuant
    x_q: np.ndarray  # (lhs rows, depth) float64 scratch: q - o
    rhs: np.ndarray  # (..., depth, cols) float64
    output: HybridOutput


@dataclass(frozen=True, kw_only=True)
class HybridReferenceRecord(HybridRecord):
    """LiteRT's reference hybrid kernel, including how it indexes the per-row scales,
    offsets and the weights' column sums per batch (below)."""

    offsets: np.ndarray  # (lhs rows,) float64 scratch: o per row
    row_index: np.ndarray  # (out batch..., rows, 1): the scale / offset each output row reads
    col_sums: np.ndarray  # (out batch..., 1, cols) float64: the column sums it reads


def _batch_strides(batch: tuple, out_batch: tuple, step: int) -> np.ndarray:
    """reference_ops::BatchMatMul (hybrid) steps its scale / offset / row-sum pointers
    by ``step`` -- one matrix -- along every batch dimension the operand does not
    broadcast (5-D extended shapes, three batch dimensions), not by that dimension's
    stride: index = step * (b0 + b1 + b2) over the dimensions the operand has. With one
    non-broadcast batch dimension that is the right matrix; with more, LiteRT reads
    another one (measured: the installed LiteRT's BUILTIN_REF differs from its XNNPACK
    there by whole units). Returns the start index per output batch (out_batch shape)."""
    full = (1,) * (3 - len(out_batch)) + tuple(out_batch)
    own = (1,) * (3 - len(batch)) + tuple(batch)
    grids = np.meshgrid(*(np.arange(d) for d in full), indexing="ij")
    start = sum(g * (step if d != 1 else 0) for g, d in zip(grids, own))
    return np.asarray(start, np.int64).reshape(out_batch)


def _reference_indexing(lhs_shape: tuple, rhs: np.ndarray, adj_x: bool):
    """(row_index, col_sums) of HybridReferenceRecord, broadcasting against the output.

    Without adj_x, batch_matmul.cc first compresses a rhs [..., 1, K, N] with a lhs
    [..., Q, M, K] of rank > 2 into rhs [..., K, N] and lhs [..., Q * M, K] (the same
    products); the indexing of _batch_strides applies to those shapes (measured)."""
    rows, cols = lhs_shape[-2], rhs.shape[-1]
    merged = not adj_x and len(lhs_shape) > 2 and rhs.ndim > 2 and rhs.shape[-3] == 1
    if merged:
        lhs_shape = lhs_shape[:-3] + (lhs_shape[-3] * rows, lhs_shape[-1])
        rhs = rhs.reshape(rhs.shape[:-3] + rhs.shape[-2:])
    m = lhs_shape[-2]
    out_batch = tuple(np.broadcast_shapes(lhs_shape[:-2], rhs.shape[:-2]))
    row_index = _batch_strides(lhs_shape[:-2], out_batch, m)[..., None] + np.arange(m)
    # (LiteRT computes the sums of the matrices of batch dimensions 1 and 2 only: with a
    # 5-D rhs whose first dimension is > 1, asymmetric inputs read sums it never wrote
    # -- not reproducible; edgelite uses the true sums there.)
    sums = rhs.sum(axis=-2).reshape(-1)  # per weight matrix, per column
    col_index = _batch_strides(rhs.shape[:-2], out_batch, cols)[..., None] + np.arange(cols)
    col_sums = sums[col_index][..., None, :]  # out_batch + (1, N)
    if merged:  # back to [..., Q, M] rows; the column sums are the same for every Q
        row_index = row_index.reshape(out_batch + (-1, rows))
        col_sums = col_sums[..., None, :, :]
    return row_index[..., None], col_sums


def prepare_hybrid(ctx: OpContext):
    ctx.check_arity(2, 2)
    a, b = ctx.input(0), ctx.input(1)
    adj_x, adj_y, out_shape = _shapes(ctx, a, b)
    rhs = require_int8_weights(ctx, b, "rhs")
    rhs = np.ascontiguousarray(rhs.swapaxes(-1, -2) if adj_y else rhs)  # (..., depth, cols)
    scale = weight_scales(ctx, b, out_shape[-1], b.rank - 1, per_channel_ok=False)
    xnnpack = not ctx.quant.reference
    lhs_shape = a.shape[:-2] + (a.shape[-2:][::-1] if adj_x else a.shape[-2:])
    depth, rows, cols = lhs_shape[-1], lhs_shape[-2], out_shape[-1]
    lhs_rows = int(np.prod(lhs_shape)) // max(depth, 1)
    common = dict(
        adj_x=adj_x, lhs_shape=lhs_shape,
        quant=input_quant(ctx, xnnpack, bool(ctx.option("asymmetric_quantize_inputs", False))),
        x_q=temporary(ctx, (lhs_rows, depth), np.float64), rhs=rhs,
        output=HybridOutput(Order.FMA if xnnpack else Order.SCALE_FIRST, scale, None, None))
    spec = (OutputSpec(out_shape, np.dtype(np.float32)),)
    if xnnpack:
        return spec, Chosen(eval_hybrid, HybridRecord(**common))
    row_index, col_sums = _reference_indexing(lhs_shape, rhs, adj_x)
    record = HybridReferenceRecord(
        **common, offsets=temporary(ctx, (lhs_rows,), np.float64),
        row_index=row_index, col_sums=col_sums)
    return spec, Chosen(eval_hybrid_reference, record)


def eval_hybrid(rec: HybridRecord, inputs, outputs) -> None:
    a = inputs[0].swapaxes(-1, -2) if rec.adj_x else inputs[0]
    row_scale = quantize_rows(a.reshape(rec.x_q.shape), rec.quant, rec.x_q)
    acc = np.matmul(rec.x_q.reshape(rec.lhs_shape), rec.rhs)
    rec.output(acc, row_scale.reshape(rec.lhs_shape[:-1] + (1,)), outputs[0])


def eval_hybrid_reference(rec: HybridReferenceRecord, inputs, outputs) -> None:
    """acc = sum_k q * w - colsum * o, then * (s * s_w), each output row reading the
    scale and offset of row_index and the column sums of col_sums (_batch_strides)."""
    a = inputs[0].swapaxes(-1, -2) if rec.adj_x else inputs[0]
    row_scale = quantize_rows(a.reshape(rec.x_q.shape), rec.quant, rec.x_q, rec.offsets)
    acc = np.matmul(rec.x_q.reshape(rec.lhs_shape), rec.rhs)
    acc -= rec.col_sums * rec.offsets[rec.row_index]
    rec.output(acc, row_scale[rec.row_index], outputs[0])


# --------------------------------------------------------------------------- int8 / int16


@dataclass(frozen=True, kw_only=True)
class QuantizedRecord:
    adj_x: bool
    adj_y: bool
    zp_lhs: int
    zp_rhs: int
    zp_out: int
    multiplier: int
    shift: int
    wide: bool  # int16: int64 accumulator and the int64 MultiplyByQuantizedMultiplier
    lo: int
    hi: int


def prepare_quantized(ctx: OpContext):
    ctx.check_arity(2, 2)
    a, b, out = ctx.input(0), ctx.input(1), ctx.outputs[0]
    ctx.require_dtype(a, (np.int8, np.int16), "lhs")
    require_same_type(ctx, a, b)
    require_same_type(ctx, a, out)
    adj_x, adj_y, out_shape = _shapes(ctx, a, b)
    pa, pb, po = (qparams(ctx, t, role) for t, role in ((a, "lhs"), (b, "rhs"), (out, "output")))
    wide = a.dtype == np.int16
    if wide and (pa.zero_point or pb.zero_point or po.zero_point):
        raise ctx.unsupported("int16 BATCH_MATMUL needs zero points 0 (TFLite's 16x8 spec)")
    info = np.iinfo(a.dtype)
    if not ctx.quant.reference and not wide and pb.zero_point == 0:
        # XNNPACK takes int8 BATCH_MATMUL with a symmetric rhs: its fp32 requantization,
        # rint(float32(acc) * float32((s_lhs * s_rhs) / s_out)).
        scale = np.float32(np.float32(pa.scale) * np.float32(pb.scale)) / np.float32(po.scale)
        return (OutputSpec(out_shape, a.dtype),), Chosen(eval_xnnpack, XnnpackRecord(
            adj_x=adj_x, adj_y=adj_y, zp_lhs=pa.zero_point, zp_out=po.zero_point,
            scale=np.float32(scale), lo=int(info.min), hi=int(info.max)))
    # GetQuantizedConvolutionMultipler: the lhs * rhs scale product is a float32.
    real = float(np.float32(pa.scale) * np.float32(pb.scale)) / po.scale
    multiplier, shift = qm.quantize_multiplier(real, ctx.quant.rounding)
    record = QuantizedRecord(adj_x=adj_x, adj_y=adj_y, zp_lhs=pa.zero_point,
                             zp_rhs=pb.zero_point, zp_out=po.zero_point,
                             multiplier=multiplier, shift=shift, wide=wide,
                             lo=int(info.min), hi=int(info.max))
    return (OutputSpec(out_shape, a.dtype),), Chosen(eval_quantized, record)


def eval_quantized(rec: QuantizedRecord, inputs, outputs) -> None:
    a, b = _operands(inputs[0], inputs[1], rec.adj_x, rec.adj_y)
    # Exact in float64: |a - zp| * |b - zp| <= 2^30 and depths far below 2^22.
    acc = np.matmul(a.astype(np.float64) - rec.zp_lhs, b.astype(np.float64) - rec.zp_rhs)
    acc = acc.astype(np.int64)
    if rec.wide:
        scaled = qm.multiply_by_quantized_multiplier_int64(acc, rec.multiplier, rec.shift)
    else:
        scaled = qm.multiply_by_quantized_multiplier(qm.wrap_int32(acc), rec.multiplier,
                                                     rec.shift)
    np.copyto(outputs[0], np.clip(scaled + rec.zp_out, rec.lo, rec.hi), casting="unsafe")


@dataclass(frozen=True, kw_only=True)
class XnnpackRecord:
    adj_x: bool
    adj_y: bool
    zp_lhs: int
    zp_out: int
    scale: np.float32  # (s_lhs * s_rhs) / s_out in float32
    lo: int
    hi: int


def eval_xnnpack(rec: XnnpackRecord, inputs, outputs) -> None:
    a, b = _operands(inputs[0], inputs[1], rec.adj_x, rec.adj_y)
    acc = np.matmul(a.astype(np.float64) - rec.zp_lhs, b.astype(np.float64))
    scaled = np.rint(acc.astype(np.float32) * rec.scale)
    np.copyto(outputs[0], np.clip(scaled + rec.zp_out, rec.lo, rec.hi), casting="unsafe")


def version(sig: OpSignature) -> int:
    """op_version.cc, BATCH_MATMUL: int16 3; int8 2; float with int8 weights (hybrid) and
    asymmetric_quantize_inputs 4."""
    if sig.input(0).type == T.INT16:
        return 3
    if sig.input(0).type == T.INT8:
        return 2
    if sig.types() == (T.FLOAT32, T.INT8, T.FLOAT32) and \
            sig.option("asymmetric_quantize_inputs", False):
        return 4
    return 1


_QUANTIZED = Kernel(prepare_quantized, run_chosen)

OPS = (
    # Not per sample: [N, N] @ [N, C] leads with N and mixes every sample.
    OpDef("BATCH_MATMUL", uint8=False,  # batch_matmul.cc: float32, int8, int16
          float=Kernel(prepare, eval),
          hybrid=Kernel(prepare_hybrid, run_chosen),
          integer=_QUANTIZED, int16=_QUANTIZED,  # one kernel serves both
          quant=QuantRule.OWN_RANGE,
          version=version),
)
