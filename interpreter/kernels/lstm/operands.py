"""The operands of TFLite's LSTM ops, by role, and the shape checks LiteRT makes on them.

One LSTM direction has 18 weight / bias operands, two state tensors and, in the 24-input
form, four layer-norm coefficient vectors (tensorflow/lite/kernels/lstm_shared.h):

    0 input           1-4 input_to_{input,forget,cell,output}_weights   [n_cell, n_input]
    5-8 recurrent_to_{input,forget,cell,output}_weights                 [n_cell, n_output]
    9-11 cell_to_{input,forget,output}_weights (peephole)               [n_cell]
    12-15 {input,forget,cell,output}_gate_bias                          [n_cell]
    16 projection_weights [n_output, n_cell]    17 projection_bias [n_output]
    18 output_state (variable) [n_batch * n_output]
    19 cell_state (variable)   [n_batch * n_cell]
    20-23 {input,forget,cell,output}_layer_norm_coefficients            [n_cell]

The input gate's operands (input and recurrent weights, peephole, bias, layer norm) are
absent together in a CIFG LSTM (coupled input and forget gates: i = 1 - f).
BIDIRECTIONAL_SEQUENCE_LSTM has 48 inputs: forward operands 1-17, backward 18-34, the
four states 35-38, an auxiliary input 39 and its weights 40-43 (fw) / 44-47 (bw).

``read_cell`` collects one direction's operands into a ``CellOperands``;
``cell_geometry`` runs CheckInputTensorDimensions (unidirectional_sequence_lstm.cc,
lstm.cc, bidirectional_sequence_lstm.cc) and returns (n_cell, n_output); ``state``
checks a variable state tensor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.names import quoted
from ..base import OpContext, TensorInfo, num_elements

GATES = ("input", "forget", "cell", "output")


@dataclass(frozen=True)
class CellOperands:
    """One LSTM direction's operands (None: omitted), each tuple in GATES order."""

    input_weights: tuple[TensorInfo | None, ...]  # [n_cell, n_input] per gate
    recurrent_weights: tuple[TensorInfo | None, ...]  # [n_cell, n_output] (or [n_cell])
    peephole: tuple[TensorInfo | None, ...]  # cell_to_gate [n_cell]; the cell gate: None
    bias: tuple[TensorInfo | None, ...]
    layer_norm: tuple[TensorInfo | None, ...]
    projection_weights: TensorInfo | None
    projection_bias: TensorInfo | None
    aux_weights: tuple[TensorInfo | None, ...] = (None, None, None, None)

    @property
    def cifg(self) -> bool:
        return self.input_weights[0] is None

    @property
    def uses_peephole(self) -> bool:
        return self.peephole[3] is not None

    @property
    def uses_layer_norm(self) -> bool:
        return self.layer_norm[1] is not None

    @property
    def has_aux(self) -> bool:
        return self.aux_weights[1] is not None


def read_cell(ctx: OpContext, first: int, layer_norm_first: int | None = None,
              aux_first: int | None = None) -> CellOperands:
    """The operands of one direction whose input_to_input_weights is input ``first``
    (1 for LSTM / UNIDIRECTIONAL_SEQUENCE_LSTM, 1 / 18 for the two directions of
    BIDIRECTIONAL_SEQUENCE_LSTM)."""
    get = ctx.optional_input
    layer_norm = (None,) * 4
    if layer_norm_first is not None and len(ctx.inputs) > layer_norm_first + 3:
        layer_norm = tuple(get(layer_norm_first + g) for g in range(4))
    aux = (None,) * 4
    if aux_first is not None:
        aux = tuple(get(aux_first + g) for g in range(4))
    return CellOperands(
        input_weights=tuple(get(first + g) for g in range(4)),
        recurrent_weights=tuple(get(first + 4 + g) for g in range(4)),
        peephole=(get(first + 8), get(first + 9), None, get(first + 10)),
        bias=tuple(get(first + 11 + g) for g in range(4)),
        layer_norm=layer_norm,
        projection_weights=get(first + 15),
        projection_bias=get(first + 16),
        aux_weights=aux,
    )


def _require(ctx: OpContext, t: TensorInfo | None, role: str) -> TensorInfo:
    if t is None:
        raise ctx.shape_error(f"the {role} is required but the file omits it")
    return t


def _check_shape(ctx: OpContext, t: TensorInfo, role: str, shape: tuple[int, ...]) -> None:
    if tuple(t.shape) != tuple(shape):
        raise ctx.shape_error(
            f"{role} {quoted(t.name)} has shape {list(t.shape)}; expected {list(shape)} "
            "(the LSTM's weights must agree on n_cell, n_input and n_output)"
        )


def cell_geometry(ctx: OpContext, cell: CellOperands, n_input: int,
                  diagonal_recurrent: bool = False) -> tuple[int, int]:
    """(n_cell, n_output) of one direction, after LiteRT's consistency checks:
    input weights [n_cell, n_input]; recurrent weights [n_cell, n_output] (or [n_cell]
    when ``diagonal_recurrent``); peepholes, biases and layer-norm vectors [n_cell];
    projection [n_output, n_cell] and bias [n_output]; the CIFG and peephole sets all
    or none."""
    to_output = _require(ctx, cell.input_weights[3], "input_to_output_weights")
    if len(to_output.shape) != 2:
        raise ctx.shape_error(
            f"input_to_output_weights {quoted(to_output.name)} has shape "
            f"{list(to_output.shape)}; expected [n_cell, n_input]"
        )
    n_cell = int(to_output.shape[0])
    recurrent_out = _require(ctx, cell.recurrent_weights[3], "recurrent_to_output_weights")
    if diagonal_recurrent:
        n_output = n_cell
    elif len(recurrent_out.shape) == 2:
        n_output = int(recurrent_out.shape[1])
    else:
        raise ctx.shape_error(
            f"recurrent_to_output_weights {quoted(recurrent_out.name)} has shape "
            f"{list(recurrent_out.shape)}; expected [n_cell, n_output]"
        )
    if n_cell < 1 or n_output < 1:
        raise ctx.shape_error(f"the LSTM has {n_cell} cells and {n_output} outputs")
    for g, name in enumerate(GATES):
        required = g > 0 or not cell.cifg
        w = cell.input_weights[g]
        r = cell.recurrent_weights[g]
        if required:
            w = _require(ctx, w, f"input_to_{name}_weights")
            r = _require(ctx, r, f"recurrent_to_{name}_weights")
        elif r is not None:
            raise ctx.shape_error(
                "input_to_input_weights and recurrent_to_input_weights must both be given "
                "or both omitted (CIFG)"
            )
        if w is not None:
            _check_shape(ctx, w, f"input_to_{name}_weights", (n_cell, n_input))
            recurrent_shape = (n_cell,) if diagonal_recurrent else (n_cell, n_output)
            _check_shape(ctx, r, f"recurrent_to_{name}_weights", recurrent_shape)
        a = cell.aux_weights[g]
        if a is not None and (a.rank != 2 or a.shape[0] != n_cell):
            raise ctx.shape_error(
                f"aux_input_to_{name}_weights {quoted(a.name)} has shape {list(a.shape)}; "
                f"expected [{n_cell}, n_aux_input]"
            )
        bias = cell.bias[g]
        if required:
            _check_shape(ctx, _require(ctx, bias, f"{name}_gate_bias"), f"{name}_gate_bias",
                         (n_cell,))
        elif bias is not None:
            raise ctx.shape_error("a CIFG LSTM (no input gate weights) has no input_gate_bias")
    to_input, to_forget, _, to_output = (p is not None for p in cell.peephole)
    # LiteRT: all or none, except that a CIFG LSTM ignores cell_to_input_weights.
    if not ((to_forget and to_output and (to_input or cell.cifg))
            or not (to_input or to_forget or to_output)):
        raise ctx.shape_error("the peephole (cell_to_*) weights must be given all or none")
    for p in cell.peephole:
        if p is not None:
            _check_shape(ctx, p, "peephole weights", (n_cell,))
    if cell.uses_layer_norm:
        for g, name in enumerate(GATES):
            coef = cell.layer_norm[g]
            if g == 0 and cell.cifg:
                if coef is not None:
                    raise ctx.shape_error("a CIFG LSTM has no input_layer_norm_coefficients")
                continue
            _check_shape(ctx, _require(ctx, coef, f"{name}_layer_norm_coefficients"),
                         f"{name}_layer_norm_coefficients", (n_cell,))
    if cell.projection_weights is not None:
        _check_shape(ctx, cell.projection_weights, "projection_weights", (n_output, n_cell))
    if cell.projection_bias is not None:
        if cell.projection_weights is None:
            raise ctx.shape_error("projection_bias is given without projection_weights")
        _check_shape(ctx, cell.projection_bias, "projection_bias", (n_output,))
    elif cell.projection_weights is None and n_output != n_cell:
        raise ctx.shape_error(
            f"without projection weights the LSTM's n_output ({n_output}) must equal n_cell "
            f"({n_cell})"
        )
    return n_cell, n_output


def state(ctx: OpContext, index: int, role: str, elements: int) -> TensorInfo:
    """A state operand: a variable tensor (LiteRT's GetVariableInput) holding
    ``elements`` values (any shape)."""
    t = ctx.input(index)
    if not t.is_variable or t.is_constant:
        raise ctx.unsupported(
            f"the {role} (input {index}, tensor {quoted(t.name)}) must be a variable tensor "
            "without data (LiteRT refuses the file otherwise)"
        )
    if num_elements(t.shape) != elements:
        raise ctx.shape_error(
            f"the {role} {quoted(t.name)} has shape {list(t.shape)}; it must hold "
            f"n_batch * units = {elements} values"
        )
    return t


def input_dims(ctx: OpContext, x: TensorInfo, sequence: bool,
               time_major: bool) -> tuple[int, int, int]:
    """(max_time, n_batch, n_input) of the data input: a rank-3 sequence for the
    sequence ops, [batch, features] (one time step) for LSTM and RNN."""
    if not sequence:
        if x.rank != 2:
            raise ctx.shape_error(f"input {quoted(x.name)} has shape {list(x.shape)}; "
                                  f"{ctx.op_name} takes [batch, features]")
        return 1, int(x.shape[0]), int(x.shape[1])
    if x.rank != 3:
        raise ctx.shape_error(
            f"input {quoted(x.name)} has shape {list(x.shape)}; expected a rank-3 sequence "
            f"{'[time, batch, features]' if time_major else '[batch, time, features]'}"
        )
    t, b = (x.shape[0], x.shape[1]) if time_major else (x.shape[1], x.shape[0])
    return int(t), int(b), int(x.shape[2])


def float_operands(ctx: OpContext, tensors) -> None:
    """Every given operand is float32 (the float kernel)."""
    for t in tensors:
        if t is not None and t.dtype != np.float32:
            raise ctx.unsupported(
                f"tensor {quoted(t.name)} is {t.dtype.name} in a float32 LSTM; "
                + (hybrid_message() if t.dtype in (np.int8, np.uint8) else
                   "every weight and state must be float32")
            )


def hybrid_message() -> str:
    return ("LiteRT runs an LSTM with float activations as dynamic-range (hybrid) only when "
            "its input_to_output_weights are int8 too; requantize the file's weights "
            "consistently")
