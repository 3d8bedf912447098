"""The invoke() half of TFLite's integer LSTM: lstm_eval.cc EvalInteger8x8_16 /
LstmStepInteger8x8_16 with the portable tensor_utils it calls
(tensorflow/lite/kernels/internal/reference/portable_tensor_utils.cc), over a sequence.

Per time step (int8 input x and output state h, int16 cell state c, Q3.12 gates):

    gate_g = sat16(sat16(MBQM(bias_x_g + W_g . x, M_x_g)) + MBQM(bias_h_g + R_g . h, M_h_g))
               (MatrixBatchVectorMultiplyAccumulate twice, into a zeroed int16 gate)
    peephole:   gate_g = sat16(gate_g + MBQM(p_g * c, M_p_g))
    layer norm: ApplyLayerNorm (integer mean / variance, 1/sqrt in fixed point)
    i, f, o = sigmoid(gate) and g = tanh(gate): gemmlowp int16 fixed point, 3 integer
               bits in, Q0.15 out (fixed_point16.py tables)
    c = sat16(RDBPOT(f * c, 15) + RDBPOT(i * g, 30 + cell_scale))   (CIFG: i = 32767 - f)
    c = clip(c, cell_clip)
    o is computed after c (its peephole reads the new c)
    hidden = o * tanh(c) with 15 + cell_scale integer bits
    no projection:   h = sat8(MBQM(hidden, M_hidden) + zp_hidden)
    projection:      s = sat8(MBQM(hidden, M_hidden) - zp_hidden)
                     h = clip(sat8(MBQM(bias_P + P . s, M_P) + zp_out_state), proj_clip)

MBQM is MultiplyByQuantizedMultiplier (the interpreter's rounding option; LiteRT's
build rounds twice). The int8 dot products are exact in float64 BLAS. The input terms
of every time step are computed in one product before the time loop (they do not depend
on the state), as are their MBQMs and saturations -- the same values LiteRT computes
one step at a time.

Two LiteRT quirks are reproduced: the peephole product runs over ``n_output``
elements, not ``n_cell`` (CalculateLstmGateInteger8x8_16 passes n_output as the vector
size; they differ only with a projection), across the flattened [batch, n_cell] arrays
in time-major order and per batch row otherwise; and its int32 -> int16 rescaling
rounds like TFLite's NEON MultiplyByQuantizedMultiplier4Rows (half up) for each full
block of 16 elements and like the scalar MBQM (half away from zero) for the rest --
LiteRT's x86 build maps NeonVectorBatchVectorCwiseProductAccumulate onto SSE
(NEON_2_SSE) and that is the one tensor_utils function of the integer LSTM it does not
take from the portable code.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ... import quant_math as qm
from ..common import fixed_point16 as fp
from .integer_params import IntegerCellParams, LayerNormParams, Requant
from .micro import micro_cell_update, micro_gate_sum, micro_hidden, micro_tables

NEON_BLOCK = 16  # NeonVectorBatchVectorCwiseProductAccumulate's unrolled block


def _sat(x, lo: int, hi: int):
    return np.clip(x, lo, hi)


def _mbqm(x, r: Requant, rounding: qm.Rounding):
    return qm.multiply_by_quantized_multiplier(x, r.multiplier, r.shift, rounding)


def _trunc_div(a, b: int):
    """C integer division (towards zero) of int64 values by a positive int."""
    q = np.abs(a) // b
    return np.where(a < 0, -q, q)


@functools.lru_cache(maxsize=4096)
def _inv_sqrt(variance: int) -> tuple[int, int]:
    multiplier, shift = fp.inv_sqrt_multiplier(variance)
    return int(qm.wrap_int32(multiplier)), shift


def layer_norm(z: np.ndarray, p: LayerNormParams, rounding: qm.Rounding) -> np.ndarray:
    """PortableApplyLayerNorm on the rows of ``z`` (int64 [rows, n])."""
    n = z.shape[1]
    mean = _trunc_div(z.sum(axis=1) * 1024, n)
    variance = (z * z).sum(axis=1) * ((1 << 20) // n) - mean * mean
    variance = _trunc_div(variance, 1 << 20)
    variance = np.where(variance < 1, p.variance_guard, variance)
    pairs = [_inv_sqrt(int(v)) for v in variance]
    inv_m = np.array([m for m, _ in pairs], np.int64)[:, None]
    inv_s = np.array([s for _, s in pairs], np.int64)[:, None]
    rescaled = qm.multiply_by_quantized_multiplier(1024 * z - mean[:, None], inv_m, inv_s,
                                                   rounding)
    # int32 products as in C++ (the "TODO: saturate" of portable_tensor_utils.cc)
    val3 = qm.wrap_int32(qm.wrap_int32(rescaled * p.coefficients) + p.bias)
    val4 = _trunc_div(np.where(val3 > 0, val3 + 512, val3 - 512), 1024)
    return _sat(_mbqm(val4, p.requant, rounding), -32768, 32767)


def _peephole_add(gate: np.ndarray, w: np.ndarray, r: Requant, c: np.ndarray,
                  n_output: int, flat: bool, rounding: qm.Rounding) -> None:
    """VectorBatchVectorCwiseProductAccumulate(w, n_output, c, n_batch, ...) into the
    int16 ``gate`` (int64 [batch, n_cell]); see the module docstring."""
    if flat:  # one call over n_batch vectors of n_output in the flattened arrays
        rows = gate.shape[0]
        g_view = gate.reshape(-1)[:rows * n_output].reshape(rows, n_output)
        c_view = c.reshape(-1)[:rows * n_output].reshape(rows, n_output)
    else:  # one call per batch row
        g_view, c_view = gate[:, :n_output], c[:, :n_output]
    prod = w[:n_output] * c_view.astype(np.int64)
    block = (n_output // NEON_BLOCK) * NEON_BLOCK
    scaled = np.empty_like(prod)
    scaled[:, :block] = qm.multiply_by_quantized_multiplier_neon(prod[:, :block],
                                                                r.multiplier, r.shift)
    scaled[:, block:] = _mbqm(prod[:, block:], r, rounding)
    g_view[...] = _sat(scaled + g_view, -32768, 32767)


@dataclass(frozen=True)
class IntegerCell:
    params: IntegerCellParams
    sigmoid: np.ndarray  # int16 tables (fixed_point16)
    tanh_gate: np.ndarray
    tanh_cell: np.ndarray
    flat_peephole: bool  # time-major: the peephole runs over the flattened batch


def make_integer_cell(params: IntegerCellParams, time_major: bool) -> IntegerCell:
    if params.micro is not None:  # TFLM's reference LUT activations (micro.py)
        return IntegerCell(params, *micro_tables(params.cell_scale), time_major)
    return IntegerCell(params, fp.logistic_table(3), fp.tanh_table(3),
                       fp.tanh_table(15 + params.cell_scale), time_major)


def input_contributions(cell: IntegerCell, x2d: np.ndarray, out: np.ndarray) -> None:
    """out[rows, 4 n_cell] (int64) = sat16(MBQM(bias_x + W . x)) for every row."""
    p = cell.params
    acc = qm.wrap_int32(np.rint(x2d.astype(np.float64) @ p.w_x).astype(np.int64)
                        + p.bias_x)
    out[...] = _sat(_mbqm(acc, p.requant_x, p.rounding), -32768, 32767)


def _finish_gate(cell: IntegerCell, g: int, z: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Peephole, layer norm and activation of gate g (int64 [batch, n_cell]) -> Q0.15."""
    p = cell.params
    z = np.ascontiguousarray(z)  # a copy: the peephole writes through reshaped views
    if p.peephole[g] is not None:
        w, r = p.peephole[g]
        _peephole_add(z, w, r, c, p.n_output, cell.flat_peephole, p.rounding)
    if p.layer_norm[g] is not None:
        z = layer_norm(z, p.layer_norm[g], p.rounding)
    table = cell.tanh_gate if g == 2 else cell.sigmoid
    return table[z + 32768].astype(np.int64)


def run_integer(cell: IntegerCell, pre: np.ndarray, h: np.ndarray, c: np.ndarray,
                out: np.ndarray) -> None:
    """Step through ``pre`` [time, batch, 4 n_cell] (input_contributions), updating the
    int8 ``h`` [batch, n_output] and int16 ``c`` [batch, n_cell] in place and writing h
    into ``out`` [time, batch, n_output]."""
    p = cell.params
    n = p.n_cell
    rounding = p.rounding
    for t in range(pre.shape[0]):
        acc = qm.wrap_int32(np.rint(h.astype(np.float64) @ p.w_h).astype(np.int64)
                            + p.bias_h)
        recurrent = _mbqm(acc, p.requant_h, rounding)
        if p.micro is not None:
            z = micro_gate_sum(recurrent, pre[t])
        else:  # MatrixBatchVectorMultiplyAccumulate: one saturation of the sum
            z = _sat(recurrent + pre[t], -32768, 32767)
        state = c.astype(np.int64)
        f = _finish_gate(cell, 1, z[:, n:2 * n], state)
        g = _finish_gate(cell, 2, z[:, 2 * n:3 * n], state)
        if p.cifg:
            i = 32767 - f  # Sub1Vector
        else:
            i = _finish_gate(cell, 0, z[:, :n], state)
        if p.micro is not None:
            state = micro_cell_update(p.micro, f, i, g, state, p.cell_clip, rounding)
        else:
            kept = qm.rounding_divide_by_pot(f * state, 15)
            added = fp._wrap(qm.rounding_divide_by_pot(i * g, 30 + p.cell_scale))
            state = _sat(kept + added, -32768, 32767)
            if p.cell_clip > 0:
                state = _sat(state, -p.cell_clip, p.cell_clip)
        c[...] = state
        o = _finish_gate(cell, 3, z[:, 3 * n:], state)
        if p.micro is not None:
            h[...] = micro_hidden(p.micro, o, cell.tanh_cell[state + 32768], rounding)
            out[t] = h
            continue
        hidden = o * cell.tanh_cell[state + 32768]
        scaled = _mbqm(hidden, p.hidden, rounding)
        if p.projection is None:
            h[...] = _sat(scaled + p.hidden_zp, -128, 127)
        else:
            s = _sat(scaled - p.hidden_zp, -128, 127).astype(np.float64)
            acc = qm.wrap_int32(np.rint(s @ p.projection).astype(np.int64)
                                + p.projection_bias)
            new_h = _sat(_mbqm(acc, p.projection_requant, rounding) + p.output_state_zp,
                         -128, 127)
            if p.proj_clip > 0:
                new_h = _sat(new_h, -p.proj_clip, p.proj_clip)
            h[...] = new_h
        out[t] = h
