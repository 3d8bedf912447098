"""FULLY_CONNECTED: out = in[-1, I] @ W[O, I]^T + bias, then the fused clamp; float32 and
int8 / uint8.

Matches tensorflow/lite/kernels/fully_connected.cc (Prepare / EvalFloat / EvalQuantized)
and reference_ops::FullyConnected (tensorflow/lite/kernels/internal/reference/
fully_connected.h):

* weights are [num_units O, input_depth I] (DEFAULT weights_format only);
* the input is flattened to [batch = NumElements(input) / I, I];
* output shape is [batch, O], or with keep_num_dims the input shape with its last
  dimension replaced by O;
* bias is optional (input 2 may be omitted with -1).

float32: constant weights are transposed once in prepare() to a contiguous [I, O]
matrix, so invoke() is a single BLAS matmul into the output view.

int8 / uint8:

    acc[b, o] = bias[o] + sum_k (w[o, k] - zp_w) * (x[b, k] - zp_x)
    out[b, o] = clamp(requant_o(acc[b, o]) + zp_out, act_min, act_max)

The two LiteRT kernel sets requantize differently (measured, see quant_math.py):

* REFERENCE: LiteRT's reference kernels use the *float* overloads of
  reference_integer_ops::FullyConnected / FullyConnectedPerChannel and
  reference_ops::FullyConnected (tensorflow/lite/kernels/internal/reference/integer_ops/
  fully_connected.h): ``round(double(acc) * M)`` with
  M = double(s_x) * double(s_w[o]) / double(s_out) and std::round (half away from zero)
  -- no QuantizeMultiplier at all. The clamp is CalculateActivationRangeQuantized's.
* DEFAULT: the XNNPACK delegate takes the op: rint(float32(acc) * float32(M)) with the
  float32 M = (s_x * s_w[o]) / s_out, and XNNPACK's clamp.
* int8 weights stored 1x16 block-sparse (either set): XNNPACK does not take them; LiteRT
  runs optimized_ops::FullyConnectedSparseWeight1x16: MultiplyByQuantizedMultiplier with
  QuantizeMultiplier(M[o]) (fixed point), and CalculateActivationRangeQuantized's clamp.

Integer weights are constant; int8 weights are per tensor (any zero point, applied like
TFLite's weights_offset) or per channel along axis 0 (zero point 0); uint8 weights are
per tensor. The product runs on float32 BLAS, exact (accumulator): in one product where
every partial sum is bounded by 2^24, else with the depth split into float32-exact
ranges whose results are summed in float64; where bias + sum may overflow int32 the
exact value is wrapped to int32 as TFLite's int32 accumulator wraps.
requantize.output_stage requantizes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...schema import ops as schema_ops
from edgelite.names import quoted
from .common.accumulator import AccumulatorPlan, plan_accumulator
from .base import Kernel, OpContext, OutputSpec, TensorInfo, num_elements, temporary
from .common.fc_geometry import fc_geometry as _geometry
from .common.fused import Clamp, activation_clamp, apply_clamp
from .hybrid import fully_connected as hybrid_fc
from .opdef import Affine, OpDef, QuantRule
from .common.requantize import (QUANTIZED, OutputStage, activation_bounds, channel_params,
                                fixed_requant, float64_requant, fp32_requant, micro_fc_reals,
                                output_stage, qparams, require_same_type)
from .int16.affine import fully_connected16
from .common.native_gemm import native_gemm
from .common.native_float_ops import clamp_bounds
from .. import native as native_backend
from .versions import OpSignature, T

SHUFFLED_WEIGHTS_FORMAT = schema_ops.FullyConnectedOptionsWeightsFormat.SHUFFLED4x16INT8


# --------------------------------------------------------------------------- float32

# Multiply-adds up to which a float FC with constant weights runs as native/fc_f32.c's
# step: there a BLAS call's fixed cost (~1.5 us) is most of the op; the C loop costs about
# 1 ns per 8 multiply-adds (AVX2), so it stays ahead of the BLAS call up to about here.
SMALL_FC = 2**14


@dataclass(frozen=True, kw_only=True)
class FullyConnectedRecord:
    rows: int  # batch: number of input rows
    in_features: int  # I
    out_features: int  # O
    weights_t: np.ndarray | None  # (I, O) contiguous when the weights are constant
    clamp: Clamp

    def native_step(self, inputs, outputs):
        """With the native backend: a small FC with constant weights (at most SMALL_FC
        multiply-adds) as one C step in LiteRT's reference order (native/fc_f32.c), else
        eval's numpy calls on 2-D views bound once (eval_bound: the same bits as eval,
        without its reshapes and lookups). None where an operand is not a plain
        contiguous array (eval then runs)."""
        x, out = inputs[0], outputs[0]
        bias = inputs[2] if len(inputs) > 2 else None
        weights_t = self.weights_t if self.weights_t is not None else inputs[1]
        if not all(isinstance(a, np.ndarray) and a.flags.c_contiguous
                   for a in (x, out, weights_t)):
            return None
        if bias is not None:
            bias = bias.reshape(self.out_features)
        if self.weights_t is not None and hasattr(native_backend.module, "fc_f32_step") \
                and self.rows * self.in_features * self.out_features <= SMALL_FC:
            step = native_backend.module.fc_f32_step(
                x, weights_t, bias, out, self.rows, self.in_features, self.out_features,
                *clamp_bounds(self.clamp))
            return (native_backend.module.run_native_step, step, None, None)
        if self.weights_t is None:
            weights_t = weights_t.T
        views = (x.reshape(self.rows, self.in_features), weights_t, bias)
        return (eval_bound, self, views, (out.reshape(self.rows, self.out_features),))


def prepare(ctx: OpContext):
    ctx.check_arity(2, 3)
    x, w = ctx.input(0), ctx.input(1)
    bias = ctx.optional_input(2)
    ctx.require_dtype(x, (np.float32,), "input")
    ctx.require_dtype(w, (np.float32,), "weights")
    rows, depth, units, out_shape = _geometry(ctx, x, w)
    if bias is not None:
        ctx.require_dtype(bias, (np.float32,), "bias")
        if num_elements(bias.shape) != units:
            raise ctx.shape_error(f"bias shape {list(bias.shape)} must hold {units} values")

    weights_t = None
    if w.is_constant:
        weights_t = np.ascontiguousarray(w.data.astype(np.float32).T)
    record = FullyConnectedRecord(rows=rows, in_features=depth, out_features=units,
                                  weights_t=weights_t, clamp=activation_clamp(ctx, np.float32))
    return (OutputSpec(out_shape, np.dtype(np.float32)),), record


def eval(rec: FullyConnectedRecord, inputs, outputs) -> None:
    x2d = inputs[0].reshape(rec.rows, rec.in_features)
    out2d = outputs[0].reshape(rec.rows, rec.out_features)
    weights_t = rec.weights_t if rec.weights_t is not None else inputs[1].T
    np.matmul(x2d, weights_t, out=out2d)
    bias = inputs[2] if len(inputs) > 2 else None
    if bias is not None:
        np.add(out2d, bias.reshape(rec.out_features), out=out2d)
    apply_clamp(rec.clamp, out2d)


def eval_bound(rec: FullyConnectedRecord, views, outputs) -> None:
    """eval on the views native_step made: (x 2-D, weights (I, O), bias or None)."""
    x2d, weights_t, bias = views
    out2d = outputs[0]
    np.matmul(x2d, weights_t, out=out2d)
    if bias is not None:
        np.add(out2d, bias, out=out2d)
    apply_clamp(rec.clamp, out2d)


# --------------------------------------------------------------------------- int8 / uint8


@dataclass(frozen=True, kw_only=True)
class QFullyConnectedRecord:
    rows: int
    depth: int
    units: int
    plan: AccumulatorPlan  # float32 / float32 chunks, and whether acc + bias wraps
    x_work: np.ndarray  # (rows, K) scratch: x - zp_x in the GEMM dtype
    weights_t: np.ndarray  # (K, O): (w - zp_w)^T in the GEMM dtype
    acc: np.ndarray  # (rows, O) scratch, plan.acc_dtype
    part: np.ndarray | None  # like acc in the GEMM dtype, if plan.needs_part
    zp_x: int
    output: OutputStage


def prepare_quantized(ctx: OpContext):
    ctx.check_arity(2, 3)
    x, w = ctx.input(0), ctx.input(1)
    bias = ctx.optional_input(2)
    ctx.require_dtype(x, QUANTIZED, "input")
    require_same_type(ctx, x, w)
    require_same_type(ctx, x, ctx.outputs[0])
    rows, depth, units, out_shape = _geometry(ctx, x, w)

    weights = ctx.constant_input(1, "weights").astype(np.int16)  # w - zp_w fits int16
    bias_values = None
    if bias is not None:
        ctx.require_dtype(bias, (np.int32,), "bias")
        bias_values = ctx.constant_input(2, "bias").astype(np.int64).reshape(-1)
        if bias_values.size != units:
            raise ctx.shape_error(f"bias holds {bias_values.size} values, expected {units}")

    xq, out = qparams(ctx, x, "input"), qparams(ctx, ctx.outputs[0], "output")
    scales, zps = channel_params(ctx, w, "weights", units, 0)
    per_channel = len(w.quantization.scale) > 1
    if per_channel and (x.dtype == np.uint8 or np.any(zps != 0)):
        raise ctx.unsupported(
            f"per-channel weights {quoted(w.name)} must be int8 with zero point 0"
        )
    sparse = _sparse_1x16(w)
    xnnpack = not ctx.quant.reference and not sparse
    if ctx.quant.micro:  # TFLM: MultiplyByQuantizedMultiplier, not a double rescale
        requant = fixed_requant(micro_fc_reals(xq.scale, scales, out.scale), ctx.quant)
    elif sparse:
        # both sets: optimized_ops::FullyConnectedSparseWeight1x16 (fully_connected.cc
        # EvalQuantized, sparse filter), MultiplyByQuantizedMultiplier per channel
        requant = fixed_requant([xq.scale * float(s) / out.scale for s in scales], ctx.quant)
    elif xnnpack:
        requant = fp32_requant(np.float32(xq.scale) * scales / np.float32(out.scale))
    else:
        requant = float64_requant([xq.scale * float(s) / out.scale for s in scales])
    lo, hi = activation_bounds(ctx, out, x.dtype, xnnpack)

    # (O, K): w - zp_w (symmetric int8 weights: no copy)
    centered = weights - zps.astype(np.int16).reshape(units, 1) if zps.any() else weights
    native = native_gemm(ctx, x.dtype, centered, bias_values, xq.zero_point, requant,
                         out.zero_point, lo, hi, rows)
    if native is not None:
        return (OutputSpec(out_shape, x.dtype),), native
    plan = plan_accumulator(centered.T, x.dtype, xq.zero_point, bias_values,
                            float32_bias=requant.float32_bias)
    work = plan.gemm_dtype
    weights_t = np.ascontiguousarray(centered.T.astype(work))
    stage = output_stage(ctx, requant, bias_values, out.zero_point, lo, hi, rows * units,
                         units, plan)
    part = temporary(ctx, (rows, units), work) if plan.needs_part else None
    record = QFullyConnectedRecord(
        rows=rows, depth=depth, units=units, plan=plan,
        x_work=temporary(ctx, (rows, depth), work), weights_t=weights_t,
        acc=temporary(ctx, (rows, units), plan.acc_dtype), part=part, zp_x=xq.zero_point,
        output=stage)
    return (OutputSpec(out_shape, x.dtype),), record


def _sparse_1x16(w: TensorInfo) -> bool:
    """Weights stored 1x16 block-sparse ([O, I/16] dense x CSR, blocks of 16): LiteRT runs
    them with FullyConnectedSparseWeight1x16 (fully_connected.cc, kDimMetadataSizeBlockSparse
    with dim_metadata[2].dense_size 16), XNNPACK does not take them."""
    sp = w.sparsity
    return (sp is not None and len(sp.dim_metadata) == 3 and not sp.dim_metadata[0].is_csr
            and sp.dim_metadata[1].is_csr and sp.dim_metadata[2].dense_size == 16)


def eval_quantized(rec: QFullyConnectedRecord, inputs, outputs) -> None:
    np.subtract(inputs[0].reshape(rec.rows, rec.depth), rec.zp_x, out=rec.x_work,
                dtype=rec.x_work.dtype)
    rec.plan.matmul(rec.x_work, rec.weights_t, rec.acc, rec.part)
    rec.output(rec.acc, outputs[0])


def version(sig: OpSignature) -> int:
    """op_version.cc, FULLY_CONNECTED, first match by (input, weights, output) types and
    options: int2 weights 14; int16 with int4 weights 13; float with per-channel int8
    weights (one scale per unit) 12; 16x8 with a quantized_bias_type 11; sparse weights 8;
    int16 throughout 7; two operands (no bias slot at all; an omitted bias, index -1,
    still counts) 6; keep_num_dims 5; int8 4; int8 with int4 weights 10; float with int8
    weights (hybrid) 9 with asymmetric_quantize_inputs, else 3; shuffled 4x16 weights 2."""
    types, w = sig.types(), sig.input(1)
    hybrid = types == (T.FLOAT32, T.INT8, T.FLOAT32)
    if w.type == T.INT2:
        return 14
    if types == (T.INT16, T.INT4, T.INT16):
        return 13
    if hybrid and w.scales_along(0):
        return 12
    if types == (T.INT16, T.INT8, T.INT16) and sig.option("quantized_bias_type"):
        return 11
    if w.sparse:
        return 8
    if types == (T.INT16, T.INT16, T.INT16):
        return 7
    if len(sig.inputs) == 2:
        return 6
    if sig.option("keep_num_dims", False):
        return 5
    if types == (T.INT8, T.INT8, T.INT8):
        return 4
    if types == (T.INT8, T.INT4, T.INT8):
        return 10
    if hybrid:
        return 9 if sig.option("asymmetric_quantize_inputs", False) else 3
    return 2 if sig.option("weights_format") == SHUFFLED_WEIGHTS_FORMAT else 1


OPS = (
    OpDef("FULLY_CONNECTED",
          float=Kernel(prepare, eval),
          hybrid=hybrid_fc.KERNEL,
          integer=Kernel(prepare_quantized, eval_quantized),
          int16=fully_connected16(_geometry),
          quant=QuantRule.OWN_RANGE,
          affine=Affine(data=0, weights=1, bias=2, out_axis=0, in_axis=1),
          fused_activation=True,
          per_sample=True,
          version=version),
)
