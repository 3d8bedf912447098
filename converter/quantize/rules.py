"""Which ops run in integer arithmetic, and the TFLite rules their parameters must follow.

Derived from the op records (interpreter/kernels/opdef.py: ``OpDef.quant``,
``fixed_output``, ``affine``), which follow TFLite's quantization spec
(tensorflow/lite/g3doc "8-bit quantization specification"): fixed output parameters for
SOFTMAX / LOGISTIC / TANH, equal input and output parameters for ops that only move values
around, per-channel weights for the affine ops. Nothing here is written by hand.
"""

from __future__ import annotations

import numpy as np

from ...interpreter.kernels import OPS
from ...interpreter.kernels.opdef import QuantRule
from .params import QType

# Ops with int8 and uint8 kernels in edgelite's interpreter (and LiteRT). Any other op is
# kept in float with DEQUANTIZE / QUANTIZE around it.
INTEGER_OPS = frozenset(n for n, op in OPS.items() if op.quant is not QuantRule.FLOAT_ONLY)

# The ops with uint8 kernels: the uint8 mode's integer ops.
UINT8_OPS = frozenset(n for n in INTEGER_OPS if OPS[n].uint8)

# The ops with 16x8 kernels (int16 activations, int8 weights): the int16x8 mode's integer ops.
INT16_OPS = frozenset(n for n in INTEGER_OPS if OPS[n].has_int16)

# Output parameters that the kernels assume, by output type: (scale, zero_point).
FIXED_OUTPUT = {n: {qt: op.fixed_output[qt.dtype.type] for qt in QType
                    if qt.dtype.type in op.fixed_output}
                for n, op in OPS.items() if op.quant is QuantRule.FIXED_OUTPUT}

# Ops whose output must reuse input 0's parameters (they copy or select values).
SAME_AS_INPUT = frozenset(n for n, op in OPS.items() if op.quant is QuantRule.SAME_AS_INPUT)

# Ops whose inputs must all share the output's parameters.
SHARED_INPUTS = frozenset(n for n, op in OPS.items() if op.quant is QuantRule.SHARED)

# Ops with a quantization scheme of their own (QuantRule.RECURRENT: TFLite's integer LSTM,
# quantize/lstm.py).
RECURRENT = frozenset(n for n, op in OPS.items() if op.quant is QuantRule.RECURRENT)

# Integer affine ops: where their data, constant weights and bias are (OpDef.affine).
AFFINE = {n: op.affine for n, op in OPS.items() if op.affine is not None and n in INTEGER_OPS}
# Their weights are quantized per channel along this axis, their bias as int32 (int64 in
# 16x8 models) with scale s_data * s_w.
WEIGHT_AXIS = {n: a.out_axis for n, a in AFFINE.items()}
