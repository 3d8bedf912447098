"""The shared TFLite operator table: builtin codes, option tables, dtype maps.

Used by both the converter's exporter and the interpreter's reader, so the two
agree on every code and option field. Everything here is derived from the schema
(layout.py, generated from tflite.fbs; the flatc bindings ``generated_tflite`` load
only to build options objects) except the op -> options-table mapping, which TFLite's
schema does not state mechanically and is written out by hand below
(``_OPTIONS_TABLE_OF``).

Main names:

* ``BUILTIN_CODE`` / ``BUILTIN_NAME``: op name <-> BuiltinOperator value.
* ``OPTIONS_OF``: op name -> (BuiltinOptions union value, options ``...T`` class)
  for ops whose options live in ``Operator.builtin_options``;
  ``OPTIONS2_OF``: the same for ``Operator.builtin_options_2`` (StableHLO ops).
* ``options_to_dict(obj)`` / ``options_from_dict(op, d)`` / ``default_options(op)``:
  options objects <-> plain dicts with the schema's snake_case field names.
* ``set_operator_options(op_t, op, d)`` / ``operator_options(op_t)``: the same
  on an ``OperatorT`` (fills / reads the right union field).
* ``operator_code(op)`` / ``builtin_code_of(code_obj)``: OperatorCode writing
  and reading rules (deprecated byte code = min(code, 127); readers take max).
* ``TENSOR_TYPE_TO_NUMPY`` / ``NUMPY_TO_TENSOR_TYPE`` / ``numpy_dtype_of`` /
  ``tensor_type_of``; ``TENSOR_TYPE_NAME``, ``ACTIVATION_NAME``, ``PADDING_NAME``
  and the re-exported enum classes ``TensorType``, ``ActivationFunctionType``,
  ``Padding``, ``BuiltinOperator``, ``BuiltinOptions``, ``BuiltinOptions2``.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np

from . import layout

# The flatc bindings (690 KB) load only when an options object is built or written
# (options_from_dict, operator_code, OPTIONS_OF's classes): reading a model and every
# name table below come from layout.py (layout_gen.py), so the interpreter never loads
# them. ``tfl()`` returns the module.


def tfl():
    from . import generated_tflite
    return generated_tflite


def _enum_class(name: str, members: dict[str, int]) -> type:
    """A plain class with one int attribute per member, like flatc's enum classes."""
    return type(name, (), {"__module__": __name__, **members})


def _union_class(name: str) -> type:
    return _enum_class(name, {t: v for v, t in layout.UNIONS[name].items()})


# Re-exported enum classes (plain classes with int attributes).
TensorType = _enum_class("TensorType", layout.ENUMS["TensorType"])
ActivationFunctionType = _enum_class("ActivationFunctionType",
                                     layout.ENUMS["ActivationFunctionType"])
Padding = _enum_class("Padding", layout.ENUMS["Padding"])
BuiltinOperator = _enum_class("BuiltinOperator", layout.ENUMS["BuiltinOperator"])
BuiltinOptions = _union_class("BuiltinOptions")
BuiltinOptions2 = _union_class("BuiltinOptions2")
MirrorPadMode = _enum_class("MirrorPadMode", layout.ENUMS["MirrorPadMode"])
FullyConnectedOptionsWeightsFormat = _enum_class(
    "FullyConnectedOptionsWeightsFormat", layout.ENUMS["FullyConnectedOptionsWeightsFormat"])

# Writers store min(code, this) in OperatorCode.deprecated_builtin_code.
PLACEHOLDER_FOR_GREATER_OP_CODES = BuiltinOperator.PLACEHOLDER_FOR_GREATER_OP_CODES


def enum_values(enum_cls: type) -> dict[str, int]:
    """Name -> value for a generated flatbuffers enum/union class, in value order."""
    items = [(k, v) for k, v in vars(enum_cls).items()
             if not k.startswith("_") and isinstance(v, int) and not isinstance(v, bool)]
    return dict(sorted(items, key=lambda kv: kv[1]))


def enum_names(enum_cls: type) -> dict[int, str]:
    """Value -> name for a generated flatbuffers enum/union class."""
    return {v: k for k, v in enum_values(enum_cls).items()}


BUILTIN_CODE: dict[str, int] = enum_values(BuiltinOperator)
BUILTIN_NAME: dict[int, str] = enum_names(BuiltinOperator)
TENSOR_TYPE_NAME: dict[int, str] = enum_names(TensorType)
ACTIVATION_NAME: dict[int, str] = enum_names(ActivationFunctionType)
PADDING_NAME: dict[int, str] = enum_names(Padding)
ACTIVATION: dict[str, int] = enum_values(ActivationFunctionType)
PADDING: dict[str, int] = enum_values(Padding)

# ---------------------------------------------------------------------------
# Op -> options table (hand-written: TFLite op names and table names differ).
# Ops not listed have no options table (e.g. RELU, LOGISTIC, TANH, FLOOR, SIN,
# LOG, SQRT, RSQRT, CEIL, ROUND, ELU, PRELU, EMBEDDING_LOOKUP, CUSTOM, ...).
# ---------------------------------------------------------------------------
_OPTIONS_TABLE_OF: dict[str, str] = {
    "ADD": "AddOptions",
    "AVERAGE_POOL_2D": "Pool2DOptions",
    "CONCATENATION": "ConcatenationOptions",
    "CONV_2D": "Conv2DOptions",
    "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
    "DEPTH_TO_SPACE": "DepthToSpaceOptions",
    "DEQUANTIZE": "DequantizeOptions",
    "FULLY_CONNECTED": "FullyConnectedOptions",
    "L2_NORMALIZATION": "L2NormOptions",
    "L2_POOL_2D": "Pool2DOptions",
    "LOCAL_RESPONSE_NORMALIZATION": "LocalResponseNormalizationOptions",
    "LSH_PROJECTION": "LSHProjectionOptions",
    "LSTM": "LSTMOptions",
    "MAX_POOL_2D": "Pool2DOptions",
    "MUL": "MulOptions",
    "RESHAPE": "ReshapeOptions",
    "RESIZE_BILINEAR": "ResizeBilinearOptions",
    "RNN": "RNNOptions",
    "SOFTMAX": "SoftmaxOptions",
    "SPACE_TO_DEPTH": "SpaceToDepthOptions",
    "SVDF": "SVDFOptions",
    "CONCAT_EMBEDDINGS": "ConcatEmbeddingsOptions",
    "SKIP_GRAM": "SkipGramOptions",
    "CALL": "CallOptions",
    "EMBEDDING_LOOKUP_SPARSE": "EmbeddingLookupSparseOptions",
    "PAD": "PadOptions",
    "UNIDIRECTIONAL_SEQUENCE_RNN": "SequenceRNNOptions",
    "GATHER": "GatherOptions",
    "BATCH_TO_SPACE_ND": "BatchToSpaceNDOptions",
    "SPACE_TO_BATCH_ND": "SpaceToBatchNDOptions",
    "TRANSPOSE": "TransposeOptions",
    "MEAN": "ReducerOptions",
    "SUB": "SubOptions",
    "DIV": "DivOptions",
    "SQUEEZE": "SqueezeOptions",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "UnidirectionalSequenceLSTMOptions",
    "STRIDED_SLICE": "StridedSliceOptions",
    "BIDIRECTIONAL_SEQUENCE_RNN": "BidirectionalSequenceRNNOptions",
    "EXP": "ExpOptions",
    "TOPK_V2": "TopKV2Options",
    "SPLIT": "SplitOptions",
    "LOG_SOFTMAX": "LogSoftmaxOptions",
    "BIDIRECTIONAL_SEQUENCE_LSTM": "BidirectionalSequenceLSTMOptions",
    "CAST": "CastOptions",
    "MAXIMUM": "MaximumMinimumOptions",
    "ARG_MAX": "ArgMaxOptions",
    "MINIMUM": "MaximumMinimumOptions",
    "LESS": "LessOptions",
    "NEG": "NegOptions",
    "PADV2": "PadV2Options",
    "GREATER": "GreaterOptions",
    "GREATER_EQUAL": "GreaterEqualOptions",
    "LESS_EQUAL": "LessEqualOptions",
    "SELECT": "SelectOptions",
    "SLICE": "SliceOptions",
    "TRANSPOSE_CONV": "TransposeConvOptions",
    "SPARSE_TO_DENSE": "SparseToDenseOptions",
    "TILE": "TileOptions",
    "EXPAND_DIMS": "ExpandDimsOptions",
    "EQUAL": "EqualOptions",
    "NOT_EQUAL": "NotEqualOptions",
    "SUM": "ReducerOptions",
    "SHAPE": "ShapeOptions",
    "POW": "PowOptions",
    "ARG_MIN": "ArgMinOptions",
    "FAKE_QUANT": "FakeQuantOptions",
    "REDUCE_PROD": "ReducerOptions",
    "REDUCE_MAX": "ReducerOptions",
    "PACK": "PackOptions",
    "LOGICAL_OR": "LogicalOrOptions",
    "ONE_HOT": "OneHotOptions",
    "LOGICAL_AND": "LogicalAndOptions",
    "LOGICAL_NOT": "LogicalNotOptions",
    "UNPACK": "UnpackOptions",
    "REDUCE_MIN": "ReducerOptions",
    "FLOOR_DIV": "FloorDivOptions",
    "REDUCE_ANY": "ReducerOptions",
    "SQUARE": "SquareOptions",
    "ZEROS_LIKE": "ZerosLikeOptions",
    "FILL": "FillOptions",
    "FLOOR_MOD": "FloorModOptions",
    "RANGE": "RangeOptions",
    "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions",
    "LEAKY_RELU": "LeakyReluOptions",
    "SQUARED_DIFFERENCE": "SquaredDifferenceOptions",
    "MIRROR_PAD": "MirrorPadOptions",
    "ABS": "AbsOptions",
    "SPLIT_V": "SplitVOptions",
    "UNIQUE": "UniqueOptions",
    "REVERSE_V2": "ReverseV2Options",
    "ADD_N": "AddNOptions",
    "GATHER_ND": "GatherNdOptions",
    "COS": "CosOptions",
    "WHERE": "WhereOptions",
    "RANK": "RankOptions",
    "REVERSE_SEQUENCE": "ReverseSequenceOptions",
    "MATRIX_DIAG": "MatrixDiagOptions",
    "QUANTIZE": "QuantizeOptions",
    "MATRIX_SET_DIAG": "MatrixSetDiagOptions",
    "HARD_SWISH": "HardSwishOptions",
    "IF": "IfOptions",
    "WHILE": "WhileOptions",
    "NON_MAX_SUPPRESSION_V4": "NonMaxSuppressionV4Options",
    "NON_MAX_SUPPRESSION_V5": "NonMaxSuppressionV5Options",
    "SCATTER_ND": "ScatterNdOptions",
    "SELECT_V2": "SelectV2Options",
    "DENSIFY": "DensifyOptions",
    "SEGMENT_SUM": "SegmentSumOptions",
    "BATCH_MATMUL": "BatchMatMulOptions",
    "CUMSUM": "CumsumOptions",
    "CALL_ONCE": "CallOnceOptions",
    "BROADCAST_TO": "BroadcastToOptions",
    "RFFT2D": "Rfft2dOptions",
    "CONV_3D": "Conv3DOptions",
    "HASHTABLE": "HashtableOptions",
    "HASHTABLE_FIND": "HashtableFindOptions",
    "HASHTABLE_IMPORT": "HashtableImportOptions",
    "HASHTABLE_SIZE": "HashtableSizeOptions",
    "REDUCE_ALL": "ReducerOptions",
    "CONV_3D_TRANSPOSE": "Conv3DOptions",
    "VAR_HANDLE": "VarHandleOptions",
    "READ_VARIABLE": "ReadVariableOptions",
    "ASSIGN_VARIABLE": "AssignVariableOptions",
    "RANDOM_STANDARD_NORMAL": "RandomOptions",
    "BUCKETIZE": "BucketizeOptions",
    "RANDOM_UNIFORM": "RandomOptions",
    "MULTINOMIAL": "RandomOptions",
    "GELU": "GeluOptions",
    "DYNAMIC_UPDATE_SLICE": "DynamicUpdateSliceOptions",
    "UNSORTED_SEGMENT_PROD": "UnsortedSegmentProdOptions",
    "UNSORTED_SEGMENT_MAX": "UnsortedSegmentMaxOptions",
    "UNSORTED_SEGMENT_SUM": "UnsortedSegmentSumOptions",
    "ATAN2": "ATan2Options",
    "UNSORTED_SEGMENT_MIN": "UnsortedSegmentMinOptions",
    "SIGN": "SignOptions",
    "BITCAST": "BitcastOptions",
    "BITWISE_XOR": "BitwiseXorOptions",
    "RIGHT_SHIFT": "RightShiftOptions",
}

# Ops whose options live in Operator.builtin_options_2.
_OPTIONS2_TABLE_OF: dict[str, str] = {
    "STABLEHLO_CONCATENATE": "StablehloConcatenateOptions",
    "STABLEHLO_BROADCAST_IN_DIM": "StablehloBroadcastInDimOptions",
    "STABLEHLO_SLICE": "StablehloSliceOptions",
    "STABLEHLO_CONVOLUTION": "StablehloConvolutionOptions",
    "STABLEHLO_CUSTOM_CALL": "StablehloCustomCallOptions",
    "STABLEHLO_REDUCE": "StablehloReduceOptions",
    "STABLEHLO_SCATTER": "StablehloScatterOptions",
    "STABLEHLO_COMPARE": "StablehloCompareOptions",
    "STABLEHLO_DYNAMIC_SLICE": "StablehloDynamicSliceOptions",
    "STABLEHLO_PAD": "StablehloPadOptions",
    "STABLEHLO_IOTA": "StablehloIotaOptions",
    "STABLEHLO_DOT_GENERAL": "StablehloDotGeneralOptions",
    "STABLEHLO_REDUCE_WINDOW": "StablehloReduceWindowOptions",
    "STABLEHLO_SORT": "StablehloSortOptions",
    "STABLEHLO_WHILE": "StablehloWhileOptions",
    "STABLEHLO_GATHER": "StablehloGatherOptions",
    "STABLEHLO_TRANSPOSE": "StablehloTransposeOptions",
    "DILATE": "DilateOptions",
    "STABLEHLO_RNG_BIT_GENERATOR": "StablehloRngBitGeneratorOptions",
    "REDUCE_WINDOW": "ReduceWindowOptions",
    "STABLEHLO_COMPOSITE": "StableHLOCompositeOptions",
    "STABLEHLO_SHIFT_LEFT": "StablehloShiftLeftOptions",
    "STABLEHLO_CASE": "StablehloCaseOptions",
}


def _build_table(mapping: dict[str, str], union: str) -> dict[str, tuple[int, type]]:
    values = {t: v for v, t in layout.UNIONS[union].items()}
    return {op: (values[table], getattr(tfl(), table + "T")) for op, table in mapping.items()}


def _classes(union: str) -> dict[int, type]:
    return {v: getattr(tfl(), name + "T") for v, name in layout.UNIONS[union].items() if v}


# Built on first use (they hold the bindings' classes): module __getattr__ below.
#   OPTIONS_OF / OPTIONS2_OF: op -> (union value, options T class);
#   OPTIONS_CLASS / OPTIONS2_CLASS: union value -> options T class (for reading).
_LAZY = {
    "OPTIONS_OF": lambda: _build_table(_OPTIONS_TABLE_OF, "BuiltinOptions"),
    "OPTIONS2_OF": lambda: _build_table(_OPTIONS2_TABLE_OF, "BuiltinOptions2"),
    "OPTIONS_CLASS": lambda: _classes("BuiltinOptions"),
    "OPTIONS2_CLASS": lambda: _classes("BuiltinOptions2"),
}


def __getattr__(name: str):
    make = _LAZY.get(name)
    if make is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = make()
    return value


def options_union(op_name: str) -> str | None:
    """Which Operator field carries this op's options.

    Returns "builtin_options", "builtin_options_2", or None (no options).
    Raises ValueError for an unknown op name.
    """
    _check_op(op_name)
    if op_name in _OPTIONS_TABLE_OF:
        return "builtin_options"
    if op_name in _OPTIONS2_TABLE_OF:
        return "builtin_options_2"
    return None


def _check_op(op_name: str) -> None:
    if op_name not in BUILTIN_CODE:
        raise ValueError(f"unknown TFLite builtin operator {op_name!r}")


# ---------------------------------------------------------------------------
# Options objects <-> dicts
# ---------------------------------------------------------------------------

_CAMEL_SPLIT = re.compile(r"(?<!^)(?=[A-Z])")


@functools.lru_cache(maxsize=1024)  # option field names: a few hundred distinct ones
def _snake(name: str) -> str:
    return _CAMEL_SPLIT.sub("_", name).lower()


@functools.lru_cache(maxsize=1024)
def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _plain(value: Any) -> Any:
    """numpy scalars/arrays -> Python ints/floats/bools/lists."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def options_to_dict(options_obj: Any) -> dict[str, Any]:
    """Convert a generated options ``...T`` object to a dict with snake_case keys.

    Vectors become lists, numpy scalars Python scalars; absent vectors are None.
    Enum fields stay ints (see ``ACTIVATION_NAME`` etc. for names).
    ``None`` (no options) gives ``{}``.
    """
    if options_obj is None:
        return {}
    return {_snake(k): _plain(v) for k, v in vars(options_obj).items()}


# Fields whose value may also be given as an enum name in options_from_dict.
_ENUM_FIELDS: dict[str, str] = {
    "padding": "Padding",
    "fused_activation_function": "ActivationFunctionType",
    "weights_format": "FullyConnectedOptionsWeightsFormat",
    "kernel_type": "LSTMKernelType",
    "combiner": "CombinerType",
    "mode": "MirrorPadMode",
    "in_data_type": "TensorType",
    "out_data_type": "TensorType",
    "output_type": "TensorType",
    "out_type": "TensorType",
    "idx_out_type": "TensorType",
    "quantized_bias_type": "TensorType",
    "key_dtype": "TensorType",
    "value_dtype": "TensorType",
    "algorithm": "RngAlgorithm",
    "comparison_direction": "StablehloComparisonDirection",
    "compare_type": "StablehloComparisonType",
    "reduce_function": "ReduceWindowFunction",
    "composite_attributes_format": "CustomOptionsFormat",
}


def _lazy(name: str):
    return globals().get(name) or __getattr__(name)


def _options_entry(op_name: str) -> tuple[int, type] | None:
    _check_op(op_name)
    if op_name in _OPTIONS_TABLE_OF:
        return _lazy("OPTIONS_OF")[op_name]
    if op_name in _OPTIONS2_TABLE_OF:
        return _lazy("OPTIONS2_OF")[op_name]
    return None


def options_from_dict(op_name: str, d: dict[str, Any] | None = None) -> tuple[int, Any]:
    """Build the options ``...T`` object for ``op_name`` from a snake_case dict.

    Returns ``(union_type, obj)``; the union is BuiltinOptions for ops in
    ``OPTIONS_OF`` and BuiltinOptions2 for ops in ``OPTIONS2_OF`` (see
    ``options_union``). Missing keys keep the schema defaults; unknown keys
    raise ValueError naming the op and key. Enum fields accept ints or enum
    names (e.g. ``padding="SAME"``, ``fused_activation_function="RELU6"``).
    Ops without an options table give ``(BuiltinOptions.NONE, None)`` (a
    non-empty dict for them is an error).
    """
    d = d or {}
    entry = _options_entry(op_name)
    if entry is None:
        if d:
            raise ValueError(
                f"{op_name} has no builtin options, but got keys {sorted(d)}")
        return BuiltinOptions.NONE, None
    union_type, cls = entry
    obj = cls()
    for key, value in d.items():
        attr = _camel(key)
        if not isinstance(key, str) or not hasattr(obj, attr) or _snake(attr) != key:
            valid = ", ".join(_snake(k) for k in vars(obj))
            raise ValueError(
                f"{op_name}: unknown option {key!r} for {cls.__name__[:-1]} (valid: {valid})")
        if isinstance(value, str) and key in _ENUM_FIELDS:
            names = layout.ENUMS[_ENUM_FIELDS[key]]
            if value not in names:
                raise ValueError(
                    f"{op_name}: option {key}={value!r} is not one of {sorted(names)}")
            value = names[value]
        elif isinstance(value, np.ndarray):
            value = value.tolist()
        elif isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, np.generic):
            value = value.item()
        setattr(obj, attr, value)
    return union_type, obj


def default_options(op_name: str) -> dict[str, Any]:
    """The schema defaults of ``op_name``'s options as a dict ({} if none), as
    ``options_to_dict`` of a default options object gives them (from layout.py)."""
    _check_op(op_name)
    table = _OPTIONS_TABLE_OF.get(op_name) or _OPTIONS2_TABLE_OF.get(op_name)
    return {} if table is None else {key: default for key, _, _, default in
                                     layout.TABLES[table]}


def set_operator_options(op_t: Any, op_name: str, d: dict[str, Any] | None = None) -> Any:
    """Fill ``op_t`` (an ``OperatorT``) with ``op_name``'s options from dict ``d``.

    Sets builtinOptionsType/builtinOptions or builtinOptions2Type/builtinOptions2
    as appropriate. Returns ``op_t``.
    """
    union_type, obj = options_from_dict(op_name, d)
    if op_name in _OPTIONS2_TABLE_OF:
        op_t.builtinOptions2Type, op_t.builtinOptions2 = union_type, obj
    else:
        op_t.builtinOptionsType, op_t.builtinOptions = union_type, obj
    return op_t


def operator_options(op_t: Any) -> dict[str, Any]:
    """The options of an ``OperatorT`` as a dict (either union; {} if none)."""
    if getattr(op_t, "builtinOptions", None) is not None:
        return options_to_dict(op_t.builtinOptions)
    if getattr(op_t, "builtinOptions2", None) is not None:
        return options_to_dict(op_t.builtinOptions2)
    return {}


# ---------------------------------------------------------------------------
# Operator codes
# ---------------------------------------------------------------------------

def operator_code(op: str | int, version: int = 1, custom_code: str | None = None) -> Any:
    """An ``OperatorCodeT`` for a builtin op (name or code), following TFLite's rule:
    deprecated_builtin_code = min(code, 127), builtin_code = code."""
    code = BUILTIN_CODE[op] if isinstance(op, str) else int(op)
    if code not in BUILTIN_NAME:
        raise ValueError(f"unknown TFLite builtin operator code {code}")
    oc = tfl().OperatorCodeT()
    oc.deprecatedBuiltinCode = min(code, PLACEHOLDER_FOR_GREATER_OP_CODES)
    oc.builtinCode = code
    oc.version = int(version)
    if custom_code is not None:
        oc.customCode = custom_code
    return oc


def builtin_code_of(opcode: Any) -> int:
    """The builtin code of an OperatorCode (``OperatorCode`` or ``OperatorCodeT``):
    the larger of builtin_code and deprecated_builtin_code (old files only set
    the latter)."""
    if hasattr(opcode, "BuiltinCode"):  # the bindings' reader object
        return max(int(opcode.BuiltinCode()), int(opcode.DeprecatedBuiltinCode()))
    return max(int(opcode.builtinCode), int(opcode.deprecatedBuiltinCode))


# ---------------------------------------------------------------------------
# Tensor types <-> numpy
# ---------------------------------------------------------------------------

# TensorType -> numpy dtype. STRING maps to object (elements are bytes).
# Types with no numpy equivalent (INT4, INT2, UINT4, BFLOAT16, FLOAT8_*,
# RESOURCE, VARIANT) are absent.
TENSOR_TYPE_TO_NUMPY: dict[int, np.dtype] = {
    TensorType.FLOAT32: np.dtype(np.float32),
    TensorType.FLOAT16: np.dtype(np.float16),
    TensorType.INT32: np.dtype(np.int32),
    TensorType.UINT8: np.dtype(np.uint8),
    TensorType.INT64: np.dtype(np.int64),
    TensorType.STRING: np.dtype(object),
    TensorType.BOOL: np.dtype(np.bool_),
    TensorType.INT16: np.dtype(np.int16),
    TensorType.COMPLEX64: np.dtype(np.complex64),
    TensorType.INT8: np.dtype(np.int8),
    TensorType.FLOAT64: np.dtype(np.float64),
    TensorType.COMPLEX128: np.dtype(np.complex128),
    TensorType.UINT64: np.dtype(np.uint64),
    TensorType.UINT32: np.dtype(np.uint32),
    TensorType.UINT16: np.dtype(np.uint16),
}

# numpy dtype -> TensorType (keys are np.dtype; use tensor_type_of() for
# anything dtype-like). bytes / str arrays map to STRING.
NUMPY_TO_TENSOR_TYPE: dict[np.dtype, int] = {
    dt: tt for tt, dt in TENSOR_TYPE_TO_NUMPY.items()}


def numpy_dtype_of(tensor_type: int) -> np.dtype:
    """numpy dtype for a TensorType value; ValueError if there is none."""
    try:
        return TENSOR_TYPE_TO_NUMPY[int(tensor_type)]
    except KeyError:
        name = TENSOR_TYPE_NAME.get(int(tensor_type), f"unknown type {tensor_type}")
        raise ValueError(f"TFLite tensor type {name} has no numpy dtype") from None


def tensor_type_of(dtype: Any) -> int:
    """TensorType value for a numpy dtype (or anything np.dtype() accepts)."""
    dt = np.dtype(dtype)
    if dt.kind in ("S", "U", "O"):
        return TensorType.STRING
    dt = dt.newbyteorder("=") if dt.byteorder not in ("=", "|") else dt
    try:
        return NUMPY_TO_TENSOR_TYPE[dt]
    except KeyError:
        raise ValueError(f"numpy dtype {dt} has no TFLite tensor type") from None


__all__ = [
    "TensorType", "ActivationFunctionType", "Padding", "BuiltinOperator", "BuiltinOptions",
    "BuiltinOptions2", "MirrorPadMode", "FullyConnectedOptionsWeightsFormat",
    "PLACEHOLDER_FOR_GREATER_OP_CODES", "enum_values", "enum_names",
    "BUILTIN_CODE", "BUILTIN_NAME", "TENSOR_TYPE_NAME", "ACTIVATION_NAME", "PADDING_NAME",
    "ACTIVATION", "PADDING", "OPTIONS_OF", "OPTIONS2_OF", "OPTIONS_CLASS", "OPTIONS2_CLASS",
    "options_union", "options_to_dict", "options_from_dict", "default_options",
    "set_operator_options", "operator_options", "operator_code", "builtin_code_of",
    "TENSOR_TYPE_TO_NUMPY", "NUMPY_TO_TENSOR_TYPE", "numpy_dtype_of", "tensor_type_of",
]
