"""The hybrid (dynamic-range) LSTM cell of LiteRT's lstm_eval.cc (EvalHybrid /
LstmStepHybrid): float32 input, states, biases and layer-norm coefficients; int8 weights
with one scale per tensor (what TensorFlow's converter writes with Optimize.DEFAULT and
no representative dataset).

Per time step, the input x and the output state h are quantized to int8 per batch row
(hybrid.rows.quantize_rows: symmetric, or asymmetric with the option
``asymmetric_quantize_inputs``), and each gate is

    z = b + float(W_q . x_q) * (s_x * s_W) + float(R_q . h_q) * (s_h * s_R)
          + (s_P * P_q) . c                                 (peephole, int8 weights)

in that order, in float32 (CalculateLstmGateHybrid). With layer norm z starts at 0 and
becomes ``ln . normalize(z) + b`` (MeanStddevNormalization: sequential float32 sums).
The cell update and output are the float kernel's (UpdateLstmCellFloat,
CalculateLstmOutputHybrid): c = clip(f . c + i . g), h = o . act(c); a projection
quantizes o . act(c) per row too: h = clip(b_P + float(P_q . m_q) * (s_m * s_P)).
With the activation NONE, h = o . g: ApplyActivationToVector(NONE) leaves its output
buffer -- the cell gate's scratch -- as it was.

The input products of every time step do not depend on the state, so eval computes
them for the whole sequence at once. A row of zeros quantizes to zeros, so LiteRT's
shortcuts for all-zero inputs (IsZeroVector) change nothing here.

Sigmoid and tanh are Eigen's (eigen_math.py), the sigmoid's single-value lanes placed
where LiteRT's scratch buffer puts each gate (``logistic_lanes``), so the results are
LiteRT's bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....schema.ops import ACTIVATION
from edgelite.names import quoted
from ..base import OpContext, TensorInfo
from ..hybrid.rows import HybridWeights, accumulate_products, quantize_rows
from ..common import eigen_math
from .float_cell import constant_float, update_cell
from .operands import CellOperands
from ..common.requantize import per_tensor_scale

_F32 = np.float32


@dataclass(frozen=True, kw_only=True)
class HybridCell:
    n_cell: int
    n_output: int
    cifg: bool
    asymmetric: bool
    w_x: HybridWeights  # input -> the four gates [n_input, 4 n_cell]
    w_aux: HybridWeights | None
    w_h: HybridWeights  # output state -> gates [n_output, 4 n_cell]
    bias: np.ndarray  # (4 n_cell,) float32; 0 for a CIFG input gate
    peephole: tuple  # float32 (n_cell,) s_P * P_q per gate, or None
    layer_norm: np.ndarray | None  # (4, n_cell)
    projection: HybridWeights | None  # [n_cell, n_output]
    projection_bias: np.ndarray | None
    activation: int
    cell_clip: np.float32
    proj_clip: np.float32
    lanes: np.ndarray  # (4, batch, n_cell) bool: logistic_lanes


def logistic_lanes(cifg: bool, batch: int, n_cell: int, time_major: bool) -> np.ndarray:
    """Where Eigen's logistic takes its single-value path for each gate's elements:
    EvalHybrid keeps the gates in one scratch buffer, [input,] cell, forget, output
    gate, each n_batch * n_cell floats, and activates a gate over the whole batch
    (time-major) or one batch row at a time (batch-major, n_cell floats from row
    b * n_cell)."""
    slots = (None, 1, 0, 2) if cifg else (0, 2, 1, 3)  # gate -> slot in the buffer
    lanes = np.zeros((4, batch, n_cell), bool)
    for g, slot in enumerate(slots):
        if slot is None:
            continue
        start = slot * batch * n_cell
        if time_major:
            lanes[g] = eigen_math.scalar_lanes(start, batch * n_cell).reshape(batch, n_cell)
        else:
            for b in range(batch):
                lanes[g, b] = eigen_math.scalar_lanes(start + b * n_cell, n_cell)
    return lanes


def is_hybrid(x: TensorInfo, cell: CellOperands) -> bool:
    """Float input with 8-bit input_to_output weights (IsHybridOp)."""
    w = cell.input_weights[3]
    return x.dtype == np.float32 and w is not None and w.dtype in (np.int8, np.uint8)


def _int8(ctx: OpContext, t: TensorInfo | None, role: str):
    """(int8 values, float32 scale) of a constant per-tensor int8 weight operand."""
    if t is None:
        return None
    if t.dtype != np.int8:
        raise ctx.unsupported(
            f"{role} {quoted(t.name)} is {t.dtype.name}; a hybrid LSTM's weights must all "
            "be int8 (LiteRT's kernel reads them as int8)")
    if t.data is None:
        raise ctx.unsupported(f"the LSTM's {role} must be constant tensors")
    scale = per_tensor_scale(ctx, t, role, "LiteRT's hybrid LSTM takes one scale per tensor")
    return np.asarray(t.data, np.int8), _F32(scale)


def _float(ctx: OpContext, t: TensorInfo | None, role: str):
    if t is not None and t.dtype != np.float32:
        raise ctx.unsupported(f"{role} {quoted(t.name)} is {t.dtype.name}; a hybrid LSTM "
                              "keeps it float32")
    return constant_float(ctx, t, role)


def _gate_weights(ctx: OpContext, tensors, role: str, n_cell: int, cols: int):
    """The four gates' int8 matrices side by side (zeros for a CIFG input gate)."""
    parts = [_int8(ctx, t, role) for t in tensors]
    return HybridWeights.of(
        [np.zeros((n_cell, cols), np.int8) if p is None else p[0] for p in parts],
        [_F32(1) if p is None else p[1] for p in parts])


def prepare_hybrid_cell(ctx: OpContext, cell: CellOperands, n_cell: int, n_output: int,
                        clips: tuple[float, float], states, batch: int,
                        time_major: bool) -> HybridCell:
    """The cell's constants; ``states`` are the (float32) state tensors, checked here."""
    for t in states:
        if t.dtype != np.float32:
            raise ctx.unsupported(f"state {quoted(t.name)} is {t.dtype.name}; a hybrid LSTM's "
                                  "states are float32")
    if cell.recurrent_weights[3].rank == 1:
        raise ctx.unsupported("diagonal recurrent weights are not supported in a hybrid LSTM")
    n_input = int(cell.input_weights[3].shape[1])
    w_aux = None
    if cell.has_aux:
        w_aux = _gate_weights(ctx, cell.aux_weights, "auxiliary input weights", n_cell,
                              int(cell.aux_weights[1].shape[1]))
    peephole = (None,) * 4
    if cell.uses_peephole:
        peephole = tuple(None if (p is None or (g == 0 and cell.cifg)) else
                         (lambda v: (v[0].astype(_F32) * v[1]).astype(_F32))(
                             _int8(ctx, p, "peephole weights"))
                         for g, p in enumerate(cell.peephole))
    layer_norm = None
    if cell.uses_layer_norm:
        layer_norm = np.stack([np.zeros(n_cell, _F32) if v is None
                               else _float(ctx, v, "layer norm coefficients")
                               for v in cell.layer_norm])
    projection = None
    if cell.projection_weights is not None:
        p, s = _int8(ctx, cell.projection_weights, "projection weights")
        projection = HybridWeights.of([p], [s])
    bias = np.concatenate([np.zeros(n_cell, _F32) if b is None
                           else _float(ctx, b, "gate biases") for b in cell.bias])
    return HybridCell(
        n_cell=n_cell, n_output=n_output, cifg=cell.cifg,
        asymmetric=bool(ctx.option("asymmetric_quantize_inputs", False)),
        w_x=_gate_weights(ctx, cell.input_weights, "input weights", n_cell, n_input),
        w_aux=w_aux,
        w_h=_gate_weights(ctx, cell.recurrent_weights, "recurrent weights", n_cell, n_output),
        bias=bias, peephole=peephole, layer_norm=layer_norm, projection=projection,
        projection_bias=_float(ctx, cell.projection_bias, "projection bias"),
        activation=eigen_math.activation_code(ctx), cell_clip=_F32(clips[0]),
        proj_clip=_F32(clips[1]),
        lanes=logistic_lanes(cell.cifg, batch, n_cell, time_major))


def hybrid_input_contributions(cell: HybridCell, x2d: np.ndarray, aux2d: np.ndarray | None,
                               out: np.ndarray) -> None:
    """out[rows, 4 n_cell] = b (0 with layer norm) + the input (and auxiliary) products
    of every row of the sequence."""
    out[...] = 0 if cell.layer_norm is not None else cell.bias
    accumulate_products(out, quantize_rows(x2d, cell.asymmetric), cell.w_x)
    if aux2d is not None and cell.w_aux is not None:
        accumulate_products(out, quantize_rows(aux2d, cell.asymmetric), cell.w_aux)


def _normalize(cell: HybridCell, g: int, z: np.ndarray) -> None:
    """PortableMeanStddevNormalization (sums left to right in float32), then the
    coefficients, then the bias."""
    n = np.float32(cell.n_cell)
    mean = (np.cumsum(z, axis=1, dtype=_F32)[:, -1:] / n).astype(_F32)
    z -= mean
    variance = (np.cumsum(z * z, axis=1, dtype=_F32)[:, -1:] / n).astype(_F32)
    z *= (_F32(1) / np.sqrt(variance + _F32(1e-8))).astype(_F32)
    z *= cell.layer_norm[g]
    z += cell.bias[g * cell.n_cell:(g + 1) * cell.n_cell]


def _finish_gate(cell: HybridCell, g: int, z: np.ndarray, c: np.ndarray) -> None:
    if cell.peephole[g] is not None:
        z += cell.peephole[g] * c
    if cell.layer_norm is not None:
        _normalize(cell, g, z)
    if g == 2:
        eigen_math.activate(cell.activation, z)
    else:
        eigen_math.logistic(z, cell.lanes[g])


def run_hybrid(cell: HybridCell, pre: np.ndarray, h: np.ndarray, c: np.ndarray,
               out: np.ndarray, reverse: bool, z: np.ndarray) -> None:
    """Step through ``pre`` [time, batch, 4 n_cell] (hybrid_input_contributions),
    updating ``h`` [batch, n_output] and ``c`` [batch, n_cell] in place and writing h
    into ``out`` [time, batch, n_output]; ``z`` is [batch, 4 n_cell] scratch."""
    n = cell.n_cell
    linear = cell.activation == ACTIVATION["NONE"]
    gates = [z[:, g * n:(g + 1) * n] for g in range(4)]
    i, f, g_, o = gates
    steps = range(pre.shape[0] - 1, -1, -1) if reverse else range(pre.shape[0])
    for t in steps:
        z[...] = pre[t]
        accumulate_products(z, quantize_rows(h, cell.asymmetric), cell.w_h)
        for g in (1, 2) if cell.cifg else (0, 1, 2):
            _finish_gate(cell, g, gates[g], c)
        update_cell(c, i, f, g_, cell.cifg, cell.cell_clip)
        _finish_gate(cell, 3, o, c)
        hidden = g_.copy() if linear else c.copy()
        eigen_math.activate(cell.activation, hidden)
        hidden *= o
        if cell.projection is not None:
            h[...] = 0 if cell.projection_bias is None else cell.projection_bias
            accumulate_products(h, quantize_rows(hidden, cell.asymmetric), cell.projection)
            if cell.proj_clip > 0:
                np.clip(h, -cell.proj_clip, cell.proj_clip, out=h)
        else:
            h[...] = hidden
        out[t] = h
