"""Which ops run in integer arithmetic, and the TFLite rules their parameters must follow.

From TFLite's quantization spec (tensorflow/lite/g3doc "8-bit quantization specification"):
fixed output parameters for SOFTMAX / LOGISTIC / TANH / LOG_SOFTMAX, equal input and output
parameters for ops that only move values around, and per-channel weights for the affine ops.
"""

from __future__ import annotations

from .params import QType

# Ops with int8 and uint8 kernels in edgelite's interpreter (and LiteRT). Any other op is
# kept in float with DEQUANTIZE / QUANTIZE around it.
INTEGER_OPS = frozenset({
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "SUB", "MUL",
    "AVERAGE_POOL_2D", "MAX_POOL_2D", "MEAN", "SOFTMAX", "LOGISTIC", "TANH", "RESHAPE",
    "SQUEEZE", "CONCATENATION", "PAD", "HARD_SWISH", "LEAKY_RELU", "RESIZE_BILINEAR",
    "RESIZE_NEAREST_NEIGHBOR", "RELU", "RELU6",
})

# Output parameters that the kernels assume, by output type: (scale, zero_point).
FIXED_OUTPUT = {
    "SOFTMAX": {QType.INT8: (1 / 256, -128), QType.UINT8: (1 / 256, 0)},
    "LOGISTIC": {QType.INT8: (1 / 256, -128), QType.UINT8: (1 / 256, 0)},
    "TANH": {QType.INT8: (1 / 128, 0), QType.UINT8: (1 / 128, 128)},
}

# Ops whose output must reuse input 0's parameters (they copy or select values).
SAME_AS_INPUT = frozenset({
    "MAX_POOL_2D", "AVERAGE_POOL_2D", "RESHAPE", "SQUEEZE", "PAD", "RESIZE_BILINEAR",
    "RESIZE_NEAREST_NEIGHBOR",
})

# Ops whose inputs must all share the output's parameters.
SHARED_INPUTS = frozenset({"CONCATENATION"})

# Constant input index -> weight quantization axis (per channel), for the affine ops.
WEIGHT_AXIS = {"CONV_2D": 0, "FULLY_CONNECTED": 0, "DEPTHWISE_CONV_2D": 3}
