"""The kernel registry: TFLite op name -> Kernel(prepare, eval).

One module per op family; this table is the only place that says which ops exist.
An op missing here is reported by allocate_tensors() as UnsupportedOpError.
"""

from __future__ import annotations

from . import (
    activations,
    arg_minmax,
    arithmetic,
    batch_matmul,
    binary,
    cast,
    concatenation,
    conv,
    depthwise_conv,
    dequantize,
    fully_connected,
    gather,
    logical,
    normalization,
    pad,
    pooling,
    reduce,
    reshape,
    resize,
    shape_ops,
    slicing,
    softmax,
    space_depth,
    split,
    tile,
    transpose,
    transpose_conv,
    unary,
)
from . import quantized
from .base import Kernel, OpContext, OutputSpec, TensorInfo

KERNELS: dict[str, Kernel] = {
    # convolution / matmul
    "CONV_2D": Kernel(conv.prepare, conv.eval),
    "DEPTHWISE_CONV_2D": Kernel(depthwise_conv.prepare, depthwise_conv.eval),
    "FULLY_CONNECTED": Kernel(fully_connected.prepare, fully_connected.eval),
    "TRANSPOSE_CONV": Kernel(transpose_conv.prepare, transpose_conv.eval),
    "BATCH_MATMUL": batch_matmul.BATCH_MATMUL,
    # pooling
    "AVERAGE_POOL_2D": Kernel(pooling.prepare_average, pooling.eval_average),
    "MAX_POOL_2D": Kernel(pooling.prepare_max, pooling.eval_max),
    # elementwise arithmetic
    "ADD": arithmetic.ADD,
    "SUB": arithmetic.SUB,
    "MUL": arithmetic.MUL,
    "DIV": binary.DIV,
    "FLOOR_DIV": binary.FLOOR_DIV,
    "FLOOR_MOD": binary.FLOOR_MOD,
    "MAXIMUM": binary.MAXIMUM,
    "MINIMUM": binary.MINIMUM,
    "SQUARED_DIFFERENCE": binary.SQUARED_DIFFERENCE,
    "POW": binary.POW,
    # elementwise math
    "EXP": unary.EXP,
    "LOG": unary.LOG,
    "SQRT": unary.SQRT,
    "RSQRT": unary.RSQRT,
    "SQUARE": unary.SQUARE,
    "ABS": unary.ABS,
    "NEG": unary.NEG,
    "SIGN": unary.SIGN,
    "FLOOR": unary.FLOOR,
    "CEIL": unary.CEIL,
    "ROUND": unary.ROUND,
    "SIN": unary.SIN,
    "COS": unary.COS,
    # activations
    "RELU": activations.RELU,
    "RELU6": activations.RELU6,
    "RELU_N1_TO_1": activations.RELU_N1_TO_1,
    "LOGISTIC": activations.LOGISTIC,
    "TANH": activations.TANH,
    "RELU_0_TO_1": activations.RELU_0_TO_1,
    "LEAKY_RELU": activations.LEAKY_RELU,
    "PRELU": binary.PRELU,
    "ELU": activations.ELU,
    "HARD_SWISH": activations.HARD_SWISH,
    "GELU": activations.GELU,
    "SOFTMAX": Kernel(softmax.prepare, softmax.eval),
    "LOG_SOFTMAX": Kernel(softmax.prepare_log_softmax, softmax.eval_log_softmax),
    "L2_NORMALIZATION": normalization.L2_NORMALIZATION,
    # reductions
    "MEAN": reduce.MEAN,
    "SUM": reduce.SUM,
    "REDUCE_MAX": reduce.REDUCE_MAX,
    "REDUCE_MIN": reduce.REDUCE_MIN,
    "REDUCE_PROD": reduce.REDUCE_PROD,
    "REDUCE_ANY": reduce.REDUCE_ANY,
    "REDUCE_ALL": reduce.REDUCE_ALL,
    "ARG_MAX": arg_minmax.ARG_MAX,
    "ARG_MIN": arg_minmax.ARG_MIN,
    # shape ops
    "RESHAPE": reshape.RESHAPE,
    "SQUEEZE": reshape.SQUEEZE,
    "EXPAND_DIMS": reshape.EXPAND_DIMS,
    "TRANSPOSE": transpose.TRANSPOSE,
    "CONCATENATION": Kernel(concatenation.prepare, concatenation.eval),
    "PACK": Kernel(concatenation.prepare_pack, concatenation.eval_pack),
    "SPLIT": split.SPLIT,
    "SPLIT_V": split.SPLIT_V,
    "UNPACK": split.UNPACK,
    "PAD": pad.PAD,
    "PADV2": pad.PADV2,
    "MIRROR_PAD": pad.MIRROR_PAD,
    "SLICE": slicing.SLICE,
    "STRIDED_SLICE": slicing.STRIDED_SLICE,
    "TILE": tile.TILE,
    "BROADCAST_TO": tile.BROADCAST_TO,
    "GATHER": gather.GATHER,
    "DEPTH_TO_SPACE": space_depth.DEPTH_TO_SPACE,
    "SPACE_TO_DEPTH": space_depth.SPACE_TO_DEPTH,
    # resizing
    "RESIZE_BILINEAR": Kernel(resize.prepare_bilinear, resize.eval_bilinear),
    "RESIZE_NEAREST_NEIGHBOR": Kernel(resize.prepare_nearest, resize.eval_nearest),
    # comparisons, logic, selection
    "LESS": logical.LESS,
    "LESS_EQUAL": logical.LESS_EQUAL,
    "GREATER": logical.GREATER,
    "GREATER_EQUAL": logical.GREATER_EQUAL,
    "EQUAL": logical.EQUAL,
    "NOT_EQUAL": logical.NOT_EQUAL,
    "LOGICAL_AND": logical.LOGICAL_AND,
    "LOGICAL_OR": logical.LOGICAL_OR,
    "LOGICAL_NOT": unary.LOGICAL_NOT,
    "SELECT": logical.SELECT,
    "SELECT_V2": logical.SELECT_V2,
    # shapes and generated tensors (the converter folds shape computations with these)
    "SHAPE": shape_ops.SHAPE,
    "RANK": shape_ops.RANK,
    "FILL": shape_ops.FILL,
    "RANGE": shape_ops.RANGE,
    "ZEROS_LIKE": shape_ops.ZEROS_LIKE,
    # type conversion
    "CAST": cast.CAST,
    "DEQUANTIZE": Kernel(dequantize.prepare, dequantize.eval),
}

# int8 / uint8 inputs of the ops listed in quantized.py go to their integer kernels.
KERNELS.update(quantized.with_integer_paths(KERNELS))

__all__ = ["KERNELS", "Kernel", "OpContext", "OutputSpec", "TensorInfo"]
