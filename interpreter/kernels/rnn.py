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

(hybrid/rows.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.names import quoted
from .base import Kernel, OpContext, OutputSpec, temporary
from .hybrid.rows import HybridWeights, accumulate_products, quantize_rows
from .lstm import time_view
from .common.eigen_math import activate, activation_code
from .lstm.float_cell import constant_float
from .lstm.operands import float_operands, input_dims, state
from .opdef import OpDef
from .common.requantize import per_tensor_scale
from .versions import hybrid_2_asymmetric_3

HIDDEN_STATE = 4


@dataclass(frozen=True)
class FloatRnnCell:
    """One direction's float32 constants: weights [input_size, units] and recurrent
    weights [units, units] transposed, an optional auxiliary input's weights."""

    weights: np.ndarray
    recurrent: np.ndarray
    bias: np.ndarray
    activation: int
    aux: np.ndarray | None = None

    def contributions(self, x2d, aux2d, out: np.ndarray) -> None:
        """out[rows, units] = W x (+ A aux) + b for every row of the sequence."""
        np.matmul(x2d, self.weights, out=out)
        if aux2d is not None:
            out += aux2d @ self.aux
        out += self.bias

    def recurrence(self, step: np.ndarray, h: np.ndarray) -> None:
        step += h @ self.recurrent


@dataclass(frozen=True)
class HybridRnnCell:
    """The same with int8 weights (hybrid.rows.HybridWeights)."""

    weights: HybridWeights
    recurrent: HybridWeights
    bias: np.ndarray
    activation: int
    aux: HybridWeights | None = None
    asymmetric: bool = False

    def contributions(self, x2d, aux2d, out: np.ndarray) -> None:
        """out = b + the input (and auxiliary) products, as RnnBatchStep adds them."""
        out[...] = self.bias
        accumulate_products(out, quantize_rows(x2d, self.asymmetric), self.weights)
        if aux2d is not None:
            accumulate_products(out, quantize_rows(aux2d, self.asymmetric), self.aux)

    def recurrence(self, step: np.ndarray, h: np.ndarray) -> None:
        accumulate_products(step, quantize_rows(h, self.asymmetric), self.recurrent)


@dataclass(frozen=True)
class RnnRecord:
    steps: int
    batch: int
    n_input: int
    units: int
    time_major: bool
    cell: FloatRnnCell | HybridRnnCell
    pre: np.ndarray  # [time * batch, units] temporary


def _hybrid_weights(ctx: OpContext, t, role: str) -> HybridWeights:
    if t.dtype != np.int8:
        raise ctx.unsupported(f"{role} {quoted(t.name)} are {t.dtype.name}; a hybrid RNN's "
                              "weights must all be int8")
    if t.data is None:
        raise ctx.unsupported(f"the RNN's {role} must be constant tensors")
    scale = per_tensor_scale(ctx, t, role, "LiteRT's hybrid RNN takes one scale per tensor")
    return HybridWeights.of([np.asarray(t.data, np.int8)], [np.float32(scale)])


def check_cell(ctx: OpContext, w, r, b, n_input: int) -> int:
    """The units of a cell whose weights are [units, n_input], recurrent weights
    [units, units] and bias [units]."""
    if w.rank != 2 or w.shape[1] != n_input:
        raise ctx.shape_error(f"weights {quoted(w.name)} have shape {list(w.shape)}; "
                              f"expected [units, {n_input}]")
    units = int(w.shape[0])
    for t, shape, role in ((r, (units, units), "recurrent weights"), (b, (units,), "bias")):
        if tuple(t.shape) != shape:
            raise ctx.shape_error(f"{role} {quoted(t.name)} have shape {list(t.shape)}; "
                                  f"expected {list(shape)}")
    return units


def prepare_cell(ctx: OpContext, w, r, b, aux=None):
    """A FloatRnnCell, or a HybridRnnCell when the weights are 8-bit (IsHybridOp)."""
    float_operands(ctx, [b])
    bias = constant_float(ctx, b, "bias")
    if w.dtype in (np.int8, np.uint8):
        return HybridRnnCell(
            _hybrid_weights(ctx, w, "weights"), _hybrid_weights(ctx, r, "recurrent weights"),
            bias, activation_code(ctx),
            None if aux is None else _hybrid_weights(ctx, aux, "auxiliary weights"),
            bool(ctx.option("asymmetric_quantize_inputs", False)))
    float_operands(ctx, [w, r, aux])

    def transposed(t, role):
        return None if t is None else np.ascontiguousarray(constant_float(ctx, t, role).T)
    return FloatRnnCell(transposed(w, "weights"), transposed(r, "recurrent weights"), bias,
                        activation_code(ctx), transposed(aux, "auxiliary weights"))


def _prepare(ctx: OpContext, sequence: bool):
    ctx.check_arity(5, 5, 1)
    x = ctx.input(0)
    w, r, b = ctx.input(1), ctx.input(2), ctx.input(3)
    if x.dtype != np.float32:
        raise ctx.unsupported(f"input {quoted(x.name)} is {x.dtype.name}; LiteRT's RNN "
                              "kernels take float32 input")
    time_major = bool(ctx.option("time_major", False)) if sequence else True
    steps, batch, n_input = input_dims(ctx, x, sequence, time_major)
    units = check_cell(ctx, w, r, b, n_input)
    h = state(ctx, HIDDEN_STATE, "hidden state", batch * units)
    if h.rank != 2:
        raise ctx.shape_error(f"the hidden state {quoted(h.name)} must be [batch, units]")
    float_operands(ctx, [h])
    record = RnnRecord(steps, batch, n_input, units, time_major, prepare_cell(ctx, w, r, b),
                       temporary(ctx, (steps * batch, units), np.float32))
    return (OutputSpec(tuple(x.shape[:-1]) + (units,), np.dtype(np.float32)),), record


def prepare_sequence(ctx: OpContext):
    return _prepare(ctx, sequence=True)


def prepare_step(ctx: OpContext):
    return _prepare(ctx, sequence=False)


def run_cell(cell, pre: np.ndarray, h: np.ndarray, out: np.ndarray,
             reverse: bool = False) -> None:
    """h = act(pre[t] + R h) through the [time, batch, units] views (backwards with
    ``reverse``), writing every h into ``out``; ``pre`` is cell.contributions'."""
    for t in (range(pre.shape[0] - 1, -1, -1) if reverse else range(pre.shape[0])):
        step = pre[t].copy()
        cell.recurrence(step, h)
        activate(cell.activation, step)
        h[...] = step
        out[t] = step


def eval(rec: RnnRecord, inputs, outputs) -> None:
    rec.cell.contributions(inputs[0].reshape(-1, rec.n_input), None, rec.pre)
    pre = time_view(rec.pre, rec.time_major, rec.steps, rec.batch)
    out = time_view(outputs[0], rec.time_major, rec.steps, rec.batch)
    run_cell(rec.cell, pre, inputs[HIDDEN_STATE].reshape(rec.batch, rec.units), out)


OPS = (
    OpDef("UNIDIRECTIONAL_SEQUENCE_RNN", float=Kernel(prepare_sequence, eval),
          version=hybrid_2_asymmetric_3),
    OpDef("RNN", float=Kernel(prepare_step, eval), version=hybrid_2_asymmetric_3),
)
