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
from ...interpreter.kernels.opdef import Kernel, QuantRule
from .params import QType

# Ops with int8 and uint8 kernels in edgelite's interpreter (and LiteRT). Any other op is
# kept in float with DEQUANTIZE / QUANTIZE around it.
INTEGER_OPS = frozenset(n for n, op in OPS.items() if op.quant is not QuantRule.FLOAT_ONLY)

# Ops with 16x8 kernels (int16 activations) in edgelite and LiteRT: an integer kernel
# that takes int16 (requantize.with_int16), or one of the value-moving ops whose
# type-generic kernels move int16 as LiteRT does (tests/interpreter/kernels/
# test_int16_ops.py). Any other op stays float in a 16x8 model.
INT16_MOVERS = frozenset({"CONCATENATION", "RESHAPE", "SQUEEZE", "EXPAND_DIMS", "PAD",
                          "TRANSPOSE", "RESIZE_NEAREST_NEIGHBOR"})
INT16_OPS = frozenset(
    n for n, op in OPS.items() if n in INTEGER_OPS and (
        n in INT16_MOVERS or (isinstance(op.integer, Kernel)
                              and getattr(op.integer.prepare, "takes_int16", False))))

# Output parameters that the kernels assume, by output type: (scale, zero_point). The 16x8
# LOGISTIC / TANH / SOFTMAX kernels all produce Q0.15 (activations.cc, softmax).
FIXED_OUTPUT = {n: {QType.INT8: op.fixed_output[np.int8], QType.UINT8: op.fixed_output[np.uint8],
                    QType.INT16: (2.0**-15, 0)}
                for n, op in OPS.items() if op.quant is QuantRule.FIXED_OUTPUT}

# Ops whose output must reuse input 0's parameters (they copy or select values).
SAME_AS_INPUT = frozenset(n for n, op in OPS.items() if op.quant is QuantRule.SAME_AS_INPUT)

# Ops whose inputs must all share the output's parameters.
SHARED_INPUTS = frozenset(n for n, op in OPS.items() if op.quant is QuantRule.SHARED)

# Integer affine ops: their constant weights (input 1) are quantized per channel along this
# axis, their bias (input 2) as int32.
WEIGHT_AXIS = {n: op.affine.out_axis for n, op in OPS.items()
               if op.affine is not None and n in INTEGER_OPS}
