"""The prepare() half of TFLite's integer LSTM: PopulateQuantizedLstmParams8x8_16 and
PopulatePrecomputedZPTimesWeightsWithBias (unidirectional_sequence_lstm.cc; lstm.cc has
the same code, plus a check that the cell state's scale is at most 2^-9).

Operand types (what TensorFlow's quantizer writes, operator_property.cc): int8 input,
output and output state; int8 weights (symmetric, one scale per tensor); int16 peephole
weights and layer-norm coefficients; int32 biases; an int16 cell state whose scale is a
power of two, 2^cell_scale. The op's five ``intermediates`` carry scales the kernel
needs: 0-3 the four gates' pre-activation scales (only with layer norm; Q3.12, 2^-12,
otherwise) and 4 the hidden value o . tanh(c) (scale and zero point).

Every effective scale is computed in float32 as LiteRT does (``a * b / c`` on floats;
the peephole and hidden ones in double, stored to float) and split by QuantizeMultiplier:

    input -> gate g:      s_W_g * s_in / s_gate_g
    recurrent -> gate g:  s_R_g * s_out_state / s_gate_g
    peephole -> gate g:   2^cell_scale * s_P_g / s_gate_g
    hidden:               2^-15 / s_hidden * 2^-15
    projection:           s_proj * s_hidden / s_out_state
    layer norm g:         s_LN_g (and variance guard max(1, int(10000 * s_LN_g)))

The zero points fold into per-row biases: input rows get bias_g - zp_in * sum(W_g row)
(the gate bias only without layer norm -- with it the bias is added after
normalizing), recurrent rows -zp_out_state * sum(R_g row), projection rows
bias_P + zp_hidden * sum(P row) (sic: LiteRT adds the hidden zero point here and
subtracts it when quantizing the hidden value, b/246629213).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ... import quant_math as qm
from edgelite.names import quoted
from ..base import OpContext, TensorInfo
from .micro import MicroCellParams, micro_cell_clip, micro_cell_params
from .operands import GATES, CellOperands
from ..common.requantize import micro_fc_reals, per_tensor_scale

_F32 = np.float32


@dataclass(frozen=True)
class Requant:
    """A MultiplyByQuantizedMultiplier (mantissa, shift), per row or scalar."""

    multiplier: np.ndarray | int
    shift: np.ndarray | int


@dataclass(frozen=True)
class LayerNormParams:
    coefficients: np.ndarray  # int64 [n_cell]
    bias: np.ndarray  # int64 [n_cell]: the gate bias, added after normalizing
    requant: Requant  # the coefficient scale, its shift + 12 (ApplyLayerNorm)
    variance_guard: int


@dataclass(frozen=True, kw_only=True)
class IntegerCellParams:
    n_cell: int
    n_output: int
    cifg: bool
    w_x: np.ndarray  # float64 [n_input, 4 n_cell]: int8 input weights, transposed
    bias_x: np.ndarray  # int64 [4 n_cell]
    requant_x: Requant  # per column
    w_h: np.ndarray  # float64 [n_output, 4 n_cell]
    bias_h: np.ndarray
    requant_h: Requant
    peephole: tuple  # (int64 weights [n_cell], Requant) or None, per gate
    layer_norm: tuple  # LayerNormParams or None, per gate
    cell_scale: int  # log2 of the cell state's scale
    cell_clip: int  # 0: none
    hidden: Requant
    hidden_zp: int
    projection: np.ndarray | None  # float64 [n_cell, n_output]
    projection_bias: np.ndarray | None  # int64 [n_output]
    projection_requant: Requant | None
    output_state_zp: int
    proj_clip: int
    rounding: qm.Rounding
    micro: MicroCellParams | None = None  # kernels="micro": TFLM's cell (micro.py)


def _scale(ctx: OpContext, t: TensorInfo, role: str) -> float:
    """The float32 per-tensor scale LiteRT reads (TfLiteTensor::params.scale)."""
    return per_tensor_scale(ctx, t, role, "TFLite's integer LSTM takes one scale per tensor")


def _zero_point(t: TensorInfo) -> int:
    zp = t.quantization.zero_point
    return int(zp[0]) if len(zp) else 0


def _typed(ctx: OpContext, t: TensorInfo, dtype, role: str, symmetric: bool = False):
    if t.dtype != dtype:
        raise ctx.unsupported(
            f"{role} {quoted(t.name)} is {t.dtype.name}; TFLite's integer LSTM expects "
            f"{np.dtype(dtype).name}"
        )
    if symmetric and t.quantization is not None and _zero_point(t) != 0:
        raise ctx.unsupported(
            f"{role} {quoted(t.name)} has zero point {_zero_point(t)}; TFLite's integer "
            "LSTM assumes symmetric weights (zero point 0)"
        )
    if t.data is None:
        raise ctx.unsupported(
            f"{role} {quoted(t.name)} must be a constant tensor (computed weights are not "
            "supported)"
        )
    return np.asarray(t.data).astype(np.int64)


def _requant(values, rounding: qm.Rounding) -> Requant:
    m, s = qm.quantize_multipliers(np.asarray(values, np.float64), rounding)
    return Requant(m, s)


def _intermediate_scales(ctx: OpContext, use_layer_norm: bool):
    """([4 gate scales], hidden scale, hidden zero point) from the op's intermediates."""
    inter = ctx.intermediates
    if len(inter) != 5:
        detail = " (the 12-intermediate 8x8_8 variant is not supported)" \
            if len(inter) == 12 else ""
        raise ctx.unsupported(
            f"an integer LSTM needs the 5 intermediate tensors TFLite's quantizer records "
            f"(gate and hidden scales); the file gives {len(inter)}{detail}"
        )
    # LiteRT reads the gate intermediates (0-3) only with layer norm; the hidden one (4)
    # always.
    for i, t in enumerate(inter):
        if i < 4 and not use_layer_norm:
            continue
        if t is None or t.quantization is None or len(t.quantization.scale) == 0:
            name = "omitted" if t is None else quoted(t.name)
            raise ctx.shape_error(
                f"intermediate {i} ({name}) of the integer LSTM has no quantization "
                "parameters (the gate / hidden scales TFLite's quantizer records)"
            )
    gates = [float(_F32(2.0**-12))] * 4
    if use_layer_norm:
        gates = [_scale(ctx, inter[g], f"intermediate {g}") for g in range(4)]
    hidden = inter[4]
    return gates, _scale(ctx, hidden, "intermediate 4 (hidden)"), _zero_point(hidden)


def _cell_scale(ctx: OpContext, t: TensorInfo, max_log2: int) -> int:
    """CheckedLog2 (quantization_util.cc): the scale must be a power of two."""
    scale = _scale(ctx, t, "cell state")
    log2 = float(_F32(math.log(scale)) * (_F32(1.0) / _F32(math.log(2.0))))
    rounded = float(qm.round_half_away(log2))
    # The cell update divides by 2^(30 + cell_scale) (gemmlowp allows shifts 0..31) and
    # the output tanh reads the state with 15 + cell_scale integer bits (ApplyTanh
    # supports 0..6): cell scales 2^-15 .. 2^-9 (LSTM's Prepare checks <= -9 itself).
    if abs(log2 - rounded) >= 1e-3 or not -15 <= rounded <= max_log2:
        raise ctx.unsupported(
            f"cell state {quoted(t.name)} has scale {scale}; TFLite's integer LSTM needs a "
            f"power of two between 2^-15 and 2^{max_log2}"
        )
    return int(rounded)


def _row_sums(w: np.ndarray) -> np.ndarray:
    return w.sum(axis=1)


def _stack_t(parts, rows: int, n_cell: int) -> np.ndarray:
    out = np.zeros((rows, 4 * n_cell), np.float64)
    for g, part in enumerate(parts):
        if part is not None:
            out[:, g * n_cell:(g + 1) * n_cell] = part.T
    return out


def prepare_integer_cell(ctx: OpContext, cell: CellOperands, n_cell: int, n_output: int,
                         x: TensorInfo, output_state: TensorInfo, cell_state: TensorInfo,
                         output: TensorInfo, clips: tuple[float, float],
                         max_cell_log2: int = -9) -> IntegerCellParams:
    if any(r is not None and r.rank != 2 for r in cell.recurrent_weights):
        raise ctx.unsupported("diagonal (rank-1) recurrent weights need a float LSTM")
    if cell.has_aux:
        raise ctx.unsupported("TFLite's integer LSTM has no auxiliary input")
    rounding = ctx.quant.rounding
    for t, dtype, role in ((output_state, np.int8, "output state"),
                           (cell_state, np.int16, "cell state"), (output, np.int8, "output")):
        if t.dtype != dtype:
            raise ctx.unsupported(f"{role} {quoted(t.name)} is {t.dtype.name}; TFLite's "
                                  f"integer LSTM expects {np.dtype(dtype).name}")
    s_in, zp_in = _scale(ctx, x, "input"), _zero_point(x)
    s_state, zp_state = _scale(ctx, output_state, "output state"), _zero_point(output_state)
    cell_scale = _cell_scale(ctx, cell_state, max_cell_log2)
    gate_scales, s_hidden, zp_hidden = _intermediate_scales(ctx, cell.uses_layer_norm)

    if ctx.quant.micro:
        _check_micro(ctx, cell)
    computed = [g for g in range(4) if g > 0 or not cell.cifg]
    w_in, w_rec, eff_x, eff_h, bias_x, bias_h = {}, {}, [1.0] * 4, [1.0] * 4, {}, {}
    for g in computed:
        name = GATES[g]
        w_in[g] = _typed(ctx, cell.input_weights[g], np.int8, f"input_to_{name}_weights", True)
        w_rec[g] = _typed(ctx, cell.recurrent_weights[g], np.int8,
                          f"recurrent_to_{name}_weights", True)
        s_w = _scale(ctx, cell.input_weights[g], f"input_to_{name}_weights")
        s_r = _scale(ctx, cell.recurrent_weights[g], f"recurrent_to_{name}_weights")
        eff_x[g] = float(_F32(s_w) * _F32(s_in) / _F32(gate_scales[g]))
        eff_h[g] = float(_F32(s_r) * _F32(s_state) / _F32(gate_scales[g]))
        if ctx.quant.micro:  # TFLM: FULLY_CONNECTED multipliers to 2^-12 (micro.py)
            eff_x[g] = micro_fc_reals(s_in, [s_w], 2.0**-12)[0]
            eff_h[g] = micro_fc_reals(s_state, [s_r], 2.0**-12)[0]
        bias = _typed(ctx, cell.bias[g], np.int32, f"{name}_gate_bias")
        base = np.zeros(n_cell, np.int64) if cell.uses_layer_norm else bias
        bias_x[g] = qm.wrap_int32(base - zp_in * _row_sums(w_in[g]))
        bias_h[g] = qm.wrap_int32(-zp_state * _row_sums(w_rec[g]))

    def per_column(values_by_gate, fill):
        return np.concatenate([np.full(n_cell, fill, np.int64) if g not in values_by_gate
                               else values_by_gate[g] for g in range(4)])

    def requant_columns(effective):
        m, s = qm.quantize_multipliers(effective, rounding)
        return Requant(np.repeat(m, n_cell), np.repeat(s, n_cell))

    peephole = [None] * 4
    if cell.uses_peephole:
        for g in (0, 1, 3):
            if g == 0 and cell.cifg:
                continue
            p = cell.peephole[g]
            w = _typed(ctx, p, np.int16, f"cell_to_{GATES[g]}_weights", True)
            effective = float(_F32(2.0**cell_scale * _scale(ctx, p, "peephole weights")
                                   / gate_scales[g]))
            peephole[g] = (w, _requant(effective, rounding))
    layer_norm = [None] * 4
    if cell.uses_layer_norm:
        for g in computed:
            coef = cell.layer_norm[g]
            name = f"{GATES[g]}_layer_norm_coefficients"
            s_ln = _scale(ctx, coef, name)
            m, s = qm.quantize_multiplier(s_ln, rounding)
            guard = max(1, int(_F32(10000) * _F32(s_ln)))
            layer_norm[g] = LayerNormParams(
                _typed(ctx, coef, np.int16, name, True),
                _typed(ctx, cell.bias[g], np.int32, f"{GATES[g]}_gate_bias"),
                Requant(m, s + 12), guard)

    projection = projection_bias = projection_requant = None
    if cell.projection_weights is not None:
        w_p = _typed(ctx, cell.projection_weights, np.int8, "projection_weights", True)
        s_p = _scale(ctx, cell.projection_weights, "projection_weights")
        base = np.zeros(n_output, np.int64)
        if cell.projection_bias is not None:
            base = _typed(ctx, cell.projection_bias, np.int32, "projection_bias")
        projection = np.ascontiguousarray(w_p.T.astype(np.float64))
        projection_bias = qm.wrap_int32(base + zp_hidden * _row_sums(w_p))
        projection_requant = _requant(float(_F32(s_p) * _F32(s_hidden) / _F32(s_state)),
                                      rounding)
    hidden_scale = float(_F32(2.0**-15 / s_hidden * 2.0**-15))

    cell_clip, proj_clip = (float(_F32(c)) for c in clips)
    quantized_cell_clip = 0
    if cell_clip > 0:
        quantized_cell_clip = int(np.clip(_F32(cell_clip) / _F32(2.0**cell_scale),
                                          -32768, 32767))
    quantized_proj_clip = 0
    if proj_clip > 0:
        quantized_proj_clip = int(np.clip(_F32(proj_clip) / _F32(_scale(ctx, output, "output")),
                                          -128, 127))
    micro = None
    if ctx.quant.micro:
        micro = micro_cell_params(cell_scale, s_state, zp_state, rounding)
        quantized_cell_clip = micro_cell_clip(cell_clip, cell_scale)
    return IntegerCellParams(
        n_cell=n_cell, n_output=n_output, cifg=cell.cifg,
        w_x=_stack_t([w_in.get(g) for g in range(4)], int(x.shape[-1]), n_cell),
        bias_x=per_column(bias_x, 0), requant_x=requant_columns(eff_x),
        w_h=_stack_t([w_rec.get(g) for g in range(4)], n_output, n_cell),
        bias_h=per_column(bias_h, 0), requant_h=requant_columns(eff_h),
        peephole=tuple(peephole), layer_norm=tuple(layer_norm), cell_scale=cell_scale,
        cell_clip=quantized_cell_clip, hidden=_requant(hidden_scale, rounding),
        hidden_zp=zp_hidden, projection=projection, projection_bias=projection_bias,
        projection_requant=projection_requant, output_state_zp=zp_state,
        proj_clip=quantized_proj_clip, rounding=rounding, micro=micro)


def _check_micro(ctx: OpContext, cell: CellOperands) -> None:
    """TFLM's LSTM takes Keras-style cells only (unidirectional_sequence_lstm.cc)."""
    lacks = [name for name, used in (("CIFG", cell.cifg), ("peephole", cell.uses_peephole),
                                     ("layer norm", cell.uses_layer_norm),
                                     ("projection", cell.projection_weights is not None))
             if used]
    if lacks:
        raise ctx.unsupported(f"TFLite Micro's integer LSTM has no {', '.join(lacks)}; "
                              "use kernels=\"reference\" for this file")
