"""TFLite's integer LSTM ("8x8_16"): how the int8 mode quantizes UNIDIRECTIONAL_SEQUENCE_LSTM.

The operands, as TensorFlow's quantizer writes them (tools/optimize/operator_property.cc,
the LSTM recipe without layer norm; compiler/mlir/lite/transforms/prepare_quantize_helper.h)
and LiteRT's unidirectional_sequence_lstm.cc / lstm_eval.cc EvalInteger8x8_16 and TFLite
Micro's unidirectional_sequence_lstm.cc read them:

    input x            int8, asymmetric, its own parameters
    weights 1-8        int8, symmetric per tensor: scale max|w| / 127, zero point 0
    gate biases 12-15  int32, scale s_x * s_W(input-to-gate), zero point 0
    output, h state 18 int8, one set of parameters (TF's restrict_scale of the output and
                       the output state: h is the output's last step)
    cell state 19      int16, zero point 0, scale 2^ceil(log2 max|c|) / 32768 over the
                       calibrated c of every step (PowerOfTwoBound), kept within
                       2^-15 .. 2^-9 (the kernels' shifts and tanh take no other)
    intermediates      0-3 the gates' pre-activation scales, read only with layer norm:
                       float32 [0] placeholders (the kernel uses Q3.12); 4 the hidden
                       o * tanh(c), int8 [0] with the output's parameters (without a
                       projection the kernel writes it into h as it is)

The cell state's range is not a tensor the float model holds at every step: calibration
replays the cell (lstm_replay.py) and records c over every step of every sample, as TF's
logging LSTM kernel does.

Only the form the converter fuses (fuse_lstm_loop.py) and LiteRT's integer kernel runs is
quantized: no peephole, projection, layer norm or CIFG, constant weights, the tanh cell
activation; any other sequence LSTM stays float with DEQUANTIZE / QUANTIZE around it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..ir import Activation, Graph, Op, QuantParams, Tensor
from .params import Affine, QType, quant_params, quantize, symmetric_weights
from .weights_only import dequantized

if TYPE_CHECKING:
    from .rewrite import _Rewriter

WEIGHTS = range(1, 9)           # input-to-gate 1-4, recurrent-to-gate 5-8
BIASES = range(12, 16)
ABSENT = (9, 10, 11, 16, 17, 20, 21, 22, 23)  # peephole, projection, layer norm
OUTPUT_STATE, CELL_STATE = 18, 19
INTERMEDIATES = ("input_to_input_intermediate", "input_to_forget_intermediate",
                 "input_to_cell_intermediate", "input_to_output_intermediate",
                 "effective_hidden_scale_intermediate")
# the cell state's scale, log2: the bounds LiteRT's and TFLM's integer kernels take
CELL_LOG2 = (-15, -9)


def fits(op: Op) -> bool:
    """Whether `op` is a sequence LSTM the integer kernel runs once quantized."""
    ins = list(op.inputs)
    if len(ins) not in (20, 24) or ins[0] is None or ins[0].dtype != np.float32:
        return False
    if any(ins[i] is not None for i in ABSENT if i < len(ins)):
        return False
    if any(ins[i] is None or not ins[i].is_const or ins[i].dtype != np.float32
           for i in (*WEIGHTS, *BIASES)):
        return False
    if any(ins[i] is None or not ins[i].is_variable or ins[i].dtype != np.float32
           for i in (OUTPUT_STATE, CELL_STATE)):
        return False
    o = op.options
    return (o.get("fused_activation_function") == Activation.TANH
            and not o.get("diagonal_recurrent_tensors", False)
            and all(ins[i].data.ndim == 2 for i in WEIGHTS))


def cell_state_params(rmin: float, rmax: float) -> Affine:
    """int16 symmetric, scale a power of two covering max(|rmin|, |rmax|) (TF's
    PowerOfTwoBound / 32768), clamped to the kernels' 2^-15 .. 2^-9."""
    top = max(abs(float(rmin)), abs(float(rmax)))
    log2 = int(np.ceil(np.log2(top))) - 15 if top > 0 else CELL_LOG2[0]
    log2 = min(max(log2, CELL_LOG2[0]), CELL_LOG2[1])
    return Affine(np.array([2.0 ** log2], np.float32), np.zeros(1, np.int64))


def quantize_lstm(rw: "_Rewriter", op: Op) -> None:
    """Rewrite one fitting UNIDIRECTIONAL_SEQUENCE_LSTM (fits) to TFLite's integer LSTM."""
    qt = rw.op_qt[id(op)]
    assert qt is QType.INT8, "the integer LSTM runs in int8 models only"
    rw.take_input(op, 0, None, qt)
    s_x = float(rw.act(op.inputs[0]).scale[0])
    out = op.outputs[0]
    p_out = rw.act(out)
    scales = {}
    for i in WEIGHTS:
        w = op.inputs[i].data
        p_w = symmetric_weights(w, None)
        scales[i] = np.float64(p_w.scale[0])
        rw.store_const(op, i, quantize(w, p_w, np.int8, -127, 127), p_w)
    top = np.iinfo(np.int32)
    for g, i in enumerate(BIASES):   # the input-to-gate product's scale
        s_b = Affine(np.array([s_x * scales[WEIGHTS[g]]]), np.zeros(1, np.int64))
        data = quantize(op.inputs[i].data, s_b, np.int32, int(top.min), int(top.max))
        rw.store_const(op, i, data, Affine(s_b.scale.astype(np.float32), s_b.zero_point))
    h, c = op.inputs[OUTPUT_STATE], op.inputs[CELL_STATE]
    _set(h, np.int8, quant_params(p_out))
    _set(c, np.int16, quant_params(cell_state_params(*rw.range_of(c))))
    _set(out, np.int8, quant_params(p_out))
    op.intermediates = [_intermediate(rw, op, k, p_out, quant_params) for k in range(5)]


def store_weights_int8(graph: Graph, op: Op) -> None:
    """A float sequence LSTM's eight weight matrices stored int8 behind DEQUANTIZE ops
    (weights-only, lstm_check.py): symmetric, one scale per matrix, the integers the integer
    LSTM would store; biases and states stay float32."""
    for i in WEIGHTS:
        w = op.inputs[i].data
        p = symmetric_weights(w, None)
        stored = dequantized(graph, op, i, quantize(w, p, np.int8, -127, 127))
        stored.quant = QuantParams(p.scale, p.zero_point)


def _set(t: Tensor, dtype, quant) -> None:
    t.dtype, t.quant = np.dtype(dtype), quant


def _intermediate(rw: "_Rewriter", op: Op, k: int, p_out: Affine, to_quant) -> Tensor:
    """Intermediate k: the gates' (0-3) unused without layer norm, float32 [0] as TF writes
    them; the hidden value's (4) with the output's parameters."""
    name = f"{op.name or op.outputs[0].name}/{INTERMEDIATES[k]}"
    if k < 4:
        return rw.g.tensor(name, np.float32, (0,))
    t = rw.g.tensor(name, np.int8, (0,))
    t.quant = to_quant(p_out)
    return t
