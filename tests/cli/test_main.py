"""The `edgelite` command end to end, errors included (one line, no traceback)."""

import re

import numpy as np
import pytest
from click.testing import CliRunner

from edgelite.cli.main import main

from ..converter.tfgraph import GraphBuilder


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    from tests.conftest import MODELS
    out = tmp_path_factory.mktemp("cli") / "tf1.tflite"
    result = CliRunner().invoke(main, ["convert", str(MODELS / "tf1_cnn.pb"), "-o", str(out),
                                       "--verbose"])
    assert result.exit_code == 0, result.output
    return out, result.output


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_convert_verbose_lists_passes(converted):
    _, output = converted
    assert "lowered: ADD x3, CONV_2D x2, MATMUL, MAX_POOL_2D, RELU x2, RESHAPE, SOFTMAX" in output
    assert "pass matmul_to_fully_connected: 1 rewrite(s); 11 -> 11 ops" in output
    assert "pass fuse_bias: 3 rewrite(s); 11 -> 8 ops" in output
    assert "pass fuse_activation: 2 rewrite(s)" in output
    assert "wrote" in output and "6 ops" in output


def test_inspect_lists_ops_tensors_and_arena(converted):
    path, _ = converted
    result = invoke("inspect", path)
    assert result.exit_code == 0, result.output
    for text in ("CONV_2D", "FULLY_CONNECTED", "SOFTMAX", "input", "probs", "float32",
                 "arena"):
        assert text in result.output


def test_run_prints_outputs(converted, tmp_path):
    from tests.conftest import MODELS
    path, _ = converted
    result = invoke("run", path, "--input", MODELS / "sample_digit.npy")
    assert result.exit_code == 0, result.output
    assert "probs: float32 [1, 10]" in result.output
    assert "argmax per row: [2]" in result.output  # the sample digit is a 2
    out = tmp_path / "out.npz"
    result = invoke("run", path, "--input", f"input={MODELS / 'sample_digit.npy'}", "-o", out)
    assert result.exit_code == 0, result.output
    assert np.load(out)["probs"].shape == (1, 10)


def test_run_batch_resizes(converted, tmp_path):
    from tests.conftest import MODELS
    x = np.load(MODELS / "digits_test.npz")["x"][:4]
    np.save(tmp_path / "x.npy", x)
    result = invoke("run", converted[0], "--input", tmp_path / "x.npy")
    assert result.exit_code == 0, result.output
    assert "probs: float32 [4, 10]" in result.output


def test_run_wrong_shape_and_dtype_are_clear(converted, tmp_path):
    np.save(tmp_path / "bad.npy", np.zeros((1, 8, 8), np.float32))
    result = invoke("run", converted[0], "--input", tmp_path / "bad.npy")
    assert result.exit_code == 1
    assert result.output.startswith("error:") and "input" in result.output
    assert "Traceback" not in result.output
    np.save(tmp_path / "int.npy", np.zeros((1, 8, 8, 1), np.int32))
    result = invoke("run", converted[0], "--input", tmp_path / "int.npy")
    assert result.exit_code == 1 and "error:" in result.output and "int32" in result.output


def test_convert_unknown_input_name(tmp_path):
    from tests.conftest import MODELS
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


def test_inspect_malformed_tflite(tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x18\x00\x00\x00TFL3" + b"\xff" * 40)
    result = invoke("inspect", bad)
    assert result.exit_code == 1 and result.output.startswith("error:")
    assert "Traceback" not in result.output


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
    from tests.conftest import MODELS
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
    from tests.conftest import MODELS
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


def test_inspect_run_and_bench_models_with_subgraphs(tmp_path):
    from tests.interpreter import subgraph_models as sm
    path = tmp_path / "loop.tflite"
    path.write_bytes(sm.nested_while(outer=3, inner=4))
    text = invoke("inspect", str(path)).output
    assert "5 subgraph(s)" in text
    assert "subgraphs: 0 main (1 ops), 1 cond (1 ops), 2 outer_body (4 ops), 3 cond (1 ops), " \
           "4 subgraph4 (3 ops)" in text
    assert "subgraph 2 'outer_body': inputs [0, 1], outputs [6, 7]" in text
    assert "    1 WHILE                  in [2, 1] -> out [4, 5]  cond_subgraph_index=3, " \
           "body_subgraph_index=4" in text
    np.save(tmp_path / "i.npy", np.array(0, np.int32))
    np.save(tmp_path / "x.npy", np.array([1, -2, 0.5], np.float32))
    result = invoke("run", str(path), "--input", f"i={tmp_path / 'i.npy'}",
                    "--input", f"x={tmp_path / 'x.npy'}")
    assert result.exit_code == 0, result.output
    assert "i_out: int32 []\n3\n" in result.output
    result = invoke("bench", str(path), "--runs", "2", "--warmup", "0", "--json")
    assert result.exit_code == 0, result.output
    assert '"op_type": "WHILE"' in result.output
