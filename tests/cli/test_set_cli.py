"""`--set NAME=VALUE` on the command line (convert and check): a TF1 training checkpoint
converts once its mode placeholders are bound; check lists what to bind; a wrong name, type
or shape is one error line."""

import numpy as np

from edgelite.interpreter import Interpreter
from tests.cli.clitools import error_line, invoke
from tests.conftest import MODELS

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
