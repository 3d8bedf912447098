"""cli/tflite_flags.py: tflite_convert's spellings write the same file as edgelite's own
flags, and misuse gets one usage line."""

from __future__ import annotations

import pytest

from tests.support.cli import error_line, invoke
from tests.conftest import MODELS

CNN = MODELS / "tf1_cnn.pb"


def written(tmp_path, name, *args) -> bytes:
    out = tmp_path / name
    result = invoke("convert", *args, "-o", out) if "--output_file" not in args else \
        invoke("convert", *args)
    assert result.exit_code == 0, result.output
    return out.read_bytes()


def test_toco_uint8_flags_match_edgelite_flags(tmp_path):
    theirs = written(tmp_path, "t.tflite", "--graph_def_file", CNN, "--output_file",
                     tmp_path / "t.tflite", "--input_arrays", "input", "--output_arrays",
                     "probs", "--input_shapes", "1,8,8,1", "--inference_type",
                     "QUANTIZED_UINT8", "--inference_input_type", "QUANTIZED_UINT8",
                     "--mean_values", "0", "--std_dev_values", "255", "--default-range",
                     "0,6", "--allow_custom_ops")
    ours = written(tmp_path, "o.tflite", CNN, "--inputs", "input", "--outputs", "probs",
                   "--input-shape", "input:1,8,8,1", "--quantize", "uint8", "--io-type",
                   "uint8", "--mean-std", "input:0,255", "--default-range", "0,6",
                   "--allow-custom-ops")
    assert theirs == ours


def test_saved_model_dir_and_float_inference_type(tmp_path):
    sm = MODELS / "savedmodel" / "sm_module_two"
    assert written(tmp_path, "t.tflite", "--saved_model_dir", sm, "--inference_type",
                   "FLOAT") == written(tmp_path, "o.tflite", sm)


@pytest.mark.parametrize("args, text", [
    (["--graph_def_file", CNN, CNN, "-o", "x.tflite"],
     "--graph_def_file and MODEL name the same thing: give one"),
    ([CNN], "Missing option '-o' / '--output' (or --output_file)"),
    ([CNN, "-o", "x.tflite", "--input_arrays", "input", "--input_shapes", "1,8,8,1:1,10"],
     "--input_shapes has 2 entries; --input_arrays names 1 input(s)"),
    ([CNN, "-o", "x.tflite", "--input_arrays", "input", "--mean_values", "0"],
     "--mean_values and --std_dev_values go together"),
])
def test_misuse_is_one_usage_line(args, text):
    assert text in error_line(invoke("convert", *args), 2)
