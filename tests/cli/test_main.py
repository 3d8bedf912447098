"""cli/main.py: the `edgelite` group and the commands it defines itself (convert, check,
passes, export), end to end, errors included (one line, no traceback)."""

import re

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, micro_arena
from tests.conftest import MODELS
from tests.support.cli import error_line, invoke

from ..converter.tfgraph import GraphBuilder


def test_convert_verbose_lists_passes(converted):
    _, output = converted
    assert "lowered: ADD x3, CONV_2D x2, MATMUL, MAX_POOL_2D, RELU x2, RESHAPE, SOFTMAX" in output
    assert "pass matmul_to_fully_connected: 1 rewrite(s); 11 -> 11 ops" in output
    assert "pass fuse_bias: 3 rewrite(s); 11 -> 8 ops" in output
    assert "pass fuse_activation: 2 rewrite(s)" in output
    assert "wrote" in output and "6 ops" in output


def test_convert_unknown_input_name(tmp_path):
    result = invoke("convert", MODELS / "tf1_cnn.pb", "-o", tmp_path / "x.tflite",
                    "--inputs", "inptu")
    assert result.exit_code == 1
    assert "error: input 'inptu' is not a node of this graph; did you mean 'input'?" in \
        result.output
    assert not (tmp_path / "x.tflite").exists()


def test_convert_malformed_pb(tmp_path):
    bad = tmp_path / "bad.pb"
    bad.write_bytes(b"\x0a\xff\xff\xff garbage")
    result = invoke("convert", bad, "-o", tmp_path / "x.tflite")
    assert result.exit_code == 1 and "not a TensorFlow GraphDef" in result.output
    assert not (tmp_path / "x.tflite").exists()


def unsupported_graph(tmp_path):
    g = GraphBuilder()
    g.placeholder("x", [1, 4])
    g.node("e1", "Digamma", ["x"])
    g.node("e2", "Digamma", ["e1"])
    g.node("y", "Relu", ["e2"])
    path = tmp_path / "erf.pb"
    path.write_bytes(g.bytes())
    return path


def test_check_reports_unsupported_ops(tmp_path):
    result = invoke("check", unsupported_graph(tmp_path))
    assert result.exit_code == 1
    assert "Digamma" in result.output and "UNSUPPORTED: e1, e2" in result.output
    assert "Relu" in result.output and "supported" in result.output


def test_check_passes_on_sample():
    result = invoke("check", MODELS / "keras_cnn.pb")
    assert result.exit_code == 0, result.output
    assert "FusedBatchNormV3" in result.output and "all ops supported" in result.output


def test_convert_fails_with_the_same_report(tmp_path):
    result = invoke("convert", unsupported_graph(tmp_path), "-o", tmp_path / "x.tflite")
    assert result.exit_code == 1 and "UNSUPPORTED: e1, e2" in result.output


def test_allow_custom_ops_writes_custom_ops(tmp_path):
    from edgelite.interpreter import load_model
    out = tmp_path / "erf.tflite"
    result = invoke("convert", unsupported_graph(tmp_path), "-o", out, "--allow-custom-ops")
    assert result.exit_code == 0, result.output
    ops = load_model(out.read_bytes()).subgraphs[0].operators
    assert [(op.name, op.custom_code) for op in ops] == [("CUSTOM", "Digamma"), ("CUSTOM", "Digamma"),
                                                         ("RELU", None)]
    # edgelite's interpreter names the ops it cannot run instead of crashing
    result = invoke("run", out, "--input", _save(tmp_path, np.zeros((1, 4), np.float32)))
    assert result.exit_code == 1 and "Digamma" in result.output


def _save(tmp_path, x):
    path = tmp_path / "x.npy"
    np.save(path, x)
    return path


def test_check_ignores_untaken_cond_branch():
    """RandomUniform (dropout) lives only in the is_training=True branch."""
    result = invoke("check", MODELS / "tf1_cond_is_training.pb")
    assert result.exit_code == 0, result.output
    # the TF1 conds (Switch / Merge) are raised to If nodes, one per tf.cond
    assert "RandomUniform" not in result.output
    assert re.search(r"^  If +2  supported$", result.output, re.M), result.output


def test_passes_lists_the_pipeline():
    result = invoke("passes")
    assert result.exit_code == 0
    assert result.output.splitlines()[0].startswith("remove_identities")
    assert "fold_batchnorm" in result.output and "(required)" in result.output
    # columns: every name is followed by at least two spaces, the docs start in one column
    from edgelite.converter.passes import PIPELINE
    lines = result.output.splitlines()
    width = max(len(p.name) for p in PIPELINE) + 2
    for p, line in zip(PIPELINE, lines, strict=True):
        assert line[:width] == p.name.ljust(width) and line[width] != " ", line


def test_help_short_option_and_python_m_edgelite():
    import subprocess
    import sys
    assert invoke("-h").output == invoke("--help").output
    assert "Commands:" in invoke("-h").output
    assert "--output" in invoke("convert", "-h").output
    proc = subprocess.run([sys.executable, "-m", "edgelite", "-h"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("Usage: edgelite [OPTIONS] COMMAND")


def test_a_reader_leaving_early_is_not_an_error(tmp_path):
    # `edgelite passes | head -0`: the reader closes the pipe before the first line is
    # written (the child is still importing); status 0, nothing on stderr
    import subprocess
    import sys
    p = subprocess.Popen([sys.executable, "-m", "edgelite", "passes"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdout.close()
    err = p.stderr.read()
    assert (p.wait(timeout=60), err) == (0, b"")


# ---------------------------------------------------------------------------
# `edgelite export --c-array` and `edgelite convert --target micro` from the command line
# (the files themselves: tests/converter/test_firmware.py, test_micro_ops.py).

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


# ---------------------------------------------------------------------------
# The command line on SavedModels and TF1 checkpoints: convert / check / compare / eval take a
# SavedModel directory (or a .meta graph with --checkpoint); wrong tags or signatures get one
# line listing what the model has.

SAVED = MODELS / "savedmodel"


def test_convert_a_signature(tmp_path):
    out = tmp_path / "m.tflite"
    result = invoke("convert", SAVED / "sm_module_two", "--signature", "encode", "-o", out)
    assert result.exit_code == 0, result.output
    g = np.load(SAVED / "sm_module_two.golden.npz")
    got = Interpreter(model_path=str(out)).get_signature_runner("encode")(
        ids=g["encode/in/ids"], bias=g["encode/in/bias"])
    np.testing.assert_allclose(got["code"], g["encode/out/code"], atol=1e-5)


def test_convert_int8_with_calibration_keyed_by_signature_names(tmp_path):
    g = np.load(SAVED / "sm_tf1_builder.golden.npz")
    np.savez(tmp_path / "calib.npz", x=g["serving_default/in/x"])
    out = tmp_path / "m.tflite"
    result = invoke("convert", SAVED / "sm_tf1_builder", "--quantize", "int8", "--calib",
                    tmp_path / "calib.npz", "-o", out)
    assert result.exit_code == 0, result.output
    assert "calibrated on 4 sample(s)" in result.output


def test_check_a_saved_model():
    result = invoke("check", SAVED / "sm_keras_lstm")
    assert result.exit_code == 0 and "all ops supported." in result.output


def test_meta_graph_with_checkpoint(tmp_path):
    out = tmp_path / "m.tflite"
    result = invoke("convert", SAVED / "ckpt_tf1" / "model.ckpt.meta", "--checkpoint",
                    SAVED / "ckpt_tf1" / "model.ckpt", "--outputs", "probs", "-o", out)
    assert result.exit_code == 0, result.output
    result = invoke("convert", SAVED / "ckpt_tf1" / "model.ckpt.meta", "-o", out)
    assert result.exit_code == 1
    assert "give its checkpoint too (--checkpoint PREFIX" in result.output


def test_unknown_signature_and_tags_list_the_models_own(tmp_path):
    out = tmp_path / "m.tflite"
    result = invoke("convert", SAVED / "sm_module_two", "--signature", "nope", "-o", out)
    assert result.exit_code == 1
    assert "has no signature 'nope'; its signatures: ['encode', 'serving_default']" in \
        result.output
    result = invoke("convert", SAVED / "sm_module_two", "--tag", "train", "-o", out)
    assert result.exit_code == 1 and "its tag sets are: serve (choose one with --tag)" in \
        result.output
    assert not out.exists()


def test_compare_a_saved_model_with_its_int8_file(tmp_path):
    g = np.load(SAVED / "sm_tf1_builder.golden.npz")
    np.savez(tmp_path / "x.npz", x=g["serving_default/in/x"])
    q = tmp_path / "q.tflite"
    assert invoke("convert", SAVED / "sm_tf1_builder", "--quantize", "int8", "--calib",
                  tmp_path / "x.npz", "-o", q).exit_code == 0
    result = invoke("compare", SAVED / "sm_tf1_builder", q, "--data", tmp_path / "x.npz")
    assert result.exit_code == 0, result.output
    assert "probs" in result.output


def test_eval_a_saved_model(tmp_path):
    g = np.load(SAVED / "sm_keras_cnn_export.golden.npz")
    np.save(tmp_path / "x.npy", g["serving_default/in/image"])
    np.save(tmp_path / "y.npy", g["serving_default/out/output_0"].argmax(axis=1))
    result = invoke("eval", SAVED / "sm_keras_cnn_export", "--data", tmp_path / "x.npy",
                    "--labels", tmp_path / "y.npy", "--min-accuracy", "1.0")
    assert result.exit_code == 0, result.output
    assert "100.00" in result.output


# ---------------------------------------------------------------------------
# `--set NAME=VALUE` on the command line (convert and check): a TF1 training checkpoint
# converts once its mode placeholders are bound; check lists what to bind; a wrong name, type
# or shape is one error line.

TRAIN = MODELS / "tf1_train"
META = ["--checkpoint", TRAIN / "v1" / "model.ckpt", "--outputs", "probs"]
V1_SET = ["--set", "is_training=false", "--set", "keep_prob=1.0", "--set", "batch_size=1",
          "--set", f"class_bias=[{', '.join(['0'] * 10)}]"]


def test_convert_a_training_checkpoint(tmp_path):
    out = tmp_path / "m.tflite"
    result = invoke("convert", TRAIN / "v1" / "model.ckpt.meta", *META, *V1_SET, "-o", out)
    assert result.exit_code == 0, result.output
    assert "7 ops (CONV_2D x2, FULLY_CONNECTED x2, MAX_POOL_2D, RESHAPE, SOFTMAX)" in \
        result.output
    golden = np.load(TRAIN / "v1.golden.npz")
    run = Interpreter(model_path=str(out)).get_signature_runner()
    got = np.concatenate([run(input=x[None])["probs"] for x in golden["input"]])
    np.testing.assert_allclose(got, golden["probs"], atol=1e-5)


def test_check_with_and_without_values():
    v2 = TRAIN / "v2.pb"
    ok = invoke("check", v2, "--set", "is_training=false", "--set", "keep_prob=1",
                "--set", "mode=0")
    assert ok.exit_code == 0, ok.output
    # keep_prob's dropout noise folds away; the training branches' are never lowered
    assert "  RandomUniform                    1  supported" in ok.output.splitlines()
    assert "all ops supported." in ok.output
    bad = invoke("check", v2)
    assert bad.exit_code == 1
    assert "  RandomUniform                    3  UNSUPPORTED: " in bad.output
    assert ("  hint: input 'keep_prob' (float32 []) sets the rate of dropout noise "
            "'drop2/random_uniform/RandomUniform'; --set keep_prob=VALUE (e.g. keep_prob=1.0) "
            "makes the mask a constant and the noise goes") in bad.output.splitlines()


def test_a_signature_input_takes_a_value_by_its_name(tmp_path):
    saved = MODELS / "savedmodel"
    g = np.load(saved / "sm_module_two.golden.npz")
    bias = g["encode/in/bias"][:1]
    out = tmp_path / "m.tflite"
    result = invoke("convert", saved / "sm_module_two", "--signature", "encode", "-o", out,
                    "--set", f"bias={bias.tolist()}")
    assert result.exit_code == 0, result.output
    runner = Interpreter(model_path=str(out)).get_signature_runner("encode")
    assert list(runner.get_input_details()) == ["ids"]
    got = runner(ids=g["encode/in/ids"][:1])
    np.testing.assert_allclose(got["code"], g["encode/out/code"][:1], atol=1e-5)


def test_bad_values_are_one_line(tmp_path):
    pb, out = TRAIN / "v1.pb", tmp_path / "m.tflite"
    assert error_line(invoke("convert", pb, "-o", out, "--set", "is_trainig=0")) == (
        "error: --set 'is_trainig': the graph has no placeholder of that name; did you mean "
        "'is_training'?")
    assert error_line(invoke("convert", pb, "-o", out, "--set", "batch_size=0.5")) == (
        "error: --set 'batch_size': the placeholder is int32; give an integer")
    assert error_line(invoke("check", pb, "--set", "class_bias=[1, 2]")) == (
        "error: --set 'class_bias': the placeholder has shape [10], the value [2]")
    assert error_line(invoke("check", pb, "--set", "keep_prob=high"), 2) == (
        "error: Invalid value for --set: 'keep_prob': 'high' is not a value --set takes: "
        "true/false, a number, or a list of them like [1, 2, 3]; see 'edgelite check --help'")
