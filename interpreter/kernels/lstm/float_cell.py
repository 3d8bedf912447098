"""The float32 LSTM cell of LiteRT's lstm_eval.cc (EvalFloat / LstmStepFloat), run over a
whole sequence.

Per time step, with ``*`` a matrix product and ``.`` an elementwise one:

    i = sigmoid(W_i * x + A_i * aux + R_i * h + p_i . c + b_i)     (CIFG: i = 1 - f)
    f = sigmoid(W_f * x + A_f * aux + R_f * h + p_f . c + b_f)
    g = act(W_c * x + A_c * aux + R_c * h + b_c)
    c = clip(f . c + i . g, cell_clip)
    o = sigmoid(W_o * x + A_o * aux + R_o * h + p_o . c + b_o)     (the *updated* c)
    h = o . act(c);  with projection  h = clip(P * h + b_P, proj_clip)

``act`` is the op's fused_activation_function (TANH in every converter-made LSTM;
tensor_utils::ApplyActivationToVector). With layer norm a gate is
``sigmoid(ln . normalize(W x + R h + p . c) + b)``, normalize subtracting the row mean
and dividing by sqrt(variance + 1e-8) (MeanStddevNormalization). Recurrent weights of
rank 1 (UNIDIRECTIONAL_SEQUENCE_LSTM's diagonal_recurrent_tensors) multiply h
elementwise. A clip of 0 means no clipping.

The input contributions of every time step do not depend on the state, so invoke()
computes them for the whole sequence in one product (plus the biases), then steps
through time with the recurrent product only. LiteRT sums in another order (ruy /
Eigen), so results agree to float32 rounding, not bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....schema.ops import ACTIVATION
from ..base import OpContext
from ..common.eigen_math import activation_code, apply_activation
from .operands import CellOperands

def sigmoid(x: np.ndarray) -> None:
    """1 / (1 + exp(-x)) in place (exp overflows to inf for x < -88: the result is 0)."""
    with np.errstate(over="ignore"):
        np.negative(x, out=x)
        np.exp(x, out=x)
    np.add(x, np.float32(1), out=x)
    np.reciprocal(x, out=x)


def constant_float(ctx: OpContext, t, role: str) -> np.ndarray | None:
    if t is None:
        return None
    if t.data is None:
        raise ctx.unsupported(
            f"the LSTM's {role} must be constant tensors (computed weights are not supported)"
        )
    return np.asarray(t.data, np.float32)


@dataclass(frozen=True, kw_only=True)
class FloatCell:
    n_cell: int
    n_output: int
    cifg: bool
    w_x: np.ndarray  # (n_input, 4 * n_cell): the input weights of every gate, transposed
    w_aux: np.ndarray | None  # (n_aux, 4 * n_cell)
    w_h: np.ndarray | None  # (n_output, 4 * n_cell); None when the recurrence is diagonal
    w_h_diag: np.ndarray | None  # (4 * n_cell,): diagonal recurrent weights
    bias: np.ndarray  # (4 * n_cell,), zero for the input gate of a CIFG LSTM
    peephole: tuple  # (n_cell,) or None per gate
    layer_norm: np.ndarray | None  # (4, n_cell)
    projection: np.ndarray | None  # (n_cell, n_output), transposed
    projection_bias: np.ndarray | None
    activation: int
    cell_clip: np.float32
    proj_clip: np.float32


def _stack(parts, rows: int, cols: int) -> np.ndarray:
    """The four gates' matrices side by side (zeros for an omitted CIFG input gate)."""
    out = np.zeros((rows, 4 * cols), np.float32)
    for g, part in enumerate(parts):
        if part is not None:
            out[:, g * cols:(g + 1) * cols] = part.T  # part is [cols, rows]
    return out


def prepare_float_cell(ctx: OpContext, cell: CellOperands, n_cell: int, n_output: int,
                       clips: tuple[float, float]) -> FloatCell:
    n_input = int(cell.input_weights[3].shape[1])
    w_x = _stack([constant_float(ctx, w, "input weights") for w in cell.input_weights],
                 n_input, n_cell)
    w_aux = None
    if cell.has_aux:
        n_aux = int(cell.aux_weights[1].shape[1])
        w_aux = _stack([constant_float(ctx, w, "auxiliary input weights")
                        for w in cell.aux_weights], n_aux, n_cell)
    recurrent = [constant_float(ctx, w, "recurrent weights") for w in cell.recurrent_weights]
    diagonal = recurrent[3].ndim == 1
    w_h = None if diagonal else _stack(recurrent, n_output, n_cell)
    w_h_diag = None
    if diagonal:
        w_h_diag = np.concatenate([np.zeros(n_cell, np.float32) if r is None else r
                                   for r in recurrent])
    bias = np.concatenate([np.zeros(n_cell, np.float32) if b is None
                           else constant_float(ctx, b, "gate biases") for b in cell.bias])
    layer_norm = None
    if cell.uses_layer_norm:
        layer_norm = np.stack([np.zeros(n_cell, np.float32) if v is None
                               else constant_float(ctx, v, "layer norm coefficients")
                               for v in cell.layer_norm])
    peephole = (None,) * 4
    if cell.uses_peephole:
        peephole = tuple(None if (p is None or (g == 0 and cell.cifg))
                         else constant_float(ctx, p, "peephole weights")
                         for g, p in enumerate(cell.peephole))
    projection = constant_float(ctx, cell.projection_weights, "projection weights")
    return FloatCell(
        n_cell=n_cell, n_output=n_output, cifg=cell.cifg, w_x=w_x, w_aux=w_aux, w_h=w_h,
        w_h_diag=w_h_diag, bias=bias, peephole=peephole, layer_norm=layer_norm,
        projection=None if projection is None else np.ascontiguousarray(projection.T),
        projection_bias=constant_float(ctx, cell.projection_bias, "projection bias"),
        activation=activation_code(ctx), cell_clip=np.float32(clips[0]),
        proj_clip=np.float32(clips[1]))


def input_contributions(cell: FloatCell, x2d: np.ndarray, aux2d: np.ndarray | None,
                        out: np.ndarray) -> None:
    """out[rows, 4 * n_cell] = W x (+ A aux) (+ b without layer norm) for every row of
    the sequence at once."""
    np.matmul(x2d, cell.w_x, out=out)
    if aux2d is not None and cell.w_aux is not None:
        out += aux2d @ cell.w_aux
    if cell.layer_norm is None:
        out += cell.bias


def _normalize(cell: FloatCell, g: int, z: np.ndarray) -> None:
    """MeanStddevNormalization, the layer-norm coefficients, then the bias."""
    n = cell.n_cell
    mean = z.mean(axis=1, keepdims=True, dtype=np.float32)
    z -= mean
    variance = np.mean(z * z, axis=1, keepdims=True, dtype=np.float32)
    z /= np.sqrt(variance + np.float32(1e-8))
    z *= cell.layer_norm[g]
    z += cell.bias[g * n:(g + 1) * n]


def _finish_gate(cell: FloatCell, g: int, z: np.ndarray, c: np.ndarray) -> None:
    if cell.peephole[g] is not None:
        z += c * cell.peephole[g]
    if cell.layer_norm is not None:
        _normalize(cell, g, z)
    if g == 2:
        apply_activation(cell.activation, z)
    else:
        sigmoid(z)


def nonzero_inputs(x: np.ndarray, aux: np.ndarray | None, time_major: bool) -> np.ndarray:
    """[time, batch] count of LiteRT's IsZeroVector tests that fail (0, 1 or 2: the input
    and the auxiliary input) for every LstmStepFloat call: one call per time step in
    time-major order, one per (batch row, step) otherwise. ``x`` / ``aux`` are
    [time, batch, features] views. Only an activation of NONE needs them (run_float)."""
    counts = np.zeros(x.shape[:2], np.int64)
    for seq in (x, aux):
        if seq is not None:
            given = np.any(seq != 0, axis=2)
            if time_major:
                given = np.any(given, axis=1, keepdims=True)
            counts += given
    return counts


def _linear_cell_gate(cell: FloatCell, g: np.ndarray, pre_g: np.ndarray,
                      given: np.ndarray) -> None:
    """The cell gate LiteRT leaves behind when the activation is NONE.

    CalculateLstmGateFloat accumulates by ping-ponging between the gate buffer and a
    scratch buffer, skipping the products of all-zero inputs, and relies on the
    activation to copy the result into the gate buffer -- which NONE does not do
    (ApplyActivationToVector returns at once). So the gate buffer holds the full value
    only when the result ended there: one nonzero input (two with diagonal recurrent
    weights, or none); else its last partial sum: the bias (0 with layer norm) when
    no input was nonzero, the input terms when two were."""
    n = cell.n_cell
    initial = 0 if cell.layer_norm is not None else cell.bias[2 * n:3 * n]
    if cell.w_h is None:  # the diagonal recurrence swaps the buffers once more
        keep = (given % 2 == 0)[:, None]
        np.copyto(g, np.broadcast_to(initial, g.shape), where=~keep)
        return
    np.copyto(g, np.broadcast_to(initial, g.shape), where=(given == 0)[:, None])
    np.copyto(g, pre_g, where=(given == 2)[:, None])


def update_cell(c: np.ndarray, i: np.ndarray, f: np.ndarray, g: np.ndarray, cifg: bool,
                clip: np.float32) -> None:
    """UpdateLstmCellFloat in place: c = clip(f . c + i . g), i = 1 - f with CIFG (the
    forget gate's buffer then holds 1 - f)."""
    c *= f
    if cifg:
        np.subtract(np.float32(1), f, out=f)
        c += f * g
    else:
        c += i * g
    if clip > 0:
        np.clip(c, -clip, clip, out=c)


def run_float(cell: FloatCell, pre: np.ndarray, h: np.ndarray, c: np.ndarray,
              out: np.ndarray, reverse: bool, z: np.ndarray,
              given: np.ndarray | None = None) -> None:
    """Step through ``pre`` [time, batch, 4 * n_cell] (input_contributions), updating the
    states ``h`` [batch, n_output] and ``c`` [batch, n_cell] in place and writing h into
    ``out`` [time, batch, n_output]; ``z`` is [batch, 4 * n_cell] scratch. With the
    activation NONE, ``given`` is nonzero_inputs() and LiteRT's results are reproduced:
    _linear_cell_gate, and h = o . g instead of o . c (CalculateLstmOutputFloat's
    activation leaves the cell gate in its scratch buffer)."""
    n = cell.n_cell
    linear = cell.activation == ACTIVATION["NONE"]
    steps = range(pre.shape[0] - 1, -1, -1) if reverse else range(pre.shape[0])
    gates = [z[:, g * n:(g + 1) * n] for g in range(4)]
    i, f, g_, o = gates
    for t in steps:
        if cell.w_h is not None:
            np.matmul(h, cell.w_h, out=z)
        else:
            np.multiply(np.tile(h, (1, 4)), cell.w_h_diag, out=z)
        z += pre[t]
        for g in (1, 2) if cell.cifg else (0, 1, 2):
            _finish_gate(cell, g, gates[g], c)
        if linear:
            _linear_cell_gate(cell, g_, pre[t][:, 2 * n:3 * n], given[t])
        update_cell(c, i, f, g_, cell.cifg, cell.cell_clip)
        _finish_gate(cell, 3, o, c)
        hidden = g_.copy() if linear else c.copy()
        apply_activation(cell.activation, hidden)
        hidden *= o
        if cell.projection is not None:
            np.matmul(hidden, cell.projection, out=h)
            if cell.projection_bias is not None:
                h += cell.projection_bias
            if cell.proj_clip > 0:
                np.clip(h, -cell.proj_clip, cell.proj_clip, out=h)
        else:
            h[...] = hidden
        out[t] = h
