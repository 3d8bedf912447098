"""The command line on SavedModels and TF1 checkpoints: convert / check / compare / eval take a
SavedModel directory (or a .meta graph with --checkpoint); wrong tags or signatures get one
line listing what the model has."""

import numpy as np
from click.testing import CliRunner

from edgelite.cli.main import main
from edgelite.interpreter import Interpreter
from tests.conftest import MODELS

SAVED = MODELS / "savedmodel"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


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
