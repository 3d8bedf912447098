"""converter/micro_ops.py: what TFLite Micro runs, checked in TFLM itself
(``tests.conftest.micro_module()``), and ``convert --target micro``."""

import re

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, Target, convert_detailed
from edgelite.converter.micro_ops import (CUSTOM_METHOD, FLOAT_ONLY, NO_INT16,
                                          RESOLVER_METHOD, micro_problems)
from edgelite.converter.quantize import IOType, QuantizeOptions, QuantMode
from edgelite.converter.runner import as_input
from edgelite.interpreter import Interpreter
from edgelite.errors import EdgeliteError, UnsupportedOpError
from edgelite.interpreter.loader.model import load_model
from edgelite.schema import generated_tflite as tfl
from edgelite.schema.ops import BUILTIN_CODE
from edgelite.schema.model_io import pack_model
from tests.conftest import MODELS, micro_module
from tests.interpreter.tflite_builder import ModelBuilder

DIGITS = np.load(MODELS / "digits_calib.npy")
ARENA = 4 << 20  # ample for every file here: this test is about ops, not the arena


def tflm_run(data: bytes, samples: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    """Every output of TFLM's interpreter for each sample (a list of stored input values)."""
    it = micro_module().Interpreter.from_bytes(data, arena_size=ARENA)
    outs = []
    for sample in samples:
        for i, x in enumerate(sample):
            it.set_input(x, i)
        it.invoke()
        outs.append([it.get_output(i).copy()
                     for i in range(len(load_model(data).subgraphs[0].outputs))])
        it.reset()
    return outs


def zeros_for(data: bytes) -> list[np.ndarray]:
    interp = Interpreter(model_content=data)
    return [np.zeros(d["shape"], d["dtype"]) for d in interp.get_input_details()]


def tflm_runs(data: bytes) -> bool:
    try:
        tflm_run(data, [zeros_for(data)])
    except Exception:  # TFLM reports any failure as a bare RuntimeError
        return False
    return True


def test_tables_name_schema_ops_and_tflm_methods():
    # 100: every builtin Add method of micro_mutable_op_resolver.h (tflite-micro, 2026-08)
    assert len(RESOLVER_METHOD) == 100 and set(RESOLVER_METHOD) <= set(BUILTIN_CODE)
    assert all(re.fullmatch(r"Add[A-Z][A-Za-z0-9]*", m) for m in
               [*RESOLVER_METHOD.values(), *CUSTOM_METHOD.values()])
    assert RESOLVER_METHOD["CONV_2D"] == "AddConv2D" and \
        RESOLVER_METHOD["UNIDIRECTIONAL_SEQUENCE_LSTM"] == "AddUnidirectionalSequenceLSTM"
    assert NO_INT16 >= FLOAT_ONLY and set(NO_INT16) <= set(RESOLVER_METHOD)


@pytest.mark.parametrize("file_name, problems", [
    ("keras_cnn.tf_int8.tflite", []),
    ("keras_cnn.tf_int8_io.tflite", []),
    ("custom_ssd_postprocess.tf.tflite", []),      # AddDetectionPostprocess
    # RESHAPE moves uint8 bytes in TFLM (a memcpy): not a problem
    ("tf1_cnn.tf_uint8.tflite", [("CONV_2D", "uint8"), ("CONV_2D", "uint8"),
                                 ("FULLY_CONNECTED", "uint8"), ("MAX_POOL_2D", "uint8"),
                                 ("SOFTMAX", "uint8")]),
    ("keras_cnn.tf_uint8.tflite", [(op, "uint8") for op in (
        "CONV_2D", "DEPTHWISE_CONV_2D", "CONV_2D", "AVERAGE_POOL_2D", "MEAN",
        "FULLY_CONNECTED", "SOFTMAX")]),
    ("op_zoo_math.tf.tflite", [("POW", "no entry"), ("REDUCE_PROD", "no entry")]),
    ("sparse_mlp.tf_f16.tflite", [("DEQUANTIZE", "float16")] * 3),
    ("hybrid_tconv.tf_dr.tflite", [("TRANSPOSE_CONV", "hybrid")] * 3),
    ("int16_cnn.tflite", [("RESIZE_BILINEAR", "int16")]),
    ("int16_audio.tflite", []),
    ("shape_audio.tf_int8.tflite", [("PAD", "constant")]),      # computed paddings
    ("rnn_convlstm.tf_float.tflite", [("STRIDED_SLICE", "-D")]),  # a 5-D input
    # a QAT graph as float: TF writes each FakeQuant as QUANTIZE float32 -> uint8 ->
    # DEQUANTIZE; TFLM's QUANTIZE prepares float32 -> uint8 but refuses it at invoke (and
    # this file's per-channel weight ones at prepare)
    ("misc_qat.tf.tflite", [("QUANTIZE", "uint8")] * 6),
    ("sparse_cnn.tf_f32.tflite", [("DENSIFY", "no entry")] * 4),
])
def test_problems_agree_with_tflm(file_name, problems):
    data = (MODELS / file_name).read_bytes()
    found = micro_problems(load_model(data))
    kinds = ("float16", "hybrid", "no entry", "int16", "uint8", "constant", "-D",
             "per-channel")
    assert sorted((p.op, next(k for k in kinds if k in p.reason)) for p in found) \
        == sorted(problems)
    assert tflm_runs(data) == (not problems)


def test_hybrid_lstm_is_refused_tflm_runs_it_into_nan():
    # TFLM's LSTM has no hybrid path: it runs the int8 weights as if they were float and
    # returns NaN / garbage, so a file it "runs" is still refused here
    data = (MODELS / "hybrid_rnn_lstm.tf_dr.tflite").read_bytes()
    assert [p.op for p in micro_problems(load_model(data))] == ["UNIDIRECTIONAL_SEQUENCE_LSTM"]
    x = np.random.default_rng(0).standard_normal(zeros_for(data)[0].shape).astype(np.float32)
    interp = Interpreter(model_content=data)
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    ours = interp.get_tensor(interp.get_output_details()[0]["index"])
    assert np.isfinite(ours).all()
    assert not np.allclose(tflm_run(data, [[x]])[0][0], ours, atol=0.01)


def _dense_outputs(data: bytes, x: np.ndarray) -> np.ndarray:
    interp = Interpreter(model_content=data, kernels="reference")
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    return interp.get_tensor(interp.get_output_details()[0]["index"])


@pytest.mark.parametrize("file_name", ["sparse_mlp.tf_f32.tflite",
                                       "sparse_mlp16.tf_int8.tflite"])
def test_sparse_weights_are_refused_tflm_runs_them_into_garbage(file_name):
    # TFLM has no sparse tensors: its FULLY_CONNECTED reads the block-sparse weights'
    # compressed values as the dense matrix and returns something else, without an error
    data = (MODELS / file_name).read_bytes()
    model = load_model(data)
    found = micro_problems(model)
    sparse = [t.name for t in model.subgraphs[0].tensors if t.is_sparse]
    assert len(sparse) == 3 and [p.op for p in found] == ["FULLY_CONNECTED"] * 3
    assert all(p.registrable and "reads sparse tensor" in p.reason and "wrong results"
               in p.reason for p in found)
    x = zeros_for(data)[0]
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(x.shape).astype(x.dtype) if x.dtype.kind == "f" else
         rng.integers(-100, 100, x.shape).astype(x.dtype))
    ours = _dense_outputs(data, x)  # LiteRT's reference arithmetic on the dense weights
    tflm = tflm_run(data, [[x]])[0][0]
    assert tflm.shape == ours.shape and np.ptp(ours.astype(float)) > 0
    # nowhere near: NaN (the float file) or values off by more than a tenth of the range
    assert not np.allclose(tflm.astype(float), ours.astype(float),
                           atol=0.1 * np.ptp(ours.astype(float)))


def test_per_channel_quantize_is_refused_as_tflm_does():
    # quantize_common.cc: TF_LITE_ENSURE(affine_quantization->scale->size == 1)
    b = ModelBuilder()
    x = b.tensor("x", (1, 4, 3))
    y = b.tensor("y", (1, 4, 3), np.int8, scale=[0.1, 0.2, 0.3], zero_point=[0, 0, 0],
                 quantized_dimension=2)
    b.op("QUANTIZE", [x], [y])
    data = b.build([x], [y])
    assert [p.line() for p in micro_problems(load_model(data))] == [
        "QUANTIZE (subgraph 0 op 0): per-channel output parameters (TFLM's QUANTIZE writes "
        "one scale)"]
    assert not tflm_runs(data)


def _with_versions(data: bytes, version: int) -> bytes:
    model = tfl.ModelT.InitFromPackedBuf(data, 0)
    for code in model.operatorCodes:
        code.version = version
    return pack_model(model)


@pytest.mark.parametrize("version", [1, 200])
def test_tflm_ignores_operator_versions(version):
    # micro_op_resolver.cc looks ops up by code only: any version runs, with equal results
    data = (MODELS / "keras_cnn.tf_int8_io.tflite").read_bytes()
    rng = np.random.default_rng(version)
    shape = Interpreter(model_content=data).get_input_details()[0]["shape"]
    samples = [[rng.integers(-128, 128, shape, dtype=np.int8)] for _ in range(3)]
    expected = tflm_run(data, samples)
    got = tflm_run(_with_versions(data, version), samples)
    assert {c.version for c in tfl.ModelT.InitFromPackedBuf(
        _with_versions(data, version), 0).operatorCodes} == {version}
    for e, g in zip(expected, got):
        np.testing.assert_array_equal(e[0], g[0])


def micro_convert(graphdef: str, **quant) -> bytes:
    q = QuantizeOptions(calib=str(MODELS / "digits_calib.npy"), calib_samples=16, **quant) \
        if quant else None
    return convert_detailed(MODELS / graphdef,
                            ConvertOptions(quantize=q, target=Target.MICRO)).model


@pytest.mark.parametrize("graphdef", ["tf1_cnn.pb", "mobilenet_v2_digits.pb"])
@pytest.mark.parametrize("io_type", [IOType.INT8, IOType.UINT8])
def test_converted_for_micro_runs_in_tflm(graphdef, io_type):
    data = micro_convert(graphdef, mode=QuantMode.INT8, io_type=io_type)
    interp = Interpreter(model_content=data, kernels="reference")
    interp.allocate_tensors()
    detail = interp.get_input_details()[0]
    samples = [[as_input(x.reshape(detail["shape"]), detail)] for x in DIGITS[:4]]
    assert samples[0][0].dtype == np.dtype(io_type.value)
    for sample, tflm in zip(samples, tflm_run(data, samples)):
        interp.set_tensor(detail["index"], sample[0])
        interp.invoke()
        ours = interp.get_tensor(interp.get_output_details()[0]["index"])
        assert tflm[0].dtype == ours.dtype == np.dtype(io_type.value)
        # TFLM's FULLY_CONNECTED rounds differently from LiteRT's reference kernels (issue
        # 15): a few LSB at most, never a different model
        assert np.abs(tflm[0].astype(int) - ours.astype(int)).max() <= 8


def test_uint8_is_refused_before_converting_with_the_alternative(tmp_path):
    with pytest.raises(EdgeliteError) as e:
        convert_detailed(tmp_path / "not_read.pb", ConvertOptions(
            quantize=QuantizeOptions(mode=QuantMode.UINT8), target=Target.MICRO))
    assert str(e.value) == ("--target micro: --quantize uint8 cannot run: TFLite Micro has no "
                            "uint8 kernels (it dropped them); use --quantize int8 --io-type "
                            "uint8 for uint8 inputs and outputs (or write it anyway with "
                            "--force)")


def test_forced_uint8_is_written_with_every_problem_as_a_warning():
    q = QuantizeOptions(mode=QuantMode.UINT8, calib=str(MODELS / "digits_calib.npy"),
                        calib_samples=8)
    result = convert_detailed(MODELS / "tf1_cnn.pb", ConvertOptions(
        quantize=q, target=Target.MICRO, force=True))
    # every op but the ones TFLM runs on uint8: RESHAPE (bytes), the output's DEQUANTIZE
    ops = [op.name for op in load_model(result.model).subgraphs[0].operators]
    refused = [w.split(" ")[0] for w in result.warnings]
    assert refused == [op for op in ops if op not in ("RESHAPE", "DEQUANTIZE")]
    assert refused[0] == "QUANTIZE" and "not float32 -> uint8" in result.warnings[0]
    assert all("TFLite Micro has no uint8 kernel for" in w for w in result.warnings[1:])
    assert not tflm_runs(result.model)
    # the same conversion unforced: no file, the same lines in the error
    with pytest.raises(EdgeliteError, match="--quantize uint8 cannot run"):
        convert_detailed(MODELS / "tf1_cnn.pb", ConvertOptions(quantize=q,
                                                               target=Target.MICRO))


@pytest.mark.parametrize("graphdef, quant, lines", [
    ("op_zoo_math.pb", {}, [r"POW \(subgraph 0 op \d+\): TFLM's op resolver has no entry for it",
                            r"REDUCE_PROD \(subgraph 0 op \d+\): TFLM's op resolver has no "
                            "entry for it"]),
    ("tf1_cnn.pb", {"mode": QuantMode.FLOAT16},
     [r"DEQUANTIZE \(subgraph 0 op \d+\): DEQUANTIZE of float16 \(TFLM dequantizes int8, "
      r"int16, uint8 only\)"] * 5),
])
def test_everything_tflm_lacks_in_one_error(graphdef, quant, lines):
    with pytest.raises(UnsupportedOpError) as e:
        micro_convert(graphdef, **quant)
    got = str(e.value).splitlines()
    assert got[0] == f"--target micro: TensorFlow Lite Micro cannot run {len(lines)} op(s):"
    assert len(got) == len(lines) + 2
    for line, pattern in zip(got[1:], lines):
        assert re.fullmatch(pattern, line), line
    assert got[-1] == ("keep those ops out of the graph, or quantize fully (--quantize "
                       "int8); or write it anyway with --force")
    forced = convert_detailed(MODELS / graphdef, ConvertOptions(
        quantize=QuantizeOptions(calib=str(MODELS / "digits_calib.npy"), calib_samples=16,
                                 **quant) if quant else None, target=Target.MICRO, force=True))
    assert list(forced.warnings) == got[1:-1]
    # the default target writes the same graph, unchecked; TFLM refuses it
    q = QuantizeOptions(**quant) if quant else None
    assert not tflm_runs(convert_detailed(MODELS / graphdef, ConvertOptions(quantize=q)).model)


def test_dynamic_range_weights_pass_tflm_dequantizes_them():
    # edgelite's --quantize dynamic writes int8 weights + DEQUANTIZE (int8 -> float32, which
    # TFLM has) and float ops: no hybrid kernel is needed, and TFLM runs it
    data = micro_convert("tf1_cnn.pb", mode=QuantMode.DYNAMIC)
    assert {op.name for op in load_model(data).subgraphs[0].operators} >= {"DEQUANTIZE"}
    assert tflm_runs(data)


def _int8_table_model(op_name: str) -> bytes:
    """``op_name`` with a float runtime input and an int8 constant (scale 0.5): the hybrid
    pattern. EMBEDDING_LOOKUP: int32 ids into an int8 table; FULLY_CONNECTED: int8 weights."""
    b = ModelBuilder()
    table = np.arange(-12, 12, dtype=np.int8).reshape(4, 6)
    w = b.tensor("table", table.shape, np.int8, data=table, scale=[0.5], zero_point=[0])
    out = b.tensor("out", (2, 6) if op_name == "EMBEDDING_LOOKUP" else (1, 4))
    if op_name == "EMBEDDING_LOOKUP":
        x = b.tensor("ids", (2,), np.int32)
        b.op(op_name, [x, w], [out])
    else:
        x = b.tensor("x", (1, 6))
        b.op(op_name, [x, w, -1], [out])
    return b.build([x], [out])


def test_hybrid_rule_agrees_with_tflm():
    # TFLM's only hybrid kernel: EMBEDDING_LOOKUP of an int8 table (real = 0.5 * q)
    lookup = _int8_table_model("EMBEDDING_LOOKUP")
    assert micro_problems(load_model(lookup)) == []
    out = tflm_run(lookup, [[np.array([3, 1], np.int32)]])[0][0]
    np.testing.assert_array_equal(out, 0.5 * np.arange(-12, 12).reshape(4, 6)[[3, 1]])
    fc = _int8_table_model("FULLY_CONNECTED")
    assert [p.reason.split(":")[0] for p in micro_problems(load_model(fc))] == [
        "float activations with int8 weights (hybrid)"]
    assert not tflm_runs(fc)
