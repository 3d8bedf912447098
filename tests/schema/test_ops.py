"""The shared op table: codes, options tables, dict conversion, dtype maps."""

import re
from pathlib import Path

import numpy as np
import pytest

from edgelite.schema import ops
from edgelite.schema import generated_tflite as tfl

FBS = Path(ops.__file__).with_name("tflite.fbs")

KNOWN_CODES = {
    "ADD": 0, "AVERAGE_POOL_2D": 1, "CONCATENATION": 2, "CONV_2D": 3,
    "DEPTHWISE_CONV_2D": 4, "DEPTH_TO_SPACE": 5, "DEQUANTIZE": 6, "FLOOR": 8,
    "FULLY_CONNECTED": 9, "L2_NORMALIZATION": 11, "L2_POOL_2D": 12, "LOGISTIC": 14,
    "MAX_POOL_2D": 17, "MUL": 18, "RELU": 19, "RELU_N1_TO_1": 20, "RELU6": 21,
    "RESHAPE": 22, "RESIZE_BILINEAR": 23, "SOFTMAX": 25, "SPACE_TO_DEPTH": 26,
    "TANH": 28, "CUSTOM": 32, "PAD": 34, "GATHER": 36, "TRANSPOSE": 39, "MEAN": 40,
    "SUB": 41, "DIV": 42, "SQUEEZE": 43, "STRIDED_SLICE": 45, "EXP": 47, "SPLIT": 49,
    "LOG_SOFTMAX": 50, "CAST": 53, "PRELU": 54, "MAXIMUM": 55, "ARG_MAX": 56,
    "MINIMUM": 57, "PADV2": 60, "SLICE": 65, "TRANSPOSE_CONV": 67, "TILE": 69,
    "EXPAND_DIMS": 70, "SUM": 74, "SQRT": 75, "RSQRT": 76, "SHAPE": 77, "POW": 78,
    "REDUCE_MAX": 82, "PACK": 83, "UNPACK": 88, "REDUCE_MIN": 89,
    "RESIZE_NEAREST_NEIGHBOR": 97, "LEAKY_RELU": 98, "SQUARED_DIFFERENCE": 99,
    "MIRROR_PAD": 100, "ABS": 101, "SPLIT_V": 102, "QUANTIZE": 114,
    "HARD_SWISH": 117, "BATCH_MATMUL": 126, "PLACEHOLDER_FOR_GREATER_OP_CODES": 127,
    "CUMSUM": 128, "BROADCAST_TO": 130, "CONV_3D": 132, "REDUCE_ALL": 140,
    "CONV_3D_TRANSPOSE": 141, "GELU": 150, "RELU_0_TO_1": 152, "SIGN": 158,
    "RIGHT_SHIFT": 161, "STABLEHLO_LOGISTIC": 162, "DILATE": 203,
    "REDUCE_WINDOW": 205, "STABLEHLO_COMPOSITE": 206, "STABLEHLO_CASE": 209,
}


def test_known_builtin_codes():
    for name, code in KNOWN_CODES.items():
        assert ops.BUILTIN_CODE[name] == code, name
        assert ops.BUILTIN_NAME[code] == name


def test_builtin_codes_are_dense_and_complete():
    assert sorted(ops.BUILTIN_CODE.values()) == list(range(len(ops.BUILTIN_CODE)))
    assert len(ops.BUILTIN_CODE) == 210
    assert ops.BUILTIN_NAME == {v: k for k, v in ops.BUILTIN_CODE.items()}


def test_known_enum_values():
    tt = ops.TensorType
    assert (tt.FLOAT32, tt.FLOAT16, tt.INT32, tt.UINT8, tt.INT64, tt.STRING, tt.BOOL,
            tt.INT16, tt.COMPLEX64, tt.INT8, tt.FLOAT64, tt.COMPLEX128, tt.UINT64,
            tt.RESOURCE, tt.VARIANT, tt.UINT32, tt.UINT16, tt.INT4, tt.BFLOAT16) == tuple(range(19))
    assert ops.ACTIVATION == {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3,
                              "TANH": 4, "SIGN_BIT": 5}
    assert ops.PADDING == {"SAME": 0, "VALID": 1}
    bo = ops.BuiltinOptions
    assert (bo.Conv2DOptions, bo.DepthwiseConv2DOptions, bo.Pool2DOptions,
            bo.FullyConnectedOptions, bo.SoftmaxOptions, bo.AddOptions,
            bo.ReshapeOptions, bo.ReducerOptions, bo.BatchMatMulOptions,
            bo.RightShiftOptions) == (1, 2, 5, 8, 9, 11, 17, 27, 101, 126)


def test_every_options_table_is_used_by_some_op():
    used = {v for v, _ in ops.OPTIONS_OF.values()}
    assert used == set(ops.OPTIONS_CLASS)
    used2 = {v for v, _ in ops.OPTIONS2_OF.values()}
    assert used2 == set(ops.OPTIONS2_CLASS)
    assert not set(ops.OPTIONS_OF) & set(ops.OPTIONS2_OF)
    for name in list(ops.OPTIONS_OF) + list(ops.OPTIONS2_OF):
        assert name in ops.BUILTIN_CODE


@pytest.mark.parametrize("op, table", [
    ("CONV_2D", "Conv2DOptions"), ("DEPTHWISE_CONV_2D", "DepthwiseConv2DOptions"),
    ("ADD", "AddOptions"), ("SUB", "SubOptions"), ("MUL", "MulOptions"), ("DIV", "DivOptions"),
    ("MEAN", "ReducerOptions"), ("SUM", "ReducerOptions"), ("REDUCE_MAX", "ReducerOptions"),
    ("REDUCE_MIN", "ReducerOptions"), ("REDUCE_PROD", "ReducerOptions"),
    ("REDUCE_ANY", "ReducerOptions"), ("REDUCE_ALL", "ReducerOptions"),
    ("AVERAGE_POOL_2D", "Pool2DOptions"), ("MAX_POOL_2D", "Pool2DOptions"),
    ("L2_POOL_2D", "Pool2DOptions"), ("MAXIMUM", "MaximumMinimumOptions"),
    ("MINIMUM", "MaximumMinimumOptions"), ("CONV_3D", "Conv3DOptions"),
    ("CONV_3D_TRANSPOSE", "Conv3DOptions"), ("UNIDIRECTIONAL_SEQUENCE_RNN", "SequenceRNNOptions"),
    ("RANDOM_UNIFORM", "RandomOptions"), ("L2_NORMALIZATION", "L2NormOptions"),
    ("PADV2", "PadV2Options"), ("SPLIT_V", "SplitVOptions"), ("ATAN2", "ATan2Options"),
])
def test_options_mapping(op, table):
    union, cls = ops.OPTIONS_OF[op]
    assert union == getattr(tfl.BuiltinOptions, table)
    assert cls is getattr(tfl, table + "T")
    assert ops.options_union(op) == "builtin_options"


def test_ops_without_options():
    for op in ("RELU", "RELU6", "LOGISTIC", "TANH", "FLOOR", "PRELU", "CUSTOM", "ELU"):
        assert ops.options_union(op) is None
        assert ops.options_from_dict(op, {}) == (tfl.BuiltinOptions.NONE, None)
        assert ops.default_options(op) == {}
    with pytest.raises(ValueError, match="RELU"):
        ops.options_from_dict("RELU", {"alpha": 1.0})
    with pytest.raises(ValueError, match="NOT_AN_OP"):
        ops.options_from_dict("NOT_AN_OP", {})


def test_stablehlo_options_use_second_union():
    assert ops.options_union("STABLEHLO_CASE") == "builtin_options_2"
    union, obj = ops.options_from_dict("STABLEHLO_CASE", {"branch_subgraph_indices": (1, 2)})
    assert union == tfl.BuiltinOptions2.StablehloCaseOptions
    assert obj.branchSubgraphIndices == [1, 2]
    op = ops.set_operator_options(tfl.OperatorT(), "STABLEHLO_CASE", {"branch_subgraph_indices": [3]})
    assert op.builtinOptions2Type == union and op.builtinOptionsType == 0
    assert ops.operator_options(op) == {"branch_subgraph_indices": [3]}


def _fbs_fields(table):
    """Non-deprecated field names of `table` in tflite.fbs, in order."""
    text = re.sub(r"//[^\n]*", "", FBS.read_text())
    m = re.search(r"\btable\s+%s\b[^{]*\{(.*?)\}" % table, text, re.S)
    assert m, table
    fields = []
    for decl in m.group(1).split(";"):
        decl = decl.strip()
        if decl and "(deprecated" not in decl:
            fields.append(decl.split(":")[0].strip())
    return fields


def test_dict_keys_are_the_schema_field_names():
    for op in list(ops.OPTIONS_OF) + list(ops.OPTIONS2_OF):
        entry = ops.OPTIONS_OF.get(op) or ops.OPTIONS2_OF[op]
        table = entry[1].__name__[:-1]
        assert list(ops.default_options(op)) == _fbs_fields(table), op


def test_conv2d_roundtrip_dict():
    d = {"padding": ops.Padding.VALID, "stride_w": 2, "stride_h": 3,
         "fused_activation_function": ops.ActivationFunctionType.RELU6,
         "dilation_w_factor": 1, "dilation_h_factor": 2, "quantized_bias_type": 0}
    union, obj = ops.options_from_dict("CONV_2D", d)
    assert union == tfl.BuiltinOptions.Conv2DOptions
    assert isinstance(obj, tfl.Conv2DOptionsT)
    assert (obj.padding, obj.strideW, obj.strideH, obj.fusedActivationFunction,
            obj.dilationHFactor) == (1, 2, 3, 3, 2)
    assert ops.options_to_dict(obj) == d


def test_defaults_and_partial_dicts():
    assert ops.default_options("CONV_2D") == {
        "padding": 0, "stride_w": 0, "stride_h": 0, "fused_activation_function": 0,
        "dilation_w_factor": 1, "dilation_h_factor": 1, "quantized_bias_type": 0}
    assert ops.default_options("ADD") == {"fused_activation_function": 0, "pot_scale_int16": True}
    assert ops.default_options("GATHER") == {"axis": 0, "batch_dims": 0}
    assert ops.default_options("TRANSPOSE") == {}
    _, obj = ops.options_from_dict("DEPTHWISE_CONV_2D", {"stride_w": 2})
    d = ops.options_to_dict(obj)
    assert d["stride_w"] == 2 and d["dilation_h_factor"] == 1 and d["depth_multiplier"] == 0


def test_enum_names_accepted():
    _, obj = ops.options_from_dict("CONV_2D", {"padding": "SAME", "fused_activation_function": "RELU"})
    assert (obj.padding, obj.fusedActivationFunction) == (0, 1)
    _, obj = ops.options_from_dict("CAST", {"in_data_type": "FLOAT32", "out_data_type": "INT8"})
    assert (obj.inDataType, obj.outDataType) == (0, 9)
    with pytest.raises(ValueError, match="padding"):
        ops.options_from_dict("CONV_2D", {"padding": "FULL"})


def test_unknown_key_names_op_and_key():
    with pytest.raises(ValueError, match=r"CONV_2D.*'strides'"):
        ops.options_from_dict("CONV_2D", {"strides": 2})
    with pytest.raises(ValueError, match=r"ADD.*'strideW'"):
        ops.options_from_dict("ADD", {"strideW": 2})  # camelCase is not accepted


def test_vector_fields_become_lists():
    _, obj = ops.options_from_dict("RESHAPE", {"new_shape": np.array([1, -1], np.int32)})
    assert obj.newShape == [1, -1]
    _, obj = ops.options_from_dict("SQUEEZE", {"squeeze_dims": (1, 2)})
    assert ops.options_to_dict(obj) == {"squeeze_dims": [1, 2]}
    obj.squeezeDims = np.array([0, 3], dtype=np.int32)   # as unpacked from a file
    d = ops.options_to_dict(obj)
    assert d == {"squeeze_dims": [0, 3]} and all(type(v) is int for v in d["squeeze_dims"])


@pytest.mark.parametrize("op, d", [
    ("FULLY_CONNECTED", {"fused_activation_function": 1, "keep_num_dims": True}),
    ("SOFTMAX", {"beta": 0.5}),
    ("CONCATENATION", {"axis": -1, "fused_activation_function": 0}),
    ("STRIDED_SLICE", {"begin_mask": 1, "end_mask": 2, "shrink_axis_mask": 4, "offset": True}),
    ("SPLIT", {"num_splits": 3}),
    ("RESIZE_BILINEAR", {"align_corners": False, "half_pixel_centers": True}),
    ("LEAKY_RELU", {"alpha": 0.25}),
    ("PACK", {"values_count": 2, "axis": 1}),
    ("TRANSPOSE_CONV", {"padding": 1, "stride_w": 2, "stride_h": 2}),
    ("BATCH_MATMUL", {"adj_x": True}),
    ("MIRROR_PAD", {"mode": 1}),
    ("SHAPE", {"out_type": 4}),
    ("MEAN", {"keep_dims": True}),
])
def test_roundtrip_through_flatbuffer(op, d):
    """options_from_dict -> Pack into an Operator -> bytes -> unpack -> same dict."""
    import flatbuffers
    op_t = ops.set_operator_options(tfl.OperatorT(), op, d)
    op_t.inputs, op_t.outputs = [0], [1]
    b = flatbuffers.Builder(256)
    b.Finish(op_t.Pack(b))
    back = tfl.OperatorT.InitFromObj(tfl.Operator.GetRootAs(bytes(b.Output()), 0))
    assert back.builtinOptionsType == ops.OPTIONS_OF[op][0]
    got = ops.operator_options(back)
    expected = dict(ops.default_options(op), **d)
    assert got.keys() == expected.keys()
    for k, v in expected.items():
        assert got[k] == pytest.approx(v), k


def test_operator_code_rules():
    oc = ops.operator_code("CONV_2D", version=2)
    assert (oc.deprecatedBuiltinCode, oc.builtinCode, oc.version) == (3, 3, 2)
    oc = ops.operator_code("CUMSUM")
    assert (oc.deprecatedBuiltinCode, oc.builtinCode) == (127, 128)
    assert ops.builtin_code_of(oc) == 128
    old = tfl.OperatorCodeT()
    old.deprecatedBuiltinCode = 9          # pre-3a files: builtin_code absent (0)
    assert ops.builtin_code_of(old) == 9
    with pytest.raises(ValueError):
        ops.operator_code(999)


def test_dtype_maps():
    assert ops.TENSOR_TYPE_TO_NUMPY[ops.TensorType.FLOAT32] == np.float32
    assert ops.TENSOR_TYPE_TO_NUMPY[ops.TensorType.INT8] == np.int8
    assert ops.TENSOR_TYPE_TO_NUMPY[ops.TensorType.STRING] == np.dtype(object)
    for tt, dt in ops.TENSOR_TYPE_TO_NUMPY.items():
        assert ops.tensor_type_of(dt) == tt
        assert ops.numpy_dtype_of(tt) == dt
    assert ops.tensor_type_of(np.float32) == ops.TensorType.FLOAT32
    assert ops.tensor_type_of("int64") == ops.TensorType.INT64
    assert ops.tensor_type_of(np.dtype(">i4")) == ops.TensorType.INT32
    assert ops.tensor_type_of(np.bytes_) == ops.TensorType.STRING
    assert ops.NUMPY_TO_TENSOR_TYPE[np.dtype(np.uint8)] == ops.TensorType.UINT8
    with pytest.raises(ValueError, match="INT4"):
        ops.numpy_dtype_of(ops.TensorType.INT4)
    with pytest.raises(ValueError):
        ops.tensor_type_of(np.dtype("datetime64[s]"))
    assert ops.TENSOR_TYPE_NAME[9] == "INT8" and ops.ACTIVATION_NAME[3] == "RELU6"
    assert ops.PADDING_NAME[0] == "SAME"
