"""interpreter/micro/uint8.py: ``Interpreter(kernels="micro")`` refuses uint8 exactly where
TensorFlow Lite Micro does (the tflite-micro runtime is the oracle), at allocate_tensors(),
naming the op, and runs -- bit-exact with TFLM -- what TFLM runs: uint8 <-> int8 QUANTIZE at
the edges of an int8 model, DEQUANTIZE, and the ops that only move bytes.

The same rule refuses those ops in ``convert --target micro`` / ``export``
(converter/micro_ops.py): each one-op case checks that too.
"""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.micro_ops import micro_problems
from edgelite.converter.quantize import IOType, QuantizeOptions, QuantMode
from edgelite.interpreter import Interpreter, UnsupportedOpError
from edgelite.interpreter.loader.model import load_model
from tests.conftest import MODELS
from tests.support import assert_micro_exact, micro_refusal

from ..tflite_builder import ModelBuilder

U8, I8, I16, F32 = np.uint8, np.int8, np.int16, np.float32
SHAPE = (1, 4, 4, 2)
ZERO = {U8: 128, I8: -3, I16: 0}  # zero points of the quantized types


def _tensor(b, name, shape, dtype, scale=0.1):
    if dtype in ZERO:
        return b.tensor(name, shape, dtype, scale=scale, zero_point=ZERO[dtype])
    return b.tensor(name, shape, dtype)


def one_op(op, in_dtype, out_dtype, *, out_shape=SHAPE, extra=(), out_scale=0.2,
           **options):
    """``op`` from a runtime input of ``in_dtype`` (and ``extra(builder)`` constants) to one
    output; (model, feeds)."""
    b = ModelBuilder()
    x = _tensor(b, "x", SHAPE, in_dtype)
    inputs = [x] + [make(b) for make in extra]
    y = _tensor(b, "y", out_shape, out_dtype, out_scale)
    b.op(op, inputs, [y], **options)
    rng = np.random.default_rng(0)
    feed = (rng.standard_normal(SHAPE).astype(F32) if in_dtype == F32 else
            rng.integers(np.iinfo(in_dtype).min, np.iinfo(in_dtype).max, SHAPE,
                         endpoint=True).astype(in_dtype))
    return b.build([x], [y]), [feed]


def _const(name, value, dtype=np.int32):
    return lambda b: b.const(name, np.array(value, dtype))


def _uint8_const(name, shape):
    data = np.arange(np.prod(shape)).reshape(shape).astype(U8)
    return lambda b: b.tensor(name, shape, U8, data=data, scale=0.05, zero_point=128)


# (id, op, input type, output type, options): TFLM runs these
RUNS = [
    ("quantize_uint8_to_int8", "QUANTIZE", U8, I8, {}),
    ("quantize_int8_to_uint8", "QUANTIZE", I8, U8, {}),
    ("dequantize_uint8", "DEQUANTIZE", U8, F32, {}),
    ("reshape", "RESHAPE", U8, U8, dict(out_shape=(1, 32), extra=[_const("s", [1, 32])],
                                        out_scale=0.1)),
    ("squeeze", "SQUEEZE", U8, U8, dict(out_shape=(4, 4, 2), squeeze_dims=[0],
                                        out_scale=0.1)),
    ("reverse_v2", "REVERSE_V2", U8, U8, dict(extra=[_const("a", [1])], out_scale=0.1)),
    ("shape", "SHAPE", U8, np.int32, dict(out_shape=(4,))),
]
# ... and refuses these: in Prepare or on the first invoke
REFUSED = [
    ("quantize_float_to_uint8", "QUANTIZE", F32, U8, {}),
    ("quantize_uint8_to_uint8", "QUANTIZE", U8, U8, {}),
    ("quantize_int16_to_uint8", "QUANTIZE", I16, U8, {}),
    ("quantize_uint8_to_int16", "QUANTIZE", U8, I16, {}),
    ("relu", "RELU", U8, U8, {}),
    ("logistic", "LOGISTIC", U8, U8, dict(out_scale=1 / 256)),
    ("add", "ADD", U8, U8, dict(extra=[_uint8_const("c", SHAPE)])),
    ("max_pool", "MAX_POOL_2D", U8, U8, dict(padding="VALID", stride_w=1, stride_h=1,
                                             filter_width=2, filter_height=2,
                                             out_shape=(1, 3, 3, 2), out_scale=0.1)),
    ("conv", "CONV_2D", U8, U8, dict(extra=[_uint8_const("w", (3, 1, 1, 2))],
                                     out_shape=(1, 4, 4, 3), padding="SAME", stride_w=1,
                                     stride_h=1)),
    ("fully_connected", "FULLY_CONNECTED", U8, U8, dict(
        extra=[_uint8_const("w", (3, 2))], out_shape=(1, 4, 4, 3), keep_num_dims=True)),
    ("concatenation", "CONCATENATION", U8, U8, dict(out_scale=0.1, axis=3)),
    ("expand_dims", "EXPAND_DIMS", U8, U8, dict(extra=[_const("a", [0])],
                                                out_shape=(1,) + SHAPE, out_scale=0.1)),
    ("transpose", "TRANSPOSE", U8, U8, dict(extra=[_const("p", [0, 2, 1, 3])],
                                            out_scale=0.1)),
    ("cast", "CAST", U8, F32, {}),
]


def _case(case):
    name, op, in_dtype, out_dtype, options = case
    return one_op(op, in_dtype, out_dtype, **options)


@pytest.mark.parametrize("case", RUNS, ids=[c[0] for c in RUNS])
def test_what_tflm_runs_on_uint8_runs_bit_exact(case):
    model, feeds = _case(case)
    assert micro_refusal(model, feeds) is None
    assert micro_problems(load_model(model)) == []
    assert_micro_exact(model, feeds)


@pytest.mark.parametrize("case", REFUSED, ids=[c[0] for c in REFUSED])
def test_what_tflm_refuses_on_uint8_is_refused_at_allocate(case):
    name, op = case[:2]
    model, feeds = _case(case)
    refusal = micro_refusal(model, feeds)
    assert refusal is not None and "failed to" in refusal, refusal
    interp = Interpreter(model_content=model, kernels="micro")
    with pytest.raises(UnsupportedOpError) as e:
        interp.allocate_tensors()
    line = str(e.value)
    assert "\n" not in line and line.startswith(f"operator 0 ({op}, output 'y'): TFLite Micro")
    assert "uint8" in line and line.endswith(
        "[micro uint8: convert with --quantize int8 --io-type uint8 (uint8 only at the "
        "inputs and outputs), or run this file with kernels='reference' (LiteRT's uint8 "
        "kernels)]")
    assert [p.op for p in micro_problems(load_model(model))] == [op]


@pytest.mark.parametrize("file_name, ops", [
    ("keras_cnn.tf_uint8.tflite", ["CONV_2D", "DEPTHWISE_CONV_2D", "CONV_2D",
                                   "AVERAGE_POOL_2D", "MEAN", "FULLY_CONNECTED", "SOFTMAX"]),
    # the RESHAPE between its convolutions and FULLY_CONNECTED moves bytes: TFLM takes it
    ("tf1_cnn.tf_uint8.tflite", ["CONV_2D", "MAX_POOL_2D", "CONV_2D", "FULLY_CONNECTED",
                                 "SOFTMAX"]),
])
def test_tensorflow_uint8_files_are_refused_as_tflm_refuses_them(file_name, ops):
    model = (MODELS / file_name).read_bytes()
    # TFLM stops at the first convolution: conv_common.cc's type check
    assert "Hybrid models are not supported on TFLite Micro" in micro_refusal(model)
    interp = Interpreter(model_content=model, kernels="micro")
    with pytest.raises(UnsupportedOpError) as e:
        interp.allocate_tensors()
    lines = str(e.value).splitlines()
    assert lines[0] == (f"edgelite's interpreter cannot run this model ({len(ops)} "
                        "unsupported item(s); micro uint8):")
    assert [line.split("(")[1].split(",")[0] for line in lines[1:]] == ops
    assert all("TFLite Micro has no uint8 kernel for" in line for line in lines[1:])
    # LiteRT's kernel sets have uint8 kernels: the file runs there
    reference = Interpreter(model_content=model, kernels="reference")
    reference.allocate_tensors()
    reference.invoke()


@pytest.mark.parametrize("quantize, io, runs", [
    (QuantMode.UINT8, IOType.FLOAT, False),   # uint8 inside: refused by both
    (QuantMode.INT8, IOType.UINT8, True),     # int8 inside, uint8 at the edges: runs
])
def test_edgelite_files_uint8_inside_or_at_the_edges(quantize, io, runs):
    options = QuantizeOptions(mode=quantize, io_type=io, calib_samples=8,
                              calib=str(MODELS / "digits_calib.npy"))
    model = convert_detailed(MODELS / "tf1_cnn.pb", ConvertOptions(quantize=options)).model
    interp = Interpreter(model_content=model, kernels="reference")
    interp.allocate_tensors()
    detail = interp.get_input_details()[0]
    digits = np.load(MODELS / "digits_test.npz")["x"][:4]
    feeds = [[x.reshape(detail["shape"]).astype(detail["dtype"])] if io == IOType.FLOAT else
             [np.clip(np.round(x / detail["quantization"][0]) + detail["quantization"][1],
                      0, 255).astype(U8).reshape(detail["shape"])] for x in digits]
    if runs:
        assert micro_refusal(model, feeds[0]) is None
        for sample in feeds:
            assert_micro_exact(model, sample)
        return
    # edgelite's float-input uint8 file starts with QUANTIZE float32 -> uint8, which TFLM
    # prepares (it would fail on the first invoke), then its first convolution fails to
    # prepare; edgelite names both
    assert "Node CONV_2D (number 1) failed to prepare" in micro_refusal(model, feeds[0])
    with pytest.raises(UnsupportedOpError) as e:
        Interpreter(model_content=model, kernels="micro").allocate_tensors()
    lines = str(e.value).splitlines()
    assert "operator 0 (QUANTIZE," in lines[1] and \
        "not float32 -> uint8 (quantize_common.cc)" in lines[1]
    assert "operator 1 (CONV_2D," in lines[2] and "no uint8 kernel for CONV_2D" in lines[2]


def test_an_op_prepared_at_invoke_is_refused_at_allocate_too():
    # a uint8 TRANSPOSE whose permutation is a runtime input: edgelite prepares it at invoke
    # (dynamic.py), but kernels="micro" refuses it in allocate_tensors() already
    b = ModelBuilder()
    x = _tensor(b, "x", SHAPE, U8)
    perm = b.tensor("perm", (4,), np.int32)
    y = _tensor(b, "y", SHAPE, U8)
    b.op("TRANSPOSE", [x, perm], [y])
    model = b.build([x, perm], [y])
    feeds = [np.zeros(SHAPE, U8), np.array([0, 2, 1, 3], np.int32)]
    assert micro_refusal(model, feeds) is not None
    reference = Interpreter(model_content=model, kernels="reference")
    reference.allocate_tensors()  # LiteRT's kernel set runs it
    with pytest.raises(UnsupportedOpError, match=r"^operator 0 \(TRANSPOSE, output 'y'\): "
                       "TFLite Micro has no uint8 kernel for TRANSPOSE"):
        Interpreter(model_content=model, kernels="micro").allocate_tensors()
