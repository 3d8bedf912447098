"""edgelite.TFLiteConverter (api/tflite_converter.py) used as TF's converter is: each setting
gives the same bytes as the `edgelite convert` command line, and models that run as TF's."""

from __future__ import annotations

import numpy as np
import pytest

import edgelite
from edgelite import Optimize, OpsSet, TFLiteConverter
from tests.support.cli import invoke
from tests.conftest import MODELS

CNN = MODELS / "tf1_cnn.pb"
TWO = MODELS / "savedmodel" / "sm_module_two"
CALIB = np.load(MODELS / "digits_calib.npy")[:16]


def cli_bytes(tmp_path, *args) -> bytes:
    out = tmp_path / "cli.tflite"
    result = invoke("convert", *args, "-o", out)
    assert result.exit_code == 0, result.output
    return out.read_bytes()


def calib_file(tmp_path) -> str:
    path = tmp_path / "calib.npy"
    np.save(path, CALIB)
    return str(path)


def int8_converter(**attrs) -> TFLiteConverter:
    c = TFLiteConverter.from_frozen_graph(CNN, ["input"], ["probs"])
    c.optimizations = [Optimize.DEFAULT]
    c.representative_dataset = lambda: ([x[None]] for x in CALIB)  # TF's usual generator
    for k, v in attrs.items():
        setattr(c, k, v)
    return c


def test_saved_model_two_signatures_in_one_file(tmp_path, litert):
    model = TFLiteConverter.from_saved_model(TWO, ["serving_default", "encode"]).convert()
    assert model == cli_bytes(tmp_path, TWO, "--signature", "serving_default",
                              "--signature", "encode")
    golden = np.load(MODELS / "savedmodel" / "sm_module_two.golden.npz")
    expected = {"serving_default": {"inputs": ["x"], "outputs": ["y"]},
                "encode": {"inputs": ["bias", "ids"], "outputs": ["code", "norm"]}}
    for interp in (edgelite.Interpreter(model_content=model),
                   litert.Interpreter(model_content=model)):
        assert interp.get_signature_list() == expected
        for key in expected:
            ins = {k.split("/")[-1]: golden[k] for k in golden.files
                   if k.startswith(f"{key}/in/")}
            got = interp.get_signature_runner(key)(**ins)
            for name, value in got.items():
                np.testing.assert_allclose(value, golden[f"{key}/out/{name}"], atol=1e-5)
    # the default is serving_default alone, as TF's
    single = edgelite.Interpreter(model_content=TFLiteConverter.from_saved_model(TWO).convert())
    assert list(single.get_signature_list()) == ["serving_default"]


def test_repeated_signature_is_refused():
    with pytest.raises(edgelite.GraphError, match="'encode' is asked for twice"):
        TFLiteConverter.from_saved_model(TWO, ["encode", "encode"]).convert()


def test_frozen_graph_float(tmp_path):
    c = TFLiteConverter.from_frozen_graph(CNN, ["input"], ["probs"], {"input": [None, 8, 8, 1]})
    model = c.convert()
    assert model == cli_bytes(tmp_path, CNN, "--inputs", "input", "--outputs", "probs",
                              "--input-shape", "input:1,8,8,1")
    golden = np.load(MODELS / "tf1_cnn.golden.npz")
    interp = edgelite.Interpreter(model_content=model)
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], golden["input"][:1])
    interp.invoke()
    got = interp.get_tensor(interp.get_output_details()[0]["index"])
    np.testing.assert_allclose(got, golden["output"][:1], atol=1e-5)


def test_generator_calibration_int8_in_float_out(tmp_path, litert):
    model = int8_converter(inference_input_type=np.int8).convert()
    assert model == cli_bytes(tmp_path, CNN, "--quantize", "int8", "--io-type", "int8",
                              "--output-type", "float", "--calib", calib_file(tmp_path))
    # the same through tflite_convert's spelling
    assert model == cli_bytes(tmp_path, "--graph_def_file", CNN, "--input_arrays", "input",
                              "--output_arrays", "probs", "--inference_type", "INT8",
                              "--inference_input_type", "INT8", "--inference_output_type",
                              "FLOAT", "--calib", calib_file(tmp_path))
    ours = edgelite.Interpreter(model_content=model)
    theirs = litert.Interpreter(model_content=model)
    x = np.random.default_rng(0).integers(-128, 128, (1, 8, 8, 1), dtype=np.int8)
    outs = []
    for interp in (ours, theirs):
        interp.allocate_tensors()
        assert interp.get_input_details()[0]["dtype"] == np.int8
        assert interp.get_output_details()[0]["dtype"] == np.float32
        interp.set_tensor(interp.get_input_details()[0]["index"], x)
        interp.invoke()
        outs.append(interp.get_tensor(interp.get_output_details()[0]["index"]))
    np.testing.assert_array_equal(outs[0], outs[1])


def test_dict_samples_and_arrays_calibrate_alike(tmp_path):
    by_list = int8_converter().convert()
    by_dict = int8_converter(representative_dataset=edgelite.RepresentativeDataset(
        lambda: ({"input": x} for x in CALIB))).convert()
    by_array = edgelite.convert(CNN, quantize="int8", calib=CALIB)
    assert by_list == by_dict == by_array
    assert by_list == cli_bytes(tmp_path, CNN, "--quantize", "int8", "--calib",
                                calib_file(tmp_path))


def test_strict_int8_lists_every_op_left_float(tmp_path):
    data = np.load(MODELS / "misc_isfinite.calib.npz")["x"][:4]

    def converter(ops):
        c = TFLiteConverter.from_frozen_graph(MODELS / "misc_isfinite.pb", ["x"], ["y"])
        c.optimizations = {Optimize.DEFAULT}
        c.representative_dataset = lambda: ([x[None]] for x in data)
        c.target_spec.supported_ops = ops
        return c

    with pytest.raises(ValueError, match=r"TFLITE_BUILTINS_INT8 only, but 3 op\(s\) would "
                       r"stay float: .*SUB.*EQUAL.*ZEROS_LIKE") as e:
        converter([OpsSet.TFLITE_BUILTINS_INT8]).convert()
    assert isinstance(e.value, edgelite.EdgeliteError)
    wide = OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8
    with pytest.raises(ValueError, match=r"is EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_"
                       r"WEIGHTS_INT8 only, but \d+ op\(s\) would stay float: .*SUB"):
        converter([wide]).convert()
    # with TFLITE_BUILTINS too they stay float, as the command line writes them
    np.save(tmp_path / "x.npy", data)
    model = converter([OpsSet.TFLITE_BUILTINS, OpsSet.TFLITE_BUILTINS_INT8]).convert()
    assert model == cli_bytes(tmp_path, MODELS / "misc_isfinite.pb", "--quantize", "int8",
                              "--calib", tmp_path / "x.npy")


def test_float16_weights(tmp_path):
    c = TFLiteConverter.from_frozen_graph(CNN, ["input"], ["probs"])
    c.optimizations = [Optimize.DEFAULT]
    c.target_spec.supported_types = [np.float16]
    model = c.convert()
    assert model == cli_bytes(tmp_path, CNN, "--quantize", "float16")
    interp = edgelite.Interpreter(model_content=model)
    weights = [d for d in interp.get_tensor_details() if d["dtype"] == np.float16]
    assert len(weights) == 5  # two conv kernels and biases, the dense kernel
    ops = [op["op_name"] for op in interp._get_ops_details()]
    assert ops.count("DEQUANTIZE") == 5


def test_dynamic_range_without_dataset(tmp_path):
    c = TFLiteConverter.from_frozen_graph(CNN, ["input"], ["probs"])
    c.optimizations = [Optimize.DEFAULT]
    assert c.convert() == cli_bytes(tmp_path, CNN, "--quantize", "dynamic")


def test_16x8_set(tmp_path):
    model = int8_converter(target_spec=edgelite.TargetSpec(
        [OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8])).convert()
    assert model == cli_bytes(tmp_path, CNN, "--quantize", "int16x8", "--calib",
                              calib_file(tmp_path))


@pytest.mark.parametrize("attrs, message", [
    ({"inference_input_type": np.int8}, "need full integer quantization"),
    ({"inference_output_type": "int4"}, "inference_output_type is one of"),
    ({"target_spec": edgelite.TargetSpec([OpsSet.TFLITE_BUILTINS_INT8])},
     "needs a representative_dataset"),
    ({"target_spec": edgelite.TargetSpec(["TFLITE_BUILTINS_INT4"])}, "unknown set"),
])
def test_bad_settings_are_value_errors(attrs, message):
    c = TFLiteConverter.from_frozen_graph(CNN, ["input"], ["probs"])
    for k, v in attrs.items():
        setattr(c, k, v)
    with pytest.raises(ValueError, match=message):
        c.convert()


def test_keras_without_tensorflow_says_so(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "tensorflow", None)  # import tensorflow fails
    with pytest.raises(edgelite.ConverterError, match="needs TensorFlow"):
        TFLiteConverter.from_keras_model(object())


def test_two_signatures_calibrated_by_tagged_samples(tmp_path):
    golden = np.load(MODELS / "savedmodel" / "sm_module_two.golden.npz")
    x, ids, bias = (golden[k] for k in ("serving_default/in/x", "encode/in/ids",
                                        "encode/in/bias"))

    def samples():  # TF's multi-signature form: (signature key, {input: array})
        for k in range(len(x)):
            yield "serving_default", {"x": x[k:k + 1]}
            yield "encode", {"ids": ids[k:k + 1], "bias": bias[k:k + 1]}

    c = TFLiteConverter.from_saved_model(TWO, ["serving_default", "encode"])
    c.optimizations = [Optimize.DEFAULT]
    c.representative_dataset = samples
    model = c.convert()
    np.savez(tmp_path / "calib.npz", x=x, ids=ids, bias=bias)
    assert model == cli_bytes(tmp_path, TWO, "--signature", "serving_default", "--signature",
                              "encode", "--quantize", "int8", "--calib", tmp_path / "calib.npz")
    interp = edgelite.Interpreter(model_content=model)
    code = interp.get_signature_runner("encode")(ids=ids[:1], bias=bias[:1])["code"]
    assert interp.get_input_details()[0]["dtype"] == np.float32
    np.testing.assert_allclose(code, golden["encode/out/code"][:1], atol=0.02)
    assert [op["op_name"] for op in interp._get_ops_details()] == \
        ["QUANTIZE", "FULLY_CONNECTED", "DEQUANTIZE"]  # subgraph 0: serving_default, int8


def test_allow_custom_ops(tmp_path):
    from tests.cli.test_main import unsupported_graph
    graph = unsupported_graph(tmp_path)
    c = TFLiteConverter.from_frozen_graph(graph, ["x"], ["y"])
    with pytest.raises(edgelite.UnsupportedOpError, match="Digamma"):
        c.convert()
    c.allow_custom_ops = True
    c.exclude_conversion_metadata = True   # accepted: edgelite writes none either way
    model = c.convert()
    assert model == cli_bytes(tmp_path, graph, "--inputs", "x", "--outputs", "y",
                              "--allow_custom_ops")
    ops = edgelite.Interpreter(model_content=model)._get_ops_details()
    assert [o["op_name"] for o in ops] == ["Digamma", "Digamma", "RELU"]  # CUSTOM ops
