"""UNIDIRECTIONAL_SEQUENCE_LSTM and LSTM: float32 and full-integer (int8 activations,
int16 cell state), as LiteRT's unidirectional_sequence_lstm.cc and lstm.cc (the full
kernel) run them.

Operands: operands.py (20 or 24 inputs; 24 with layer norm when the forget gate's
coefficients are given). UNIDIRECTIONAL_SEQUENCE_LSTM takes a [batch, time, features]
input ([time, batch, features] with ``time_major``) and returns h of every step with
the same layout; LSTM is one step on a [batch, features] input (lstm.cc calls the same
evaluation with max_time 1). The output state (input 18) and cell state (input 19) are
variable tensors that eval() updates in place, so the state carries from one invoke()
to the next until the variables are reset (allocation.reset_variables).

The cell arithmetic: float_cell.py (EvalFloat) and integer_cell.py (EvalInteger8x8_16,
whose parameters integer_params.py prepares). Both LiteRT kernel sets register the
same LSTM kernels built on the same tensor_utils, so ``ctx.quant.kernels`` does not
change the integer result (``ctx.quant.rounding`` picks MBQM's rounding). Int8 weights
with float activations (dynamic-range "hybrid" LSTMs): hybrid_cell.py (EvalHybrid).
LSTMOptions' BASIC kernel is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.names import quoted
from ..base import Chosen, Kernel, OpContext, OutputSpec, TensorInfo, run_chosen, temporary
from ..common.fused import NONE
from .float_cell import (FloatCell, input_contributions, nonzero_inputs, prepare_float_cell,
                         run_float)
from .integer_cell import IntegerCell, make_integer_cell, run_integer
from .integer_cell import input_contributions as integer_input_contributions
from .hybrid_cell import hybrid_input_contributions, is_hybrid, prepare_hybrid_cell, run_hybrid
from .integer_params import prepare_integer_cell
from .operands import CellOperands, cell_geometry, float_operands, input_dims, read_cell, state
from ..opdef import OpDef, QuantRule
from ..versions import OpSignature, T

OUTPUT_STATE, CELL_STATE = 18, 19
FULL_KERNEL = 0  # LSTMKernelType.FULL (BASIC = 1 is the legacy 4-output uint8 kernel)


def time_view(a: np.ndarray, time_major: bool, steps: int, batch: int) -> np.ndarray:
    """[time, batch, ...] view of a sequence array laid out time- or batch-major."""
    if time_major:
        return a.reshape(steps, batch, -1)
    return a.reshape(batch, steps, -1).transpose(1, 0, 2)


@dataclass(frozen=True)
class Layout:
    steps: int
    batch: int
    n_input: int
    n_cell: int
    n_output: int
    time_major: bool


def check_clips(ctx: OpContext) -> tuple[float, float]:
    clips = (float(ctx.option("cell_clip", 0.0)), float(ctx.option("proj_clip", 0.0)))
    if not all(c >= 0 for c in clips):  # also refuses NaN
        raise ctx.shape_error(f"cell_clip and proj_clip must be >= 0 (0: no clipping), "
                              f"the file gives {clips[0]} and {clips[1]}")
    return clips


def check_types(ctx: OpContext, x: TensorInfo, cell: CellOperands) -> bool:
    """True for the integer kernel (int8 input), False for float32 (hybrid LSTMs are
    told apart before: hybrid_cell.is_hybrid); other types are refused."""
    if x.dtype == np.float32:
        return False
    if x.dtype == np.int8:
        return True
    raise ctx.unsupported(f"input {quoted(x.name)} is {x.dtype.name}; the LSTM kernels take "
                          "float32 or int8 (16x8 int16 LSTMs are not supported)")


@dataclass(frozen=True)
class FloatRecord:
    layout: Layout
    cell: FloatCell
    pre: np.ndarray  # [time * batch, 4 n_cell] float32 temporary
    z: np.ndarray  # [batch, 4 n_cell]


@dataclass(frozen=True)
class HybridRecord(FloatRecord):
    """FloatRecord's fields, ``cell`` a hybrid_cell.HybridCell."""


@dataclass(frozen=True)
class IntegerRecord:
    layout: Layout
    cell: IntegerCell
    pre: np.ndarray  # [time * batch, 4 n_cell] int64 temporary


def _prepare(ctx: OpContext, sequence: bool):
    if len(ctx.inputs) not in (20, 24):
        raise ctx.shape_error(f"expects 20 or 24 inputs (24 with layer norm), the file "
                              f"gives {len(ctx.inputs)}")
    ctx.check_arity(len(ctx.inputs), len(ctx.inputs), 1)
    if not sequence and int(ctx.option("kernel_type", FULL_KERNEL)) != FULL_KERNEL:
        raise ctx.unsupported("the BASIC LSTM kernel type (legacy uint8) is not supported")
    x = ctx.input(0)
    time_major = bool(ctx.option("time_major", False)) if sequence else True
    steps, batch, n_input = input_dims(ctx, x, sequence, time_major)
    cell = read_cell(ctx, 1, layer_norm_first=20)
    hybrid = is_hybrid(x, cell)
    integer = False if hybrid else check_types(ctx, x, cell)
    diagonal = sequence and cell.recurrent_weights[3] is not None \
        and cell.recurrent_weights[3].rank == 1
    n_cell, n_output = cell_geometry(ctx, cell, n_input, diagonal)
    output_state = state(ctx, OUTPUT_STATE, "output state", batch * n_output)
    cell_state = state(ctx, CELL_STATE, "cell state", batch * n_cell)
    clips = check_clips(ctx)
    layout = Layout(steps, batch, n_input, n_cell, n_output, time_major)
    out_shape = tuple(x.shape[:-1]) + (n_output,)
    rows = steps * batch
    if hybrid:
        record = Chosen(eval_hybrid, HybridRecord(
            layout, prepare_hybrid_cell(ctx, cell, n_cell, n_output, clips,
                                        (output_state, cell_state), batch, time_major),
            temporary(ctx, (rows, 4 * n_cell), np.float32),
            temporary(ctx, (batch, 4 * n_cell), np.float32)))
    elif integer:
        params = prepare_integer_cell(ctx, cell, n_cell, n_output, x, output_state,
                                      cell_state, ctx.outputs[0], clips)
        record = Chosen(eval_integer, IntegerRecord(
            layout, make_integer_cell(params, time_major),
            temporary(ctx, (rows, 4 * n_cell), np.int64)))
    else:
        float_operands(ctx, [output_state, cell_state, *cell.input_weights,
                             *cell.recurrent_weights, *cell.peephole, *cell.bias,
                             *cell.layer_norm, cell.projection_weights, cell.projection_bias])
        record = Chosen(eval_float, FloatRecord(
            layout, prepare_float_cell(ctx, cell, n_cell, n_output, clips),
            temporary(ctx, (rows, 4 * n_cell), np.float32),
            temporary(ctx, (batch, 4 * n_cell), np.float32)))
    return (OutputSpec(out_shape, x.dtype),), record


def prepare_sequence(ctx: OpContext):
    return _prepare(ctx, sequence=True)


def prepare_step(ctx: OpContext):
    return _prepare(ctx, sequence=False)


def _views(layout: Layout, inputs, outputs, pre):
    h = inputs[OUTPUT_STATE].reshape(layout.batch, layout.n_output)
    c = inputs[CELL_STATE].reshape(layout.batch, layout.n_cell)
    out = time_view(outputs[0], layout.time_major, layout.steps, layout.batch)
    pre_t = time_view(pre, layout.time_major, layout.steps, layout.batch)
    return h, c, out, pre_t


def eval_float(rec: FloatRecord, inputs, outputs) -> None:
    lay = rec.layout
    input_contributions(rec.cell, inputs[0].reshape(-1, lay.n_input), None, rec.pre)
    h, c, out, pre = _views(lay, inputs, outputs, rec.pre)
    given = None
    if rec.cell.activation == NONE:
        x = time_view(inputs[0], lay.time_major, lay.steps, lay.batch)
        given = nonzero_inputs(x, None, lay.time_major)
    run_float(rec.cell, pre, h, c, out, False, rec.z, given)


def eval_hybrid(rec: HybridRecord, inputs, outputs) -> None:
    lay = rec.layout
    hybrid_input_contributions(rec.cell, inputs[0].reshape(-1, lay.n_input), None, rec.pre)
    h, c, out, pre = _views(lay, inputs, outputs, rec.pre)
    run_hybrid(rec.cell, pre, h, c, out, False, rec.z)


def eval_integer(rec: IntegerRecord, inputs, outputs) -> None:
    lay = rec.layout
    integer_input_contributions(rec.cell, inputs[0].reshape(-1, lay.n_input), rec.pre)
    h, c, out, pre = _views(lay, inputs, outputs, rec.pre)
    run_integer(rec.cell, pre, h, c, out)


def _hybrid(sig: OpSignature) -> bool:
    return (sig.input(0).type == T.FLOAT32 and sig.input(2).type == T.INT8
            and sig.output(0).type == T.FLOAT32)


def version_sequence(sig: OpSignature) -> int:
    """op_version.cc, UNIDIRECTIONAL_SEQUENCE_LSTM: 16x8 (int16 input and output, int8
    weights) 5; diagonal_recurrent_tensors 4; hybrid 3 with asymmetric_quantize_inputs,
    else 2; 1 otherwise (float and int8 alike)."""
    if sig.int16_in_out and sig.input(2).type == T.INT8:
        return 5
    if sig.option("diagonal_recurrent_tensors", False):
        return 4
    if _hybrid(sig):
        return 3 if sig.option("asymmetric_quantize_inputs", False) else 2
    return 1


def version_step(sig: OpSignature) -> int:
    """op_version.cc, LSTM: full kernel 16x8 5; full kernel hybrid 4 with
    asymmetric_quantize_inputs, else 3; the BASIC kernel 2; 1 otherwise."""
    full = sig.option("kernel_type", FULL_KERNEL) == FULL_KERNEL
    if full and sig.int16_in_out and sig.input(2).type == T.INT8:
        return 5
    if full and _hybrid(sig):
        return 4 if sig.option("asymmetric_quantize_inputs", False) else 3
    return 1 if full else 2


_SEQUENCE = Kernel(prepare_sequence, run_chosen)

OPS = (
    # One kernel serves float32, hybrid and int8 (prepare() chooses). The quantizer's int8
    # mode writes the sequence op as TFLite's integer LSTM (QuantRule.RECURRENT: 8x8_16,
    # int8 only -- no uint8 or 16x8 kernel); the one-step LSTM, which the converter never
    # emits, stays float.
    OpDef("UNIDIRECTIONAL_SEQUENCE_LSTM", float=_SEQUENCE, integer=_SEQUENCE,
          quant=QuantRule.RECURRENT, uint8=False, version=version_sequence),
    OpDef("LSTM", float=Kernel(prepare_step, run_chosen), version=version_step),
)
