"""Operator versions (kernels/versions.py and each record's ``version`` rule) against
TensorFlow: its converter's own files, and the cases of its op_version_test.cc."""

import importlib
from dataclasses import replace
from pathlib import Path

import pytest

from edgelite.interpreter.kernels import OPS
from edgelite.interpreter.kernels.versions import (OMITTED, OpSignature, T, TensorSig,
                                                   first_version, signature_of, with_defaults)
from edgelite.interpreter.loader.model import load_model
from tests.conftest import MODELS, sample_files

# Every op GetBuiltinOperatorVersion has a case for (tensorflow/compiler/mlir/lite/tools/
# versioning/op_version.cc); every other op is version 1 whatever its operands.
OP_VERSION_CASES = frozenset("""
    CONV_2D DEPTHWISE_CONV_2D EMBEDDING_LOOKUP FAKE_QUANT FULLY_CONNECTED GATHER SVDF SIGN MUL
    MAX_POOL_2D AVERAGE_POOL_2D TRANSPOSE TRANSPOSE_CONV LSTM SPLIT SPARSE_TO_DENSE SLICE
    UNPACK DEQUANTIZE QUANTIZE FLOOR_DIV FLOOR_MOD L2_NORMALIZATION ABS RELU STRIDED_SLICE
    REVERSE_V2 RESIZE_BILINEAR RESIZE_NEAREST_NEIGHBOR MAXIMUM MINIMUM PACK TILE SQUEEZE
    SPACE_TO_BATCH_ND BATCH_TO_SPACE_ND ADD SUB GATHER_ND DIV TANH LOGISTIC FILL EQUAL
    NOT_EQUAL LEAKY_RELU RANGE BATCH_MATMUL PAD PADV2 CONCATENATION SOFTMAX MEAN MIRROR_PAD
    REDUCE_MAX REDUCE_MIN RELU6 RSQRT RNN UNIDIRECTIONAL_SEQUENCE_RNN BIDIRECTIONAL_SEQUENCE_RNN
    BIDIRECTIONAL_SEQUENCE_LSTM UNIDIRECTIONAL_SEQUENCE_LSTM ARG_MAX ARG_MIN SELECT LESS
    GREATER_EQUAL SELECT_V2 SPACE_TO_DEPTH SPLIT_V SUM LOG_SOFTMAX GREATER LESS_EQUAL
    SQUARED_DIFFERENCE DEPTH_TO_SPACE TOPK_V2 EXP LOG REDUCE_PROD SQRT DYNAMIC_UPDATE_SLICE
    BROADCAST_TO CAST WHERE GELU
""".split())

TF_FILES = sample_files("*.tf*.tflite") + sorted((MODELS / "cache").glob("*.tflite"))


def test_an_op_has_a_rule_exactly_when_op_version_cc_has_a_case():
    for name, op in OPS.items():
        assert (op.version is not first_version) == (name in OP_VERSION_CASES), name


@pytest.mark.parametrize("path", TF_FILES, ids=lambda p: p.name)
def test_rules_give_the_versions_tensorflow_wrote(path):
    """Every operator of TF's own files: the version its record's rule computes from the
    operator's signature (read back with model.py) is the one TF wrote, and an op code
    carries the highest of its operators' versions (TF's UpdateOpVersion)."""
    model = load_model(path.read_bytes())
    checked = 0
    for sg in model.subgraphs:
        highest: dict[str, int] = {}
        for op in sg.operators:
            if op.name == "CUSTOM":  # no op_version.cc rule: the op's author sets it
                continue
            v = OPS[op.name].version(signature_of(op, sg))
            assert v <= op.version, f"{op.name} #{op.index}: rule {v}, file {op.version}"
            highest[op.name] = max(highest.get(op.name, 0), v)
            checked += 1
        written = {op.name: op.version for op in sg.operators if op.name != "CUSTOM"}
        assert highest == written
    assert checked > 0


def test_the_tensorflow_files_cover_raised_versions():
    """The check above is not only 1 == 1: TF's int8 and image files raise versions."""
    raised = set()
    for path in TF_FILES:
        for op in load_model(path.read_bytes()).subgraphs[0].operators:
            if op.version > 1:
                raised.add((op.name, op.version))
    assert {("CONV_2D", 3), ("DEPTHWISE_CONV_2D", 3), ("FULLY_CONNECTED", 4),
            ("DEQUANTIZE", 2), ("SOFTMAX", 2), ("MEAN", 2), ("AVERAGE_POOL_2D", 2),
            ("MAX_POOL_2D", 2), ("RESIZE_BILINEAR", 3), ("RESIZE_NEAREST_NEIGHBOR", 3),
            ("TRANSPOSE_CONV", 4)} <= raised


# ----------------------------------------------------------------- op_version_test.cc
# TF's unit tests of GetBuiltinOperatorVersion (tensorflow/compiler/mlir/lite/tools/
# versioning/op_version_test.cc) for the ops edgelite has, plus a case for every branch
# of the rules of ops it does not test (GATHER, SPLIT, pools, LOGISTIC, ...).

F32, F16, F64, BF16 = (TensorSig(t) for t in (T.FLOAT32, T.FLOAT16, T.FLOAT64, T.BFLOAT16))
I8, U8, I16, U16 = (TensorSig(t) for t in (T.INT8, T.UINT8, T.INT16, T.UINT16))
I32, U32, I64, I4, I2 = (TensorSig(t) for t in (T.INT32, T.UINT32, T.INT64, T.INT4, T.INT2))
C64, BOOL, STR = (TensorSig(t) for t in (T.COMPLEX64, T.BOOL, T.STRING))


def rank(t: TensorSig, n: int) -> TensorSig:
    return replace(t, shape=(4,) * n)


def quant(t: TensorSig, scale: float = 1.0, shape=(), scales: int = 1, axis: int = 0):
    return replace(t, shape=tuple(shape), scales=scales, scale=scale, quantized_dimension=axis)


CASES = []


def case(op, inputs, want, outputs=(), **options):
    sig = OpSignature(tuple(OMITTED if t is None else t for t in inputs), tuple(outputs),
                      with_defaults(op, options))
    CASES.append(pytest.param(op, sig, want, id=f"{op}-{len(CASES)}"))


def simple(op, int16=None):  # SimpleVersioningTest(Extended)
    case(op, [I8], 2)
    case(op, [U8], 1)
    if int16:
        case(op, [I16], int16)


for _op in ("LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "LOG_SOFTMAX", "TANH",
            "LOGISTIC", "SPACE_TO_DEPTH", "DEPTH_TO_SPACE", "SUM", "PAD", "PADV2", "ADD", "SUB",
            "SPLIT_V", "MAX_POOL_2D", "AVERAGE_POOL_2D", "ARG_MAX", "ARG_MIN"):
    simple(_op)
for _op in ("MEAN", "REDUCE_MIN", "REDUCE_MAX", "MIRROR_PAD", "RELU6", "SOFTMAX", "RSQRT"):
    simple(_op, int16=3)
for _op in ("TANH", "LOGISTIC", "MAX_POOL_2D", "AVERAGE_POOL_2D"):
    case(_op, [I16], 3, [I16])
    case(_op, [I16], 1, [I8])          # 16x8 needs int16 on both sides
for _op, _v in (("EQUAL", 5), ("NOT_EQUAL", 4)):
    case(_op, [F32], 1), case(_op, [I8], 2), case(_op, [STR], 3), case(_op, [I16], _v)
case("GREATER_EQUAL", [I16], 3), case("LESS", [I16], 3), case("LESS_EQUAL", [I16], 1)
case("PACK", [I8], 2), case("PACK", [I16], 3, [I16]), case("PACK", [U32], 4)
case("PACK", [I32], 1)
case("UNPACK", [I8], 2), case("UNPACK", [U8], 2), case("UNPACK", [I32], 1)
case("UNPACK", [BOOL], 3), case("UNPACK", [I16], 4, [I16]), case("UNPACK", [F16], 5)
case("RANGE", [I64], 2), case("RANGE", [I32], 1)
case("RELU", [I16], 3), case("RELU", [I8], 2), case("RELU", [U8], 2), case("RELU", [I32], 1)
case("STRIDED_SLICE", [rank(I8, 5)], 6, [I8], new_axis_mask=2)
case("STRIDED_SLICE", [rank(I8, 5)], 6, [I8], ellipsis_mask=1)
case("STRIDED_SLICE", [rank(I8, 5)], 4, [I8])
case("STRIDED_SLICE", [rank(I8, 4)], 2, [I8])
case("STRIDED_SLICE", [rank(U8, 4)], 1, [I8])
case("STRIDED_SLICE", [rank(U32, 4)], 7, [I8])
case("STRIDED_SLICE", [rank(U32, 4)], 8, [I8], offset=True)
case("STRIDED_SLICE", [STR], 5), case("STRIDED_SLICE", [BOOL], 3)
case("SLICE", [rank(I16, 5)], 5), case("SLICE", [rank(I16, 4)], 4)
case("SLICE", [rank(STR, 4)], 3), case("SLICE", [rank(I8, 4)], 2)
case("SLICE", [rank(U8, 4)], 1), case("SLICE", [rank(U32, 4)], 6), case("SLICE", [I4], 7)
case("L2_NORMALIZATION", [], 2, [I8]), case("L2_NORMALIZATION", [], 1, [U8])
for _op in ("MAXIMUM", "MINIMUM"):
    case(_op, [rank(I8, 4), rank(I8, 5)], 3)
    case(_op, [rank(I8, 5), rank(I8, 5)], 2)
    case(_op, [rank(I8, 4), rank(I8, 4)], 2)
    case(_op, [rank(U8, 4), rank(U8, 5)], 3)
    case(_op, [rank(U8, 4), rank(U8, 4)], 1)
    case(_op, [I16, I16], 4, [I16])
case("REDUCE_PROD", [I16], 2), case("REDUCE_PROD", [I8], 2), case("REDUCE_PROD", [F32], 1)
case("ADD", [quant(I16)], 3, [I16], pot_scale_int16=False)
case("ADD", [I16], 5, [I16], pot_scale_int16=False)
case("ADD", [quant(I16)], 1, [I16])            # power-of-two scales (the default): 1
case("ADD", [I64], 4), case("ADD", [F16], 6)
case("SUB", [I16], 5, [I16], pot_scale_int16=False)
case("SUB", [I64], 4, [I16], pot_scale_int16=False)
case("SUB", [rank(I8, 4), rank(I8, 5)], 3, [I8])
case("MUL", [I16], 7), case("MUL", [U32], 7), case("MUL", [C64], 6), case("MUL", [I64], 5)
case("MUL", [quant(I16)], 4), case("MUL", [F16], 8)
for _t, _multiplier, _want in ((U8, 0.5, 1), (I8, 0.5, 2), (I8, 2.0, 3)):  # SimpleMul...
    case("MUL", [quant(_t), quant(_t)], _want, [quant(_t, 1.0 / _multiplier)])
case("CONCATENATION", [F32], 1), case("CONCATENATION", [I8], 2)
case("CONCATENATION", [I16], 3), case("CONCATENATION", [U32], 4)
case("CONCATENATION", [I4], 5)
case("SELECT", [rank(U32, 5)] * 3, 4, [U32]), case("SELECT", [rank(U8, 5)] * 3, 3, [U8])
case("SELECT", [rank(I8, 4)] * 3, 2, [I8]), case("SELECT", [rank(F32, 4)] * 3, 1, [F32])
case("SELECT_V2", [rank(U32, 5)] * 3, 2, [U32]), case("SELECT_V2", [rank(I32, 5)] * 3, 1)
_SHUFFLED = 1
case("FULLY_CONNECTED", [U8, U8], 6, [U8], weights_format=_SHUFFLED)
case("FULLY_CONNECTED", [I8, I8], 6, [I8], weights_format=_SHUFFLED)
case("FULLY_CONNECTED", [I8, replace(I8, sparse=True)], 8, [I8])
case("FULLY_CONNECTED", [F32, I8, F32], 3, [F32])
case("FULLY_CONNECTED", [F32, I8, F32], 9, [F32], asymmetric_quantize_inputs=True)
case("FULLY_CONNECTED", [I16, I8], 11, [I16], quantized_bias_type=T.INT32)
case("FULLY_CONNECTED", [F32, quant(I8, shape=(3, 5), scales=3)], 12, [F32])
case("FULLY_CONNECTED", [I8, I8, I32], 4, [I8])
# The recurrent ops (op_version.cc; op_version_test.cc's LSTM / SequenceRNN cases):
# hybrid (float data, int8 weights) raises them, int8 full-integer does not.
_FULL, _BASIC = 0, 1
case("LSTM", [I16, I8, I8], 5, [I16], kernel_type=_FULL)
case("LSTM", [F32, I8, I8], 3, [F32], kernel_type=_FULL)
case("LSTM", [F32, I8, I8], 4, [F32], kernel_type=_FULL, asymmetric_quantize_inputs=True)
case("LSTM", [F32, F32, F32], 2, [F32], kernel_type=_BASIC)
case("LSTM", [I8, I8, I8], 1, [I8], kernel_type=_FULL)
case("UNIDIRECTIONAL_SEQUENCE_LSTM", [I16, I8, I8], 5, [I16])
case("UNIDIRECTIONAL_SEQUENCE_LSTM", [F32, F32, F32], 4, [F32],
     diagonal_recurrent_tensors=True)
case("UNIDIRECTIONAL_SEQUENCE_LSTM", [F32, I8, I8], 2, [F32])
case("UNIDIRECTIONAL_SEQUENCE_LSTM", [F32, I8, I8], 3, [F32], asymmetric_quantize_inputs=True)
case("UNIDIRECTIONAL_SEQUENCE_LSTM", [I8, I8, I8], 1, [I8])
case("UNIDIRECTIONAL_SEQUENCE_LSTM", [F32, F32, F32], 1, [F32])
for _op in ("RNN", "UNIDIRECTIONAL_SEQUENCE_RNN", "BIDIRECTIONAL_SEQUENCE_LSTM",
            "BIDIRECTIONAL_SEQUENCE_RNN"):
    case(_op, [F32, I8], 2, [F32])
    case(_op, [F32, I8], 3, [F32], asymmetric_quantize_inputs=True)
    case(_op, [F32, F32], 1, [F32])
# SVDF: full integer 3; hybrid 2, or 4 with asymmetric inputs (not 3)
case("SVDF", [I8, I8], 3, [I8])
case("SVDF", [F32, I8], 2, [F32])
case("SVDF", [F32, I8], 4, [F32], asymmetric_quantize_inputs=True)
case("SVDF", [F32, F32], 1, [F32])
case("FULLY_CONNECTED", [I8, I8, None], 4, [I8])    # an omitted bias is still an input
case("FULLY_CONNECTED", [F32, F32, None], 5, [F32], keep_num_dims=True)
case("FULLY_CONNECTED", [F32, F32, None], 2, [F32], weights_format=_SHUFFLED)
case("FULLY_CONNECTED", [I16, I16, I32], 7, [I16])
case("FULLY_CONNECTED", [I8, I4, I32], 10, [I8])
case("FULLY_CONNECTED", [I16, I4, I32], 13, [I16]), case("FULLY_CONNECTED", [F32, I2], 14)
case("DEQUANTIZE", [I16], 3), case("DEQUANTIZE", [F16], 3), case("DEQUANTIZE", [I8], 2)
case("DEQUANTIZE", [quant(I8, shape=(2, 3), scales=3, axis=1)], 5)
case("DEQUANTIZE", [quant(I8, shape=(3, 3), scales=3, axis=1)], 5)
case("DEQUANTIZE", [quant(I8, shape=(3, 2), scales=3, axis=1)], 2)  # not along its axis
case("DEQUANTIZE", [quant(I8, shape=(1, 3), scales=1)], 2)         # one scale: per tensor
case("DEQUANTIZE", [I2], 7), case("DEQUANTIZE", [I4], 6), case("DEQUANTIZE", [F32], 1)
case("QUANTIZE", [F32], 1, [I8]), case("QUANTIZE", [F32], 1, [U8])
case("QUANTIZE", [F32], 2, [I16])
case("QUANTIZE", [F32], 3, [quant(I16, shape=(4, 2), scales=2, axis=1)])
case("QUANTIZE", [F32], 4, [I4]), case("QUANTIZE", [I4], 4, [F32])
case("CONV_2D", [U8, U8], 1, [U8]), case("CONV_2D", [I8, I8], 3, [I8])
case("CONV_2D", [F32, I8], 2, [F32])
case("CONV_2D", [F32, quant(I8, shape=(6, 3, 3, 2), scales=6)], 5, [F32])
case("CONV_2D", [F32, quant(I8, shape=(1, 3, 3, 2), scales=1)], 5, [F32])  # 1 filter, 1 scale
case("CONV_2D", [F32, quant(I8, shape=(6, 3, 3, 2), scales=1)], 2, [F32])
case("CONV_2D", [replace(F32, shape=(1, 8, 8, 4)), replace(I8, shape=(6, 3, 3, 2))], 6, [F32])
case("CONV_2D", [I16, I8], 8, [I16], quantized_bias_type=T.INT32)
case("CONV_2D", [I16, I16], 4, [I16]), case("CONV_2D", [I8, I4], 7, [I8])
case("FLOOR_DIV", [I32], 1), case("FLOOR_DIV", [F32], 2), case("FLOOR_DIV", [I16], 3)
case("FLOOR_DIV", [I8], 3)
case("FLOOR_MOD", [I32], 1), case("FLOOR_MOD", [I16], 2), case("FLOOR_MOD", [I8], 2)
case("TRANSPOSE_CONV", [F32, U8], 1)
case("TRANSPOSE_CONV", [I32, I8, I8], 2)
case("TRANSPOSE_CONV", [I32, I8, I8, I32], 3)
case("TRANSPOSE_CONV", [I32, I8, I8, None], 2)
case("TRANSPOSE_CONV", [I32, I8, I8, None], 4, fused_activation_function=1)  # RELU
case("TRANSPOSE_CONV", [I16, I8], 5, [I16], quantized_bias_type=T.INT32)
case("DEPTHWISE_CONV_2D", [F32, I8], 4, [F32])
case("DEPTHWISE_CONV_2D", [F32, quant(I8, shape=(1, 3, 3, 8), scales=8)], 6, [F32])
case("DEPTHWISE_CONV_2D", [I8, I8], 3, [I8])
case("DEPTHWISE_CONV_2D", [F32, F32], 2, [F32], dilation_w_factor=2, dilation_h_factor=2)
case("DEPTHWISE_CONV_2D", [F32, F32], 2, [F32], dilation_h_factor=2)
case("DEPTHWISE_CONV_2D", [F32, F32], 1, [F32])
case("DEPTHWISE_CONV_2D", [I16, I16], 5, [I16]), case("DEPTHWISE_CONV_2D", [I8, I4], 7, [I8])
case("TILE", [I32], 1), case("TILE", [STR], 2), case("TILE", [I8], 3)
case("TRANSPOSE", [I16], 5), case("TRANSPOSE", [rank(BOOL, 5)], 4)
case("TRANSPOSE", [rank(BOOL, 4)], 3), case("TRANSPOSE", [I8], 2), case("TRANSPOSE", [U8], 1)
case("TRANSPOSE", [rank(F32, 6)], 6), case("TRANSPOSE", [rank(F32, 7)], 8)
case("TRANSPOSE", [BF16], 8), case("TRANSPOSE", [I4], 7)
case("DIV", [rank(U8, 5), rank(U8, 4)], 2), case("DIV", [rank(U8, 5), rank(U8, 5)], 1)
case("DIV", [rank(U8, 4), rank(U8, 4)], 1)
case("FILL", [I32, F16], 4), case("FILL", [I64, F16], 4), case("FILL", [I32, I8], 3)
case("FILL", [I64, I16], 3), case("FILL", [I32, BOOL], 2), case("FILL", [I32, STR], 2)
case("FILL", [I32, I32], 1)
for _op, _align in (("RESIZE_BILINEAR", 1), ("RESIZE_NEAREST_NEIGHBOR", 3)):
    case(_op, [F32, I32], 1, [F32])
    case(_op, [F32, I32], _align, [F32], align_corners=True)
    case(_op, [F32, I32], 3, [F32], half_pixel_centers=True)
    case(_op, [I8, I32], 2, [I8])
    case(_op, [I8, I32], 3, [I8], half_pixel_centers=True)
    case(_op, [I16, I32], 4, [I16])
case("ABS", [F32], 1, [F32]), case("ABS", [I8], 2, [I8]), case("ABS", [quant(I16)], 3, [I16])
case("ABS", [I16], 4, [I16]), case("ABS", [I32], 5, [I32])
case("SIGN", [F32], 1, [F32]), case("SIGN", [I32], 2, [I32])
case("BATCH_MATMUL", [F32, F32], 1, [F32]), case("BATCH_MATMUL", [I8, I8], 2, [I8])
case("BATCH_MATMUL", [I16, I8], 3, [I16]), case("BATCH_MATMUL", [F32, I8], 1, [F32])
case("BATCH_MATMUL", [F32, I8], 4, [F32], asymmetric_quantize_inputs=True)
case("SQUARED_DIFFERENCE", [F32, F32], 1, [F32]), case("SQUARED_DIFFERENCE", [I8, I8], 2, [I8])
case("BROADCAST_TO", [F32], 2, [F32]), case("BROADCAST_TO", [I8], 3, [I8])
case("BROADCAST_TO", [I16], 3, [I16])
case("GELU", [F32], 1), case("GELU", [I8], 2), case("GELU", [U8], 2)
for _op in ("EXP", "LOG", "SQRT"):
    case(_op, [F32], 1), case(_op, [I8], 2), case(_op, [I16], 2)
for _in, _out, _want in ((I2, I32, 8), (I32, I2, 8), (BF16, I32, 7), (I32, BF16, 7),
                         (I4, F32, 6), (F64, I32, 5), (I32, F64, 5), (F16, I32, 5),
                         (I32, F16, 5), (U16, I32, 4), (I32, U16, 4), (I8, I32, 3),
                         (I32, I8, 3), (U32, I32, 2), (I32, U32, 2), (I32, I32, 1)):
    case("CAST", [_in], _want, [_out])
case("GATHER", [I4, I32], 7), case("GATHER", [F32, I16], 6)
case("GATHER", [F32, I32], 5, batch_dims=1), case("GATHER", [I16, I32], 4)
case("GATHER", [BOOL, I32], 3), case("GATHER", [I8, I32], 2), case("GATHER", [F32, I32], 1)
case("SPLIT", [I32, I16], 4), case("SPLIT", [I32, I32], 3), case("SPLIT", [I32, I8], 2)
case("SPLIT", [I32, F32], 1)
case("LEAKY_RELU", [I16], 2), case("LEAKY_RELU", [I8], 1)
case("SQUEEZE", [STR], 2), case("SQUEEZE", [I8], 1)
case("PAD", [BOOL], 5), case("PAD", [rank(I8, 5)], 4), case("PAD", [I16], 3)
case("ARG_MAX", [BOOL], 3), case("SIGN", [I8], 1)


def _cases_of_the_kernel_tests() -> None:
    """An op's own test module may carry its version cases (``VERSION_CASES``: tuples of
    op, input TensorSigs, version[, output TensorSigs]), so adding an op touches its own
    tests only (docs/adding-an-op.md)."""
    for path in sorted(Path(__file__).parent.glob("test_*.py")):
        if path.stem != "test_versions":
            module = importlib.import_module(f"{__package__}.{path.stem}")
            for entry in getattr(module, "VERSION_CASES", ()):
                case(*entry)


_cases_of_the_kernel_tests()


@pytest.mark.parametrize("op, sig, want", CASES)
def test_rule_matches_op_version_test_cc(op, sig, want):
    assert OPS[op].version(sig) == want


def test_every_rule_has_cases():
    tested = {param.values[0] for param in CASES}
    assert {name for name, op in OPS.items() if op.version is not first_version} <= tested


# ------------------------------------------------------------------------ signatures

def _tf_file_operator(name: str):
    model = load_model((MODELS / "keras_cnn.tf_int8.tflite").read_bytes())
    sg = model.subgraphs[0]
    return next(op for op in sg.operators if op.name == name), sg


def test_signature_of_a_file_operator():
    op, sg = _tf_file_operator("CONV_2D")
    sig = signature_of(op, sg)
    x, w, bias = sig.inputs
    assert (x.type, w.type, bias.type, sig.output(0).type) == (T.INT8, T.INT8, T.INT32, T.INT8)
    assert w.shape == sg.tensors[op.inputs[1]].shape and w.scales == w.shape[0] > 1
    assert w.scales_along(0) and not w.scales_along(3)
    assert x.scales == 1 and x.scale == pytest.approx(sg.tensors[op.inputs[0]].quantization
                                                       .scale[0])
    # options come with the schema's defaults filled in
    assert sig.option("dilation_w_factor") == 1 and "quantized_bias_type" in sig.options


def test_signature_reads_an_omitted_input_and_absent_options():
    op, sg = _tf_file_operator("FULLY_CONNECTED")
    op = replace(op, inputs=op.inputs[:2] + (-1,), options={})
    sig = signature_of(op, sg)
    assert sig.inputs[2] is OMITTED and sig.input(7) is OMITTED and len(sig.inputs) == 3
    assert sig.option("keep_num_dims") is False and sig.option("weights_format") == 0
    assert OPS["FULLY_CONNECTED"].version(sig) == 4
    assert OPS["FULLY_CONNECTED"].version(replace(sig, inputs=sig.inputs[:2])) == 6
