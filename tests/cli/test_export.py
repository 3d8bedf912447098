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
    arena, host = (micro_arena(MODEL.read_bytes(), t) for t in ("32bit", "host"))
    result = invoke("export", MODEL, "--c-array", tmp_path / "fw")
    assert result.exit_code == 0, result.output
    name = "keras_cnn_tf_int8_tflite"
    assert sorted(p.name for p in (tmp_path / "fw").iterdir()) == [
        f"{name}.cc", f"{name}.h", f"{name}_ops.h"]
    assert result.output.splitlines()[-1] == (
        f"8 op(s): {METHODS}; kTensorArenaSize {arena} (TFLite Micro's arena on a 32-bit "
        f"target); kTensorArenaSizeHost {host} (64-bit host build)")


def test_export_with_name_and_arena_size(tmp_path):
    data = MODEL.read_bytes()
    host = 133776 + micro_arena(data, "host") - micro_arena(data, "32bit")
    result = invoke("export", MODEL, "--c-array", tmp_path, "--name", "g_model",
                    "--arena-size", 133776)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == (
        f"8 op(s): {METHODS}; kTensorArenaSize 133776; kTensorArenaSizeHost {host} (64-bit "
        "host build)")
    assert "constexpr int kTensorArenaSize = 133776;" in (tmp_path / "g_model_ops.h").read_text()


def test_export_counts_resource_variables(tmp_path):
    result = invoke("export", MODELS / "kws_stream.tf_int8.tflite", "--c-array", tmp_path)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1].endswith("; kNumResourceVariables 2")


@pytest.mark.parametrize("args, message", [
    (["--name", "int"], "error: --name 'int' cannot name a C array"),
    (["--name", "a\x1b[2Jb"], "error: --name 'a\\x1b[2Jb' cannot name a C array"),
    (["--name", "g__model"], "error: --name 'g__model' cannot name a C array: C and C++ "
                             "reserve identifiers with __"),
    (["--name", "_G"], "error: --name '_G' cannot name a C array: C and C++ reserve"),
])
def test_export_refuses_names(tmp_path, args, message):
    result = invoke("export", MODEL, "--c-array", tmp_path / "fw", *args)
    assert error_line(result).startswith(message)
    assert not (tmp_path / "fw").exists()


@pytest.mark.parametrize("file_name, name", [
    ("int", "model_int"),          # xxd -i: "int", a keyword one cannot declare
    ("2x__net_.tflite", "model_2x_net_tflite"),  # xxd -i: "__2x__net__tflite", reserved
])
def test_export_makes_a_derived_name_safe(tmp_path, file_name, name):
    model = tmp_path / file_name
    model.write_bytes(MODEL.read_bytes())
    result = invoke("export", model, "--c-array", tmp_path / "fw")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "fw").iterdir()) == [
        f"{name}.cc", f"{name}.h", f"{name}_ops.h"]


def test_export_refuses_ops_tflm_lacks_listing_all(tmp_path):
    result = invoke("export", MODELS / "op_zoo_math.tf.tflite", "--c-array", tmp_path / "fw")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "error: cannot export: TensorFlow Lite Micro cannot run 2 op(s):",
        "  POW (subgraph 0 op 3): TFLM's op resolver has no entry for it",
        "  REDUCE_PROD (subgraph 0 op 7): TFLM's op resolver has no entry for it"]
    assert not (tmp_path / "fw").exists()


UINT8_CONV = ("CONV_2D (subgraph 0 op 0): TFLite Micro has no uint8 kernel for CONV_2D (it "
              "dropped its uint8 kernels); convert with --quantize int8 --io-type uint8 "
              "(uint8 only at the inputs and outputs)")


def test_export_refuses_kernels_tflm_lacks_unless_forced(tmp_path):
    uint8 = MODELS / "tf1_cnn.tf_uint8.tflite"
    result = invoke("export", uint8, "--c-array", tmp_path / "fw")
    assert result.exit_code == 1 and not (tmp_path / "fw").exists()
    lines = result.stderr.splitlines()
    assert lines[0] == "error: cannot export: TensorFlow Lite Micro cannot run 5 op(s):"
    assert lines[1] == f"  {UINT8_CONV}"
    assert lines[-1] == ("  convert the model for TFLite Micro (edgelite convert --target "
                         "micro), or export it anyway with --force")
    result = invoke("export", uint8, "--c-array", tmp_path / "fw", "--force")
    assert result.exit_code == 0, result.output
    warnings = result.stderr.splitlines()
    assert len(warnings) == 5 and warnings[0] == (
        f"warning: TensorFlow Lite Micro cannot run {UINT8_CONV}")
    assert invoke("export", MODEL, "--c-array", tmp_path).stderr == ""


def test_convert_target_micro_refuses_uint8_with_the_alternative(tmp_path):
    result = invoke("convert", MODELS / "tf1_cnn.pb", "-o", tmp_path / "m.tflite",
                    "--quantize", "uint8", "--default-range", "-8,8", "--target", "micro")
    assert error_line(result) == (
        "error: --target micro: --quantize uint8 cannot run: TFLite Micro has no uint8 "
        "kernels (it dropped them); use --quantize int8 --io-type uint8 for uint8 inputs "
        "and outputs (or write it anyway with --force)")
    assert not (tmp_path / "m.tflite").exists()


def test_convert_target_micro_force_writes_with_warnings(tmp_path):
    result = invoke("convert", MODELS / "tf1_cnn.pb", "-o", tmp_path / "m.tflite",
                    "--quantize", "uint8", "--default-range", "-8,8", "--target", "micro",
                    "--force")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "m.tflite").stat().st_size > 0
    warnings = result.stderr.splitlines()
    assert len(warnings) == 6 and all(w.startswith(
        "warning: TensorFlow Lite Micro cannot run ") for w in warnings)
    assert "not float32 -> uint8" in warnings[0] and "CONV_2D" in warnings[1]


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


def test_convert_force_needs_target_micro(tmp_path):
    result = invoke("convert", MODELS / "tf1_cnn.pb", "-o", tmp_path / "m.tflite", "--force")
    assert result.exit_code == 2 and "--force" in result.output and \
        "applies to --target micro only" in result.output
    assert not (tmp_path / "m.tflite").exists()
