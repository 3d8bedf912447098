"""`edgelite run` (cli/run_cmd.py): inputs from .npy files, by position or name, printed
and saved outputs, batch resizing, one line for a wrong shape or dtype."""

import numpy as np

from tests.conftest import MODELS
from tests.support.cli import invoke


def test_run_prints_outputs(converted, tmp_path):
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
