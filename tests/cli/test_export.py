"""`edgelite export --c-array` and `edgelite convert --target micro` from the command line
(the files themselves: tests/converter/test_firmware.py, test_micro_ops.py)."""

import pytest

from edgelite.interpreter import micro_arena
from tests.cli.clitools import error_line, invoke
from tests.conftest import MODELS

MODEL = MODELS / "keras_cnn.tf_int8.tflite"
METHODS = ("AddAveragePool2D, AddConv2D, AddDepthwiseConv2D, AddDequantize, "
           "AddFullyConnected, AddMean, AddQuantize, AddSoftmax")


def test_export_names_from_the_file_and_sizes_the_arena_for_tflite_micro(tmp_path):
    arena = micro_arena(MODEL.read_bytes(), "32bit")
    result = invoke("export", MODEL, "--c-array", tmp_path / "fw")
    assert result.exit_code == 0, result.output
    name = "keras_cnn_tf_int8_tflite"
    assert sorted(p.name for p in (tmp_path / "fw").iterdir()) == [
        f"{name}.cc", f"{name}.h", f"{name}_ops.h"]
    assert result.output.splitlines()[-1] == (
        f"8 op(s): {METHODS}; kTensorArenaSize {arena} (TFLite Micro's arena on a 32-bit "
        "target)")


def test_export_with_name_and_arena_size(tmp_path):
    result = invoke("export", MODEL, "--c-array", tmp_path, "--name", "g_model",
                    "--arena-size", 133776)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == f"8 op(s): {METHODS}; kTensorArenaSize 133776"
    assert "constexpr int kTensorArenaSize = 133776;" in (tmp_path / "g_model_ops.h").read_text()


@pytest.mark.parametrize("args, message", [
    (["--name", "int"], "error: --name 'int' cannot name a C array"),
    (["--name", "a\x1b[2Jb"], "error: --name 'a\\x1b[2Jb' cannot name a C array"),
])
def test_export_refuses_names(tmp_path, args, message):
    result = invoke("export", MODEL, "--c-array", tmp_path / "fw", *args)
    assert error_line(result).startswith(message)
    assert not (tmp_path / "fw").exists()


def test_export_refuses_a_derived_keyword_name(tmp_path):
    model = tmp_path / "int"   # xxd -i names it "int": not a C identifier one can declare
    model.write_bytes(MODEL.read_bytes())
    result = invoke("export", model, "--c-array", tmp_path / "fw")
    assert error_line(result).startswith(
        "error: the name derived from the file name 'int' cannot name a C array")


def test_export_refuses_ops_tflm_lacks_listing_all(tmp_path):
    result = invoke("export", MODELS / "op_zoo_math.tf.tflite", "--c-array", tmp_path / "fw")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "error: cannot export: TensorFlow Lite Micro cannot run 2 op(s):",
        "  POW (subgraph 0 op 3): TFLM's op resolver has no entry for it",
        "  REDUCE_PROD (subgraph 0 op 7): TFLM's op resolver has no entry for it"]
    assert not (tmp_path / "fw").exists()


def test_export_warns_about_kernels_tflm_lacks(tmp_path):
    result = invoke("export", MODELS / "tf1_cnn.tf_uint8.tflite", "--c-array", tmp_path)
    assert result.exit_code == 0, result.output
    warnings = result.stderr.splitlines()
    assert len(warnings) == 6 and warnings[0] == (
        "warning: TFLite Micro will refuse CONV_2D (subgraph 0 op 0): TFLite Micro has no "
        "uint8 kernels (it dropped them); use --quantize int8 --io-type uint8 for uint8 "
        "inputs and outputs")
    assert invoke("export", MODEL, "--c-array", tmp_path).stderr == ""


def test_convert_target_micro_refuses_uint8_with_the_alternative(tmp_path):
    result = invoke("convert", MODELS / "tf1_cnn.pb", "-o", tmp_path / "m.tflite",
                    "--quantize", "uint8", "--default-range", "-8,8", "--target", "micro")
    assert error_line(result) == (
        "error: --target micro: --quantize uint8 cannot run: TFLite Micro has no uint8 "
        "kernels (it dropped them); use --quantize int8 --io-type uint8 for uint8 inputs "
        "and outputs")
    assert not (tmp_path / "m.tflite").exists()


def test_convert_target_micro_writes_a_checked_model(tmp_path):
    result = invoke("convert", MODELS / "tf1_cnn.pb", "-o", tmp_path / "m.tflite",
                    "--quantize", "int8", "--io-type", "uint8", "--calib",
                    MODELS / "digits_calib.npy", "--calib-samples", 8, "--target", "micro")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "m.tflite").stat().st_size > 0
    result = invoke("convert", MODELS / "op_zoo_math.pb", "-o", tmp_path / "z.tflite",
                    "--target", "micro")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == (
        "error: --target micro: TensorFlow Lite Micro cannot run 2 op(s):")
    assert not (tmp_path / "z.tflite").exists()
