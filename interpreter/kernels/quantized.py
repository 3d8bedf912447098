"""The int8 / uint8 paths of the registry.

``INTEGER_KERNELS`` maps an op to its quantized kernel. ``with_integer_paths(KERNELS)``
returns the registry entries that replace the float ones: each dispatches on the dtype
of its first input in prepare() (requantize.by_input_dtype), so the float kernels stay
untouched; the invoke() list calls the chosen eval directly. Ops that exist only
for quantized tensors (QUANTIZE) are added as they are.
"""

from __future__ import annotations

from .base import Kernel
from .requantize import by_input_dtype
from . import (
    quantize,
    quantized_activations,
    quantized_arithmetic,
    quantized_concatenation,
    quantized_conv,
    quantized_fully_connected,
    quantized_pooling,
    quantized_resize,
    quantized_softmax,
)

INTEGER_KERNELS: dict[str, Kernel] = {
    "CONV_2D": quantized_conv.CONV_2D,
    "DEPTHWISE_CONV_2D": quantized_conv.DEPTHWISE_CONV_2D,
    "FULLY_CONNECTED": quantized_fully_connected.FULLY_CONNECTED,
    "ADD": quantized_arithmetic.ADD,
    "SUB": quantized_arithmetic.SUB,
    "MUL": quantized_arithmetic.MUL,
    "AVERAGE_POOL_2D": quantized_pooling.AVERAGE_POOL_2D,
    "MAX_POOL_2D": quantized_pooling.MAX_POOL_2D,
    "MEAN": quantized_pooling.MEAN,
    "RELU": quantized_activations.RELU,
    "RELU6": quantized_activations.RELU6,
    "RELU_N1_TO_1": quantized_activations.RELU_N1_TO_1,
    "RELU_0_TO_1": quantized_activations.RELU_0_TO_1,
    "LOGISTIC": quantized_activations.LOGISTIC,
    "TANH": quantized_activations.TANH,
    "HARD_SWISH": quantized_activations.HARD_SWISH,
    "LEAKY_RELU": quantized_activations.LEAKY_RELU,
    "SOFTMAX": quantized_softmax.SOFTMAX,
    "CONCATENATION": quantized_concatenation.CONCATENATION,
    "RESIZE_BILINEAR": quantized_resize.RESIZE_BILINEAR,
}

# Ops without a float kernel in the registry.
INTEGER_ONLY: dict[str, Kernel] = {
    "QUANTIZE": quantize.QUANTIZE,
}


def with_integer_paths(kernels: dict[str, Kernel]) -> dict[str, Kernel]:
    """Entries to merge into the registry (float kernel + integer path per op)."""
    merged = {name: by_input_dtype(kernels[name], kernel) if name in kernels else kernel
              for name, kernel in INTEGER_KERNELS.items()}
    merged.update({name: k for name, k in INTEGER_ONLY.items() if name not in kernels})
    return merged
