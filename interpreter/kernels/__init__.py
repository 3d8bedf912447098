"""The kernel registry: TFLite op name -> Kernel(prepare, eval).

One module per op family; this table is the only place that says which ops exist.
An op missing here is reported by allocate_tensors() as UnsupportedOpError.
"""

from __future__ import annotations

from . import (
    activations,
    arithmetic,
    concatenation,
    conv,
    depthwise_conv,
    dequantize,
    fully_connected,
    pad,
    pooling,
    reduce,
    reshape,
    softmax,
)
from .base import Kernel, OpContext, OutputSpec, TensorInfo

KERNELS: dict[str, Kernel] = {
    # convolution / matmul
    "CONV_2D": Kernel(conv.prepare, conv.eval),
    "DEPTHWISE_CONV_2D": Kernel(depthwise_conv.prepare, depthwise_conv.eval),
    "FULLY_CONNECTED": Kernel(fully_connected.prepare, fully_connected.eval),
    # pooling
    "AVERAGE_POOL_2D": Kernel(pooling.prepare_average, pooling.eval_average),
    "MAX_POOL_2D": Kernel(pooling.prepare_max, pooling.eval_max),
    # elementwise arithmetic
    "ADD": arithmetic.ADD,
    "SUB": arithmetic.SUB,
    "MUL": arithmetic.MUL,
    # activations
    "RELU": activations.RELU,
    "RELU6": activations.RELU6,
    "RELU_N1_TO_1": activations.RELU_N1_TO_1,
    "LOGISTIC": activations.LOGISTIC,
    "TANH": activations.TANH,
    "SOFTMAX": Kernel(softmax.prepare, softmax.eval),
    # reductions
    "MEAN": reduce.MEAN,
    "SUM": reduce.SUM,
    "REDUCE_MAX": reduce.REDUCE_MAX,
    "REDUCE_MIN": reduce.REDUCE_MIN,
    # shape ops
    "RESHAPE": reshape.RESHAPE,
    "SQUEEZE": reshape.SQUEEZE,
    "CONCATENATION": Kernel(concatenation.prepare, concatenation.eval),
    "PAD": pad.PAD,
    "PADV2": pad.PADV2,
    # type conversion
    "DEQUANTIZE": Kernel(dequantize.prepare, dequantize.eval),
}

__all__ = ["KERNELS", "Kernel", "OpContext", "OutputSpec", "TensorInfo"]
