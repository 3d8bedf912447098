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

# INTERIM (replaced by per-module records): OpDefs from the old tables.
from .opdef import Affine, OpDef, QuantRule, TYPE_GENERIC, PROBABILITY_OUTPUT, TANH_OUTPUT  # noqa
_INT = quantized.INTEGER_KERNELS
_OWN = {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "SUB", "MUL", "MEAN",
        "HARD_SWISH", "LEAKY_RELU", "RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1"}
_SAME = {"MAX_POOL_2D", "AVERAGE_POOL_2D", "RESHAPE", "SQUEEZE", "PAD", "RESIZE_BILINEAR",
         "RESIZE_NEAREST_NEIGHBOR"}
_FIXED = {"SOFTMAX": PROBABILITY_OUTPUT, "LOGISTIC": PROBABILITY_OUTPUT, "TANH": TANH_OUTPUT}
_AFF = {"CONV_2D": Affine(0, 1, 2, 0, 3), "DEPTHWISE_CONV_2D": Affine(0, 1, 2, 3, 3),
        "FULLY_CONNECTED": Affine(0, 1, 2, 0, 1), "TRANSPOSE_CONV": Affine(2, 1, 3, 0, 3)}
_ACT = {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV", "ADD", "SUB",
        "MUL", "CONCATENATION", "AVERAGE_POOL_2D", "MAX_POOL_2D"}
_PS = set("""ABS ADD AVERAGE_POOL_2D CAST CEIL CONCATENATION CONV_2D COS DEPTHWISE_CONV_2D DEQUANTIZE
    DIV ELU EQUAL EXP FLOOR FULLY_CONNECTED GELU GREATER GREATER_EQUAL HARD_SWISH
    LEAKY_RELU LESS LESS_EQUAL LOG LOGISTIC LOG_SOFTMAX MAXIMUM MAX_POOL_2D MINIMUM MUL NEG
    NOT_EQUAL PAD PADV2 POW PRELU QUANTIZE RELU RELU6 RELU_N1_TO_1 RESHAPE RESIZE_BILINEAR
    RESIZE_NEAREST_NEIGHBOR ROUND RSQRT SELECT_V2 SIN SOFTMAX SQRT SQUARE SQUARED_DIFFERENCE
    SQUEEZE SUB TANH""".split())
_RED = {"MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD"}
_EXACT = {"RESHAPE", "SQUEEZE", "PAD", "MAX_POOL_2D", "RESIZE_NEAREST_NEIGHBOR", "RELU", "RELU6"}


def _interim(name):
    integer = _INT.get(name)
    if integer is None and name in {"RESHAPE", "SQUEEZE", "PAD", "RESIZE_NEAREST_NEIGHBOR"}:
        integer = TYPE_GENERIC
    quant = (QuantRule.FIXED_OUTPUT if name in _FIXED else QuantRule.SAME_AS_INPUT
             if name in _SAME else QuantRule.SHARED if name == "CONCATENATION"
             else QuantRule.OWN_RANGE if name in _OWN else QuantRule.FLOAT_ONLY)
    return OpDef(name, float=KERNELS.get(name) if name != "QUANTIZE" else quantized.INTEGER_ONLY["QUANTIZE"],
                 integer=integer, quant=quant, fixed_output=_FIXED.get(name),
                 affine=_AFF.get(name), fused_activation=name in _ACT,
                 per_sample=name in _PS, reduction=name in _RED, exact=name in _EXACT)


OPS = {n: _interim(n) for n in sorted(set(KERNELS) | {"QUANTIZE"})}
KERNELS = {n: op.kernel for n, op in OPS.items()}

__all__ = ["OPS", "KERNELS", "Kernel", "OpContext", "OutputSpec", "TensorInfo"]
