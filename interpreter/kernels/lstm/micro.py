"""Where TensorFlow Lite Micro's int8 LSTM differs from LiteRT's (kernels="micro").

TFLM has its own UNIDIRECTIONAL_SEQUENCE_LSTM (micro/kernels/unidirectional_sequence_lstm.cc,
lstm_eval.h / lstm_eval.cc, lstm_eval_common.cc), built from single-op reference steps
instead of LiteRT's fused lstm_eval.cc. The data flow is the same as integer_cell.py's
(no peephole, layer norm, projection or CIFG: TFLM takes Keras-style LSTMs only); these
are the differences, each one function or record used when ``ctx.quant.micro``:

* Gate matmuls (CalculateLstmGate): a FULLY_CONNECTED int8 -> int16 each for the input
  and the recurrent term, output scale 2^-12, their multipliers from
  CalculateOpDataFullyConnected (requantize.micro_fc_reals: the float32 product of the
  scales divided in double), never the gate intermediates' scales. Each FC saturates
  its own int16 output before AddElementWise adds the two (saturating again); LiteRT's
  MatrixBatchVectorMultiplyAccumulate adds the rescaled recurrent sum to the input term
  in int32 and saturates once (micro_gate_sum: they differ when the recurrent term alone
  leaves int16, as in trained LSTMs whose gates are driven hard).
* Activations: reference_integer_ops::Logistic / Tanh (the interpolated
  sigmoid_table_uint16, int16/unary.py) where LiteRT uses gemmlowp's fixed-point sigmoid /
  tanh. The cell tanh reads the state with left shift 15 + cell_scale - 3 (input
  multiplier 3 and the negated shift when that is negative).
* Cell update (UpdateLstmCell): two int16 MulElementwise with MultiplyByQuantizedMultiplier,
  f * c by 2^-15 (== 2^-15 * s_c / s_c) and i * g by 2^-30 / s_c, each saturated to int16,
  then a saturating add; LiteRT shifts both products right (RoundingDivideByPOT).
* Hidden state (UpdateLstmHidden): MulElementwise tanh(c) * o by 2^-30 / s_h plus the zero
  point of the output state tensor h itself (intermediate 4 is not read).
* Cell clip: clip / s_c in double (LiteRT: float32).

All multipliers of the element-wise products are computed in double
(CreateInterGateMulParams) and split by QuantizeMultiplier.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import quant_math as qm
from ..int16.unary import reference_logistic, reference_tanh

_Q15 = 2.0**-15  # the gates' Q0.15 output scale


@dataclass(frozen=True)
class MicroCellParams:
    forget_mul: tuple[int, int]  # (multiplier, shift) of f * c -> c
    input_mul: tuple[int, int]  # i * g -> c
    hidden_mul: tuple[int, int]  # tanh(c) * o -> h
    hidden_zp: int  # the output state's zero point


def micro_cell_params(cell_scale: int, s_state: float, zp_state: int,
                      rounding: qm.Rounding) -> MicroCellParams:
    """CreateInterGateMulParams for the three products (double arithmetic)."""
    s_c = float(np.float32(2.0**cell_scale))
    s_h = float(np.float32(s_state))
    return MicroCellParams(
        qm.quantize_multiplier(_Q15 * s_c / s_c, rounding),
        qm.quantize_multiplier(_Q15 * _Q15 / s_c, rounding),
        qm.quantize_multiplier(_Q15 * _Q15 / s_h, rounding), zp_state)


def micro_cell_clip(clip: float, cell_scale: int) -> int:
    """CreateLstmCellStateInfo: int16(min(max(clip / s_c, -32768), 32767)) in double."""
    if clip <= 0:
        return 0
    return int(min(max(float(np.float32(clip)) / 2.0**cell_scale, -32768.0), 32767.0))


def micro_tables(cell_scale: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sigmoid, gate tanh, cell tanh) int16 tables indexed by q + 32768 (lstm_eval.cc
    Sigmoid / Tanh: reference_integer_ops with the multiplier 0 for power-of-two
    inputs, i.e. x * 3 << shift)."""
    q = np.arange(-32768, 32768, dtype=np.int64)
    shift = 15 + cell_scale - 3
    cell = reference_tanh(q, 0, shift) if shift >= 0 else reference_tanh(q, 3, -shift)
    return (reference_logistic(q, 0, 0), reference_tanh(q, 0, 0), cell)


def _mul16(a: np.ndarray, b: np.ndarray, mul: tuple[int, int], rounding: qm.Rounding,
           offset: int, lo: int, hi: int) -> np.ndarray:
    """reference_integer_ops::MulElementwise on symmetric int16 inputs."""
    return np.clip(qm.multiply_by_quantized_multiplier(a * b, *mul, rounding) + offset, lo, hi)


def micro_gate_sum(recurrent: np.ndarray, pre: np.ndarray) -> np.ndarray:
    """CalculateLstmGate: AddElementWise(input FC, recurrent FC), each FC output already
    saturated to int16 (``pre`` is, the rescaled ``recurrent`` sum not yet)."""
    return np.clip(np.clip(recurrent, -32768, 32767) + pre, -32768, 32767)


def micro_cell_update(m: MicroCellParams, f, i, g, state, clip: int,
                      rounding: qm.Rounding) -> np.ndarray:
    """UpdateLstmCell: sat16(sat16(f * c) + sat16(i * g)), then the clip."""
    kept = _mul16(f, state, m.forget_mul, rounding, 0, -32768, 32767)
    added = _mul16(i, g, m.input_mul, rounding, 0, -32768, 32767)
    new = np.clip(kept + added, -32768, 32767)
    return np.clip(new, -clip, clip) if clip > 0 else new


def micro_hidden(m: MicroCellParams, o, tanh_c, rounding: qm.Rounding) -> np.ndarray:
    """UpdateLstmHidden: h = sat8(MBQM(tanh(c) * o) + zp_h)."""
    return _mul16(tanh_c, o, m.hidden_mul, rounding, m.hidden_zp, -128, 127)
