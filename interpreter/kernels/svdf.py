"""SVDF: the singular-value-decomposition filter of keyword spotters (a fully connected
layer factored into a feature and a time filter, with a memory of past activations),
as LiteRT's svdf.cc and reference/svdf.h run it -- float32, hybrid and full-integer.

Inputs: x [batch, input_size], weights_feature W_f [filters, input_size], weights_time
W_t [filters, memory], an optional bias [units] (units = filters / rank) and the
activation state S [batch, memory * filters] -- a variable tensor that eval() updates in
place, so the memory carries from one invoke() to the next until the variables are
reset. Per invoke, with S viewed as [batch, filters, memory]:

    S[:, :, :-1] = S[:, :, 1:]                    (shift the memory left by one step)
    S[:, :, -1]  = x . W_f^T                      (the newest feature activation)
    y[b, u]      = act(sum_r sum_m W_t[f, m] S[b, f, m] + bias[u]),  f = u * rank + r

Float sums run left to right in float32 (BatchVectorBatchVectorDotProduct, then
ReductionSumVector over the rank). The kernels:

* float32 (EvalFloatSVDF): the feature product as a float matmul (LiteRT's summation
  order differs: float rounding);
* hybrid (EvalHybridSVDF): int8 W_f and W_t with float32 x, bias and state; x is
  quantized per batch row on the fly (hybrid/rows.py; asymmetric with the option
  ``asymmetric_quantize_inputs``), the newest activation is ``float(dot) * (s_x *
  s_Wf)``, and W_t is used dequantized, ``float32(q * s_Wt)``;
* full integer (EvalIntegerSVDF): int8 x (zero point z_x), int8 W_f, int16 W_t and
  state (symmetric), int32 bias, int8 output:

      S[:, :, -1] = clamp(MBQM(sum W_f (x - z_x), s_x s_Wf / s_S), int16)
      y = clamp(MBQM(sum_r sum_m W_t S + bias, s_S s_Wt / s_y) + z_y, int8)

  (the effective scales are float32 products, as LiteRT computes them). LiteRT requires
  the RELU activation here, yet applies none but the int8 clamp; so does this kernel.

Both LiteRT kernel sets register the same SVDF kernel (XNNPACK does not take it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import quant_math as qm
from ...schema.ops import ACTIVATION
from edgelite.names import quoted
from .base import Chosen, Kernel, OpContext, OutputSpec, TensorInfo, run_chosen
from .hybrid.rows import HybridWeights, accumulate_products, quantize_rows
from .common.eigen_math import activate, activation_code
from .lstm.operands import state as variable_state
from .opdef import OpDef, QuantRule
from .common.requantize import per_tensor_scale, qparams
from .versions import OpSignature, T

STATE = 4
_F32 = np.float32


@dataclass(frozen=True)
class Geometry:
    batch: int
    filters: int
    memory: int
    rank: int
    units: int


@dataclass(frozen=True)
class FloatSvdf:
    geo: Geometry
    weights_feature: np.ndarray  # [input_size, filters] float32
    weights_time: np.ndarray  # [filters, memory] float32
    bias: np.ndarray | None
    activation: int


@dataclass(frozen=True)
class HybridSvdf(FloatSvdf):
    """``weights_feature`` a HybridWeights [input_size, filters]; ``weights_time``
    dequantized to float32."""

    asymmetric: bool = False


@dataclass(frozen=True)
class IntegerSvdf:
    geo: Geometry
    weights_feature: np.ndarray  # [input_size, filters] int64
    weights_time: np.ndarray  # [filters, memory] int64
    bias: np.ndarray | None  # int64 [units]
    input_zp: int
    output_zp: int
    feature_requant: tuple[int, int]  # (multiplier, shift) into the state
    output_requant: tuple[int, int]
    rounding: qm.Rounding


def _geometry(ctx: OpContext, x: TensorInfo, wf: TensorInfo, wt: TensorInfo,
              bias: TensorInfo | None) -> Geometry:
    rank = int(ctx.option("rank", 0))
    if x.rank != 2 or wf.rank != 2 or wt.rank != 2:
        raise ctx.shape_error(
            f"input {quoted(x.name)} {list(x.shape)}, weights_feature {quoted(wf.name)} "
            f"{list(wf.shape)} and weights_time {quoted(wt.name)} {list(wt.shape)} must all be "
            "rank 2: [batch, input_size], [filters, input_size], [filters, memory]")
    filters, memory = int(wf.shape[0]), int(wt.shape[1])
    if rank < 1 or filters % rank:
        raise ctx.shape_error(f"rank {rank} must be >= 1 and divide the {filters} filters")
    if wf.shape[1] != x.shape[1] or wt.shape[0] != filters or memory < 1:
        raise ctx.shape_error(
            f"weights_feature {list(wf.shape)} and weights_time {list(wt.shape)} do not fit "
            f"input {list(x.shape)}: expected [filters, {x.shape[1]}] and [filters, memory]")
    units = filters // rank
    if bias is not None and tuple(bias.shape) != (units,):
        raise ctx.shape_error(f"bias {quoted(bias.name)} has shape {list(bias.shape)}; "
                              f"expected [{units}] (filters / rank)")
    batch = int(x.shape[0])
    s = variable_state(ctx, STATE, "activation state", batch * memory * filters)
    if s.rank != 2 or s.shape[0] != batch:
        raise ctx.shape_error(f"the activation state {quoted(s.name)} has shape "
                              f"{list(s.shape)}; expected [{batch}, {memory * filters}]")
    return Geometry(batch, filters, memory, rank, units)


def _constant(ctx: OpContext, t: TensorInfo | None, role: str, dtype) -> np.ndarray | None:
    if t is None:
        return None
    if t.dtype != dtype:
        raise ctx.unsupported(f"{role} {quoted(t.name)} is {t.dtype.name}; this SVDF kernel "
                              f"takes {np.dtype(dtype).name} there")
    if t.data is None:
        raise ctx.unsupported(f"the SVDF's {role} must be a constant tensor")
    return np.asarray(t.data)


def prepare(ctx: OpContext):
    ctx.check_arity(5, 5, 1)
    x, wf, wt = ctx.input(0), ctx.input(1), ctx.input(2)
    bias = ctx.optional_input(3)
    geo = _geometry(ctx, x, wf, wt, bias)
    state = ctx.input(STATE)
    spec = (OutputSpec((geo.batch, geo.units), x.dtype),)
    if x.dtype == np.int8:
        return spec, Chosen(eval_integer, _prepare_integer(ctx, geo, x, wf, wt, bias, state))
    if x.dtype != np.float32:
        raise ctx.unsupported(f"input {quoted(x.name)} is {x.dtype.name}; LiteRT's SVDF takes "
                              "float32 or int8")
    if state.dtype != np.float32:
        raise ctx.unsupported(f"activation state {quoted(state.name)} is {state.dtype.name}; "
                              "with float32 input the SVDF's state is float32")
    b = None if bias is None else _constant(ctx, bias, "bias", np.float32).astype(_F32)
    if wf.dtype == np.float32:
        return spec, Chosen(eval_float, FloatSvdf(
            geo, np.ascontiguousarray(_constant(ctx, wf, "weights_feature", np.float32).T),
            _constant(ctx, wt, "weights_time", np.float32).astype(_F32), b,
            activation_code(ctx)))
    # hybrid: int8 weights (LiteRT reads both as int8), float activations
    qf = _constant(ctx, wf, "weights_feature", np.int8)
    qt = _constant(ctx, wt, "weights_time", np.int8)
    why = "LiteRT's hybrid SVDF takes one scale per tensor"
    s_f = _F32(per_tensor_scale(ctx, wf, "weights_feature", why))
    s_t = _F32(per_tensor_scale(ctx, wt, "weights_time", why))
    return spec, Chosen(eval_hybrid, HybridSvdf(
        geo, HybridWeights.of([qf], [s_f]), (qt.astype(_F32) * s_t).astype(_F32), b,
        activation_code(ctx), bool(ctx.option("asymmetric_quantize_inputs", False))))


def _prepare_integer(ctx: OpContext, geo: Geometry, x, wf, wt, bias, state) -> IntegerSvdf:
    if int(ctx.option("fused_activation_function", 0)) != ACTIVATION["RELU"]:
        raise ctx.unsupported("LiteRT's integer SVDF takes only the RELU activation")
    qf = _constant(ctx, wf, "weights_feature", np.int8)
    qt = _constant(ctx, wt, "weights_time", np.int16)
    qb = None if bias is None else _constant(ctx, bias, "bias", np.int32)
    if state.dtype != np.int16 or ctx.outputs[0].dtype != np.int8:
        raise ctx.unsupported("the integer SVDF needs an int16 activation state and an int8 "
                              "output")
    p_x, p_s, p_y = (qparams(ctx, t, r) for t, r in
                     ((x, "input"), (state, "activation state"), (ctx.outputs[0], "output")))
    s_f = per_tensor_scale(ctx, wf, "weights_feature")
    s_t = per_tensor_scale(ctx, wt, "weights_time")
    # float32 arithmetic, as svdf.cc multiplies the float scales before widening
    scale_1 = _F32(_F32(p_x.scale) * _F32(s_f)) / _F32(p_s.scale)
    scale_2 = _F32(_F32(p_s.scale) * _F32(s_t)) / _F32(p_y.scale)
    rounding = ctx.quant.rounding
    return IntegerSvdf(
        geo, np.ascontiguousarray(qf.astype(np.int64).T), qt.astype(np.int64),
        None if qb is None else qb.astype(np.int64), p_x.zero_point, p_y.zero_point,
        qm.quantize_multiplier(float(scale_1), rounding),
        qm.quantize_multiplier(float(scale_2), rounding), rounding)


def _shifted_state(geo: Geometry, flat: np.ndarray) -> np.ndarray:
    """The state as [batch, filters, memory], its memory moved one step left (the newest
    slot, [..., -1], is then rewritten by the caller)."""
    s = flat.reshape(geo.batch, geo.filters, geo.memory)
    s[..., :-1] = s[..., 1:].copy()
    return s


def _time_and_output(geo: Geometry, s: np.ndarray, weights_time: np.ndarray,
                     bias: np.ndarray | None, activation: int, out: np.ndarray) -> None:
    """ApplyTimeWeightsBiasAndActivation in float32: sequential sums over the memory,
    then over the rank, then the bias and the activation."""
    per_filter = np.cumsum(s * weights_time, axis=2, dtype=_F32)[..., -1]
    y = np.cumsum(per_filter.reshape(geo.batch, geo.units, geo.rank), axis=2,
                  dtype=_F32)[..., -1]
    if bias is not None:
        y += bias
    activate(activation, y)
    out[...] = y


def eval_float(rec: FloatSvdf, inputs, outputs) -> None:
    s = _shifted_state(rec.geo, inputs[STATE])
    s[..., -1] = inputs[0] @ rec.weights_feature
    _time_and_output(rec.geo, s, rec.weights_time, rec.bias, rec.activation, outputs[0])


def eval_hybrid(rec: HybridSvdf, inputs, outputs) -> None:
    s = _shifted_state(rec.geo, inputs[STATE])
    newest = np.zeros((rec.geo.batch, rec.geo.filters), _F32)
    accumulate_products(newest, quantize_rows(inputs[0], rec.asymmetric),
                        rec.weights_feature)
    s[..., -1] = newest
    _time_and_output(rec.geo, s, rec.weights_time, rec.bias, rec.activation, outputs[0])


def eval_integer(rec: IntegerSvdf, inputs, outputs) -> None:
    geo = rec.geo
    s = _shifted_state(geo, inputs[STATE])
    dot = (inputs[0].astype(np.int64) - rec.input_zp) @ rec.weights_feature
    feature = qm.multiply_by_quantized_multiplier(qm.wrap_int32(dot), *rec.feature_requant,
                                                  rec.rounding)
    s[..., -1] = np.clip(feature, -32768, 32767)
    per_filter = qm.wrap_int32(np.sum(s.astype(np.int64) * rec.weights_time, axis=2))
    acc = per_filter.reshape(geo.batch, geo.units, geo.rank).sum(axis=2)
    if rec.bias is not None:
        acc = acc + rec.bias
    y = qm.multiply_by_quantized_multiplier(qm.wrap_int32(acc), *rec.output_requant,
                                            rec.rounding) + rec.output_zp + 0
    outputs[0][...] = np.clip(y, -128, 127)


def version(sig: OpSignature) -> int:
    """op_version.cc, SVDF: full integer (int8 input) 3; hybrid (float input, int8
    weights_feature, float output) 4 with asymmetric_quantize_inputs, else 2; 1."""
    if sig.input(0).type == T.INT8:
        return 3
    if (sig.input(0).type == T.FLOAT32 and sig.input(1).type == T.INT8
            and sig.output(0).type == T.FLOAT32):
        return 4 if sig.option("asymmetric_quantize_inputs", False) else 2
    return 1


OPS = (
    # One entry serves float32, hybrid and int8 (prepare() chooses). The quantizer keeps
    # SVDF float: its int8 form needs an int16 state and int16 time weights. Not
    # ``stateful``: like the LSTMs, it keeps its state in a variable tensor, which is
    # never constant, so the op is never folded anyway.
    OpDef("SVDF", float=Kernel(prepare, run_chosen), quant=QuantRule.FLOAT_ONLY,
          version=version),
)
