"""BIDIRECTIONAL_SEQUENCE_RNN: two fully-connected recurrent cells over one sequence, the
backward one stepping from the last time step to the first, as LiteRT's
bidirectional_sequence_rnn.cc runs them (kernel_utils::RnnBatchStep per step) -- float32,
or hybrid with int8 weights (rnn.py's cells: ``h = act(b + W x [+ A aux] + R h)``).

12 inputs: x [time, batch, input_size] (``time_major``) or [batch, time, input_size];
forward weights, recurrent weights, bias, hidden state (1-4), the backward ones (5-8)
-- the hidden states variable tensors [batch, units], updated in place -- then an
optional auxiliary input (9) and its forward / backward weights (10, 11). As for
BIDIRECTIONAL_SEQUENCE_LSTM: with aux weights both directions add ``A aux``; an
auxiliary input without weights is the backward direction's input (stacking without
cross links). Outputs: the forward and backward h sequences, or with ``merge_outputs``
one output holding the forward then the backward units.

Refused where LiteRT's kernel does not do what the file says: an auxiliary input whose
width differs from the input's (the kernel steps through it by the input's width), and
a backward pass that should read the auxiliary input from a batch-major sequence (the
batch-major kernel reads the input instead); and the hybrid op on a time-major sequence
of more than one step, which LiteRT's EvalHybrid runs max_time times over (and crashes
on with merged outputs and batch > 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.names import quoted
from .base import Kernel, OpContext, OutputSpec, temporary
from .lstm import time_view
from .lstm.operands import float_operands, input_dims, state
from .opdef import OpDef
from .rnn import FloatRnnCell, HybridRnnCell, check_cell, prepare_cell, run_cell
from .versions import hybrid_2_asymmetric_3

FW, BW = (1, 2, 3, 4), (5, 6, 7, 8)  # weights, recurrent weights, bias, hidden state
AUX_INPUT, FW_AUX, BW_AUX = 9, 10, 11


@dataclass(frozen=True)
class Direction:
    cell: FloatRnnCell | HybridRnnCell
    state: int  # input index of its hidden state
    reads_aux_as_input: bool
    out_index: int
    out_slice: slice
    pre: np.ndarray  # [time * batch, units] temporary


@dataclass(frozen=True)
class Record:
    steps: int
    batch: int
    time_major: bool
    uses_aux: bool  # both directions multiply the auxiliary input by their aux weights
    directions: tuple[Direction, Direction]


def _aux(ctx: OpContext, x, weighted: bool):
    aux = ctx.optional_input(AUX_INPUT)
    if (ctx.optional_input(FW_AUX) is None) != (ctx.optional_input(BW_AUX) is None):
        raise ctx.shape_error("auxiliary weights must be given for both directions or none")
    if aux is None:
        if weighted:
            raise ctx.shape_error("auxiliary weights are given without the auxiliary input")
        return None
    if tuple(aux.shape) != tuple(x.shape):
        raise ctx.unsupported(
            f"auxiliary input {quoted(aux.name)} has shape {list(aux.shape)}; LiteRT's kernel "
            f"steps through it as if it had the input's shape {list(x.shape)}")
    float_operands(ctx, [aux])
    return aux


def prepare(ctx: OpContext):
    merge = bool(ctx.option("merge_outputs", False))
    ctx.check_arity(12, 12, 1 if merge else 2)
    x = ctx.input(0)
    if x.dtype != np.float32:
        raise ctx.unsupported(f"input {quoted(x.name)} is {x.dtype.name}; LiteRT's "
                              "BIDIRECTIONAL_SEQUENCE_RNN takes float32 input")
    time_major = bool(ctx.option("time_major", False))
    steps, batch, n_input = input_dims(ctx, x, True, time_major)
    weighted = ctx.optional_input(FW_AUX) is not None
    aux = _aux(ctx, x, weighted)
    stacked = aux is not None and not weighted
    if stacked and not time_major:
        raise ctx.unsupported(
            "an auxiliary input without auxiliary weights (the backward pass's input) in a "
            "batch-major sequence: LiteRT's kernel reads the input there instead")
    units = []
    for first in (FW, BW):
        w, r, b = (ctx.input(i) for i in first[:3])
        n = check_cell(ctx, w, r, b, n_input)
        s = state(ctx, first[3], "hidden state", batch * n)
        if s.rank != 2:
            raise ctx.shape_error(f"the hidden state {quoted(s.name)} must be [batch, units]")
        float_operands(ctx, [s])
        units.append(n)
    lead = tuple(x.shape[:2])
    specs = [OutputSpec(lead + (sum(units) if merge else units[0],), np.dtype(np.float32))]
    if not merge:
        specs.append(OutputSpec(lead + (units[1],), np.dtype(np.float32)))

    def direction(first, aux_weights, backward):
        w, r, b = (ctx.input(i) for i in first[:3])
        aux_w = ctx.optional_input(aux_weights) if weighted else None
        if aux_w is not None and (aux_w.rank != 2 or tuple(aux_w.shape) !=
                                  (units[backward], n_input)):
            raise ctx.shape_error(f"auxiliary weights {quoted(aux_w.name)} have shape "
                                  f"{list(aux_w.shape)}; expected {[units[backward], n_input]}")
        offset = units[0] if (backward and merge) else 0
        return Direction(prepare_cell(ctx, w, r, b, aux_w), first[3], backward and stacked,
                         1 if (backward and not merge) else 0,
                         slice(offset, offset + units[backward]),
                         temporary(ctx, (steps * batch, units[backward]), np.float32))

    directions = (direction(FW, FW_AUX, False), direction(BW, BW_AUX, True))
    hybrid = isinstance(directions[0].cell, HybridRnnCell)
    if hybrid != isinstance(directions[1].cell, HybridRnnCell):
        raise ctx.unsupported("the forward and backward weights must both be float32 or "
                              "both int8")
    if hybrid and time_major and steps > 1:
        # bidirectional_sequence_rnn.cc's EvalHybrid wraps the time-major passes in one more
        # loop over time: both directions run the whole sequence max_time times.
        raise ctx.unsupported(
            "a hybrid BIDIRECTIONAL_SEQUENCE_RNN over a time-major sequence: LiteRT's kernel "
            "runs both passes once per time step (max_time times over), so its results are "
            "not the RNN's; use a batch-major sequence (time_major false)")
    if hybrid and merge and time_major and batch > 1:
        # measured: LiteRT 2.x crashes (segmentation fault) on this form
        raise ctx.unsupported("a hybrid BIDIRECTIONAL_SEQUENCE_RNN with merged time-major "
                              "outputs and batch > 1 crashes LiteRT's kernel; use batch 1 or "
                              "two outputs")
    return tuple(specs), Record(steps, batch, time_major, weighted, directions)


def eval(rec: Record, inputs, outputs) -> None:
    aux = inputs[AUX_INPUT]
    for backward, d in enumerate(rec.directions):
        source = aux if d.reads_aux_as_input else inputs[0]
        aux2d = aux.reshape(rec.steps * rec.batch, -1) if rec.uses_aux else None
        d.cell.contributions(source.reshape(rec.steps * rec.batch, -1), aux2d, d.pre)
        pre = time_view(d.pre, rec.time_major, rec.steps, rec.batch)
        out = time_view(outputs[d.out_index], rec.time_major, rec.steps, rec.batch)
        h = inputs[d.state].reshape(rec.batch, -1)
        run_cell(d.cell, pre, h, out[..., d.out_slice], bool(backward))


OPS = (
    OpDef("BIDIRECTIONAL_SEQUENCE_RNN", float=Kernel(prepare, eval),
          version=hybrid_2_asymmetric_3),
)
