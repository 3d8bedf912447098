"""RNN and UNIDIRECTIONAL_SEQUENCE_RNN: the float32 fully-connected recurrent cell of
LiteRT's basic_rnn.cc / unidirectional_sequence_rnn.cc (kernel_utils::RnnBatchStep):

    h = act(W * x + R * h + b)      output = h

Inputs: x, weights W [units, input_size], recurrent weights R [units, units], bias b
[units], and the hidden state h [batch, units] -- a variable tensor updated in place,
so it carries from one invoke() to the next until the variables are reset. RNN is one
step on a [batch, input_size] input; UNIDIRECTIONAL_SEQUENCE_RNN steps through a
[batch, time, input_size] sequence ([time, batch, input_size] with ``time_major``) and
outputs every step's h. ``act`` is the fused activation (TANH in Keras' SimpleRNN;
ApplyActivationToVector). LiteRT runs these ops on float32 input only.

Hybrid (dynamic-range) files have int8 W and R (one scale each) with float input, bias
and state: kernel_utils::RnnBatchStep quantizes x and h per batch row on the fly
(symmetric, or asymmetric with ``asymmetric_quantize_inputs``) and computes, in float32,

    h = act(b + float(W_q . x_q) * (s_x * s_W) + float(R_q . h_q) * (s_h * s_R))

(hybrid_rows.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..names import quoted
from .base import Chosen, Kernel, OpContext, OutputSpec, run_chosen, temporary
from .hybrid_rows import HybridWeights, accumulate_products, quantize_rows
from .lstm import time_view
from .eigen_math import activate
from .lstm_float import activation_code, constant_float
from .lstm_operands import float_operands, input_dims, state
from .opdef import OpDef
from .requantize import per_tensor_scale
from .versions import hybrid_2_asymmetric_3

HIDDEN_STATE = 4


@dataclass(frozen=True, kw_only=True)
class RnnRecord:
    steps: int
    batch: int
    n_input: int
    units: int
    time_major: bool
    weights: np.ndarray  # [input_size, units], transposed
    recurrent: np.ndarray  # [units, units], transposed
    bias: np.ndarray
    activation: int
    pre: np.ndarray  # [time * batch, units] temporary


@dataclass(frozen=True, kw_only=True)
class HybridRnnRecord:
    steps: int
    batch: int
    n_input: int
    units: int
    time_major: bool
    weights: HybridWeights  # [input_size, units]
    recurrent: HybridWeights  # [units, units]
    bias: np.ndarray
    asymmetric: bool
    activation: int
    pre: np.ndarray  # [time * batch, units] temporary


def _hybrid_weights(ctx: OpContext, t, role: str) -> HybridWeights:
    if t.dtype != np.int8:
        raise ctx.unsupported(f"{role} {quoted(t.name)} are {t.dtype.name}; a hybrid RNN's "
                              "weights must both be int8")
    if t.data is None:
        raise ctx.unsupported(f"the RNN's {role} must be constant tensors")
    scale = per_tensor_scale(ctx, t, role, "LiteRT's hybrid RNN takes one scale per tensor")
    return HybridWeights.of([np.asarray(t.data, np.int8)], [np.float32(scale)])


def _prepare(ctx: OpContext, sequence: bool):
    ctx.check_arity(5, 5, 1)
    x = ctx.input(0)
    w, r, b = ctx.input(1), ctx.input(2), ctx.input(3)
    if x.dtype != np.float32:
        raise ctx.unsupported(f"input {quoted(x.name)} is {x.dtype.name}; LiteRT's RNN "
                              "kernels take float32 input")
    hybrid = w.dtype in (np.int8, np.uint8)
    time_major = bool(ctx.option("time_major", False)) if sequence else True
    steps, batch, n_input = input_dims(ctx, x, sequence, time_major)
    if w.rank != 2 or w.shape[1] != n_input:
        raise ctx.shape_error(f"weights {quoted(w.name)} have shape {list(w.shape)}; "
                              f"expected [units, {n_input}]")
    units = int(w.shape[0])
    for t, shape, role in ((r, (units, units), "recurrent weights"), (b, (units,), "bias")):
        if tuple(t.shape) != shape:
            raise ctx.shape_error(f"{role} {quoted(t.name)} have shape {list(t.shape)}; "
                                  f"expected {list(shape)}")
    h = state(ctx, HIDDEN_STATE, "hidden state", batch * units)
    if h.rank != 2:
        raise ctx.shape_error(f"the hidden state {quoted(h.name)} must be [batch, units]")
    out = (OutputSpec(tuple(x.shape[:-1]) + (units,), np.dtype(np.float32)),)
    if hybrid:
        float_operands(ctx, [b, h])
        return out, Chosen(eval_hybrid, HybridRnnRecord(
            steps=steps, batch=batch, n_input=n_input, units=units, time_major=time_major,
            weights=_hybrid_weights(ctx, w, "weights"),
            recurrent=_hybrid_weights(ctx, r, "recurrent weights"),
            bias=constant_float(ctx, b, "bias"),
            asymmetric=bool(ctx.option("asymmetric_quantize_inputs", False)),
            activation=activation_code(ctx),
            pre=temporary(ctx, (steps * batch, units), np.float32)))
    float_operands(ctx, [w, r, b, h])
    record = RnnRecord(
        steps=steps, batch=batch, n_input=n_input, units=units, time_major=time_major,
        weights=np.ascontiguousarray(constant_float(ctx, w, "weights").T),
        recurrent=np.ascontiguousarray(constant_float(ctx, r, "recurrent weights").T),
        bias=constant_float(ctx, b, "bias"), activation=activation_code(ctx),
        pre=temporary(ctx, (steps * batch, units), np.float32))
    return out, Chosen(eval, record)


def prepare_sequence(ctx: OpContext):
    return _prepare(ctx, sequence=True)


def prepare_step(ctx: OpContext):
    return _prepare(ctx, sequence=False)


def eval(rec: RnnRecord, inputs, outputs) -> None:
    np.matmul(inputs[0].reshape(-1, rec.n_input), rec.weights, out=rec.pre)
    np.add(rec.pre, rec.bias, out=rec.pre)
    pre = time_view(rec.pre, rec.time_major, rec.steps, rec.batch)
    out = time_view(outputs[0], rec.time_major, rec.steps, rec.batch)
    h = inputs[HIDDEN_STATE].reshape(rec.batch, rec.units)
    for t in range(rec.steps):
        step = pre[t] + h @ rec.recurrent
        activate(rec.activation, step)
        h[...] = step
        out[t] = step


def eval_hybrid(rec: HybridRnnRecord, inputs, outputs) -> None:
    rec.pre[...] = rec.bias
    x = inputs[0].reshape(-1, rec.n_input)
    accumulate_products(rec.pre, quantize_rows(x, rec.asymmetric), rec.weights)
    pre = time_view(rec.pre, rec.time_major, rec.steps, rec.batch)
    out = time_view(outputs[0], rec.time_major, rec.steps, rec.batch)
    h = inputs[HIDDEN_STATE].reshape(rec.batch, rec.units)
    for t in range(rec.steps):
        step = pre[t].copy()
        accumulate_products(step, quantize_rows(h, rec.asymmetric), rec.recurrent)
        activate(rec.activation, step)
        h[...] = step
        out[t] = step


OPS = (
    OpDef("UNIDIRECTIONAL_SEQUENCE_RNN", float=Kernel(prepare_sequence, run_chosen),
          version=hybrid_2_asymmetric_3),
    OpDef("RNN", float=Kernel(prepare_step, run_chosen), version=hybrid_2_asymmetric_3),
)
