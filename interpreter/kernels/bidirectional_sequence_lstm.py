"""BIDIRECTIONAL_SEQUENCE_LSTM: two float32 LSTMs over one sequence, the backward one
stepping from the last time step to the first, as LiteRT's
bidirectional_sequence_lstm.cc runs them (lstm_eval.cc EvalFloat, forward_sequence
false for the backward pass).

48 inputs (lstm/operands.py): the forward cell's operands 1-17, the backward cell's
18-34, the forward output / cell states 35 / 36 and the backward ones 37 / 38 (variable
tensors, updated in place), an optional auxiliary input 39 and its weights 40-43
(forward) / 44-47 (backward). LiteRT's three modes:

* no auxiliary input: both directions read ``input``;
* an auxiliary input with weights (stacking with cross links,
  stack_bidirectional_rnn): both read ``input`` and add their auxiliary products;
* an auxiliary input without weights (static_bidirectional_rnn after another
  bidirectional layer): the backward direction reads the auxiliary input instead.

Outputs: the forward and backward h sequences, or with ``merge_outputs`` one output
whose last dimension holds the forward then the backward units. ``time_major``
([time, batch, features]) is the schema's default when the options table is given;
without one LiteRT's zeroed parameters mean batch-major.

LiteRT has no integer BIDIRECTIONAL_SEQUENCE_LSTM (its Prepare takes float32 input
only; TensorFlow's converter writes two UNIDIRECTIONAL_SEQUENCE_LSTMs and REVERSE_V2
instead). Int8 weights with float input (hybrid, EvalHybrid for each direction) run
the cell of lstm/hybrid_cell.py, auxiliary weights int8 too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.names import quoted
from .base import Chosen, Kernel, OpContext, OutputSpec, TensorInfo, run_chosen, temporary
from .lstm import check_clips, time_view
from .common.fused import NONE
from .lstm.float_cell import (FloatCell, input_contributions, nonzero_inputs, prepare_float_cell,
                              run_float)
from .lstm.hybrid_cell import (hybrid_input_contributions, is_hybrid, prepare_hybrid_cell,
                               run_hybrid)
from .lstm.operands import (CellOperands, cell_geometry, float_operands, input_dims, read_cell,
                            state)
from .opdef import OpDef
from .versions import hybrid_2_asymmetric_3

FW_FIRST, BW_FIRST = 1, 18  # each direction's input_to_input_weights
FW_STATES, BW_STATES = (35, 36), (37, 38)
AUX_INPUT, FW_AUX_FIRST, BW_AUX_FIRST = 39, 40, 44


@dataclass(frozen=True)
class Direction:
    cell: FloatCell  # a HybridCell in a HybridRecord
    reads_aux_as_input: bool  # the backward pass of the no-cross-link stacking mode
    states: tuple[int, int]  # input indices of its output and cell states
    out_index: int  # the output it writes
    out_slice: slice  # its units in that output's last dimension
    pre: np.ndarray  # [time * batch, 4 n_cell] temporary
    z: np.ndarray  # [batch, 4 n_cell]


@dataclass(frozen=True)
class BidirectionalRecord:
    steps: int
    batch: int
    n_input: int
    time_major: bool
    uses_aux: bool  # the auxiliary input feeds both directions through weights
    directions: tuple[Direction, Direction]


@dataclass(frozen=True)
class HybridRecord(BidirectionalRecord):
    """The same fields; its directions hold lstm.hybrid_cell.HybridCell cells."""


def _aux_input(ctx: OpContext, x: TensorInfo, fw: CellOperands, bw: CellOperands,
               n_input: int) -> tuple[TensorInfo | None, bool]:
    """(auxiliary input or None, whether it is multiplied by aux weights):
    CheckAuxInputTensorDimensions."""
    aux = ctx.optional_input(AUX_INPUT)
    weighted = fw.has_aux
    if weighted != bw.has_aux:
        raise ctx.shape_error("auxiliary weights must be given for both directions or none")
    if aux is None:
        if weighted:
            raise ctx.shape_error("auxiliary input weights are given without the auxiliary "
                                  "input (input 39)")
        return None, False
    if aux.rank != 3 or tuple(aux.shape[:2]) != tuple(x.shape[:2]):
        raise ctx.shape_error(
            f"auxiliary input {quoted(aux.name)} has shape {list(aux.shape)}; it must be "
            f"rank 3 with the input's first two dimensions {list(x.shape[:2])}"
        )
    if weighted:
        for cell in (fw, bw):
            for w in cell.aux_weights[1:]:
                if w is None or w.rank != 2 or w.shape[1] != aux.shape[2]:
                    raise ctx.shape_error(
                        f"auxiliary weights must be given for the forget, cell and output "
                        f"gates as [n_cell, {aux.shape[2]}]"
                    )
    elif aux.shape[2] != n_input:
        raise ctx.shape_error(
            f"auxiliary input {quoted(aux.name)} has {aux.shape[2]} features; without "
            f"auxiliary weights the backward pass reads it as its input ({n_input})"
        )
    return aux, weighted


def prepare(ctx: OpContext):
    merge = bool(ctx.option("merge_outputs", False))
    ctx.check_arity(48, 48, 1 if merge else 2)
    x = ctx.input(0)
    if x.dtype != np.float32:
        raise ctx.unsupported(
            f"input {quoted(x.name)} is {x.dtype.name}; LiteRT's BIDIRECTIONAL_SEQUENCE_LSTM "
            "takes float32 only (integer models use two UNIDIRECTIONAL_SEQUENCE_LSTMs)"
        )
    time_major = bool(ctx.option("time_major", False))
    steps, batch, n_input = input_dims(ctx, x, True, time_major)
    if merge and not time_major and batch > 1:
        # EvalFloat offsets each batch row's states by the merged output's width
        # (output_batch_leading_dim), past the end of the state tensors.
        raise ctx.unsupported(
            "merge_outputs with a batch-major input of batch > 1: LiteRT's kernel reads and "
            "writes the states out of bounds there; use time_major or batch 1"
        )
    fw = read_cell(ctx, FW_FIRST, aux_first=FW_AUX_FIRST)
    bw = read_cell(ctx, BW_FIRST, aux_first=BW_AUX_FIRST)
    hybrid = is_hybrid(x, fw)
    aux, weighted = _aux_input(ctx, x, fw, bw, n_input)
    sizes = [cell_geometry(ctx, cell, n_input) for cell in (fw, bw)]
    (n_fw_cell, n_fw_out), (n_bw_cell, n_bw_out) = sizes
    states = [state(ctx, FW_STATES[0], "forward output state", batch * n_fw_out),
              state(ctx, FW_STATES[1], "forward cell state", batch * n_fw_cell),
              state(ctx, BW_STATES[0], "backward output state", batch * n_bw_out),
              state(ctx, BW_STATES[1], "backward cell state", batch * n_bw_cell)]
    float_operands(ctx, [aux, *states] + ([] if hybrid else [t for cell in (fw, bw) for t in (
        *cell.input_weights, *cell.recurrent_weights, *cell.peephole, *cell.bias,
        *cell.aux_weights, cell.projection_weights, cell.projection_bias)]))
    clips = check_clips(ctx)
    lead = tuple(x.shape[:2])
    specs = [OutputSpec(lead + (n_fw_out + n_bw_out if merge else n_fw_out,),
                        np.dtype(np.float32))]
    if not merge:
        specs.append(OutputSpec(lead + (n_bw_out,), np.dtype(np.float32)))
    rows = steps * batch

    def direction(cell, n_cell, n_out, backward):
        if hybrid:
            pair = states[2:] if backward else states[:2]
            float_cell = prepare_hybrid_cell(ctx, cell, n_cell, n_out, clips, pair, batch,
                                             time_major)
        else:
            float_cell = prepare_float_cell(ctx, cell, n_cell, n_out, clips)
        offset = n_fw_out if (backward and merge) else 0
        return Direction(float_cell, backward and aux is not None and not weighted,
                         BW_STATES if backward else FW_STATES,
                         1 if (backward and not merge) else 0, slice(offset, offset + n_out),
                         temporary(ctx, (rows, 4 * n_cell), np.float32),
                         temporary(ctx, (batch, 4 * n_cell), np.float32))

    record = (HybridRecord if hybrid else BidirectionalRecord)(
        steps, batch, n_input, time_major, weighted,
        (direction(fw, n_fw_cell, n_fw_out, False), direction(bw, n_bw_cell, n_bw_out, True)))
    return tuple(specs), Chosen(eval_hybrid if hybrid else eval, record)


def _views(rec: BidirectionalRecord, d: Direction, inputs, outputs):
    """(input, auxiliary input rows or None, [time, batch] views of pre and of the
    direction's output, h, c) of one direction."""
    aux = inputs[AUX_INPUT]
    source = aux if d.reads_aux_as_input else inputs[0]
    aux2d = aux.reshape(rec.steps * rec.batch, -1) if rec.uses_aux else None
    pre = time_view(d.pre, rec.time_major, rec.steps, rec.batch)
    out = time_view(outputs[d.out_index], rec.time_major, rec.steps, rec.batch)
    h = inputs[d.states[0]].reshape(rec.batch, -1)
    c = inputs[d.states[1]].reshape(rec.batch, -1)
    return source, aux2d, pre, out[..., d.out_slice], h, c


def eval(rec: BidirectionalRecord, inputs, outputs) -> None:
    aux = inputs[AUX_INPUT]
    for backward, d in enumerate(rec.directions):
        source, aux2d, pre, out, h, c = _views(rec, d, inputs, outputs)
        input_contributions(d.cell, source.reshape(-1, rec.n_input), aux2d, d.pre)
        given = None
        if d.cell.activation == NONE:
            views = [None if a is None else time_view(a, rec.time_major, rec.steps, rec.batch)
                     for a in (source, aux if rec.uses_aux else None)]
            given = nonzero_inputs(*views, rec.time_major)
        run_float(d.cell, pre, h, c, out, bool(backward), d.z, given)


def eval_hybrid(rec: HybridRecord, inputs, outputs) -> None:
    for backward, d in enumerate(rec.directions):
        source, aux2d, pre, out, h, c = _views(rec, d, inputs, outputs)
        hybrid_input_contributions(d.cell, source.reshape(-1, rec.n_input), aux2d, d.pre)
        run_hybrid(d.cell, pre, h, c, out, bool(backward), d.z)


OPS = (
    OpDef("BIDIRECTIONAL_SEQUENCE_LSTM", float=Kernel(prepare, run_chosen),
          version=hybrid_2_asymmetric_3),
)
