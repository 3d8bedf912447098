"""`edgelite compare` (cli/compare_cmd.py) end to end: machine output, plots, exit codes."""

import json
import sys

import numpy as np
import pytest

from tests.conftest import MODELS
from tests.converter.accuracy_models import PB, int8_model
from tests.support.cli import invoke

TEST = MODELS / "digits_test.npz"


@pytest.fixture(scope="module")
def quant(tmp_path_factory):
    path = tmp_path_factory.mktemp("acc") / "keras_cnn_int8.tflite"
    path.write_bytes(int8_model("keras_cnn/dw2_relu/Relu", 30.0))
    return path


def test_compare_table_names_the_culprit(quant):
    result = invoke("compare", PB, quant, "--data", TEST, "--samples", 50, "--top", 3)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any(line.startswith("output SQNR") and "top-1 agreement" in line for line in lines)
    first = lines[lines.index(next(l for l in lines if l.startswith("tensors,"))) + 2]
    assert "keras_cnn/dw2_relu/Relu" in first and "DEPTHWISE_CONV_2D (2)" in first
    assert "(worst 3 of 8)" in result.output


def test_compare_json(quant):
    result = invoke("compare", PB, quant, "--data", TEST, "--samples", 50, "--json",
                    "--outputs", "probs")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["samples"] == 50 and len(data["tensors"]) == 8
    assert data["tensors"][0]["name"] == "keras_cnn/dw2_relu/Relu"
    assert data["tensors"][0]["op"] == "DEPTHWISE_CONV_2D"
    assert set(data["tensors"][0]) >= {"sqnr_db", "op_sqnr_db", "cosine", "max_error_lsb",
                                       "mean_error", "op_index", "scale"}
    assert data["outputs"][0]["name"] == "probs" and 0 <= data["top1_agreement"] <= 1


def test_compare_csv_to_file(quant, tmp_path):
    out = tmp_path / "report.csv"
    result = invoke("compare", PB, quant, "--data", TEST, "--samples", 20, "--csv", "-o", out,
                    "--sort", "graph")
    assert result.exit_code == 0, result.output
    rows = out.read_text().splitlines()
    assert len(rows) == 9 and rows[1].split(",")[2] == "input"
    assert "worst op: DEPTHWISE_CONV_2D (2)" in result.output


def test_compare_plot(quant, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "sqnr.png"
    result = invoke("compare", PB, quant, "--data", TEST, "--samples", 20, "--plot", out)
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_compare_plot_without_matplotlib(quant, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)   # import matplotlib -> ImportError
    result = invoke("compare", PB, quant, "--data", TEST, "--samples", 20,
                    "--plot", tmp_path / "p.png")
    assert result.exit_code == 1
    assert "output SQNR" in result.stdout and "cosine" in result.stdout  # the table first
    assert len(result.stdout.splitlines()) > 5
    assert result.stderr == ("error: no plot written: --plot needs matplotlib (pip install "
                             "'edgelite[plot]' or pip install matplotlib); the figures are in "
                             "the table\n")  # ... then how to get the plot
    assert not (tmp_path / "p.png").exists()


def test_compare_bad_data_is_one_line(quant, tmp_path):
    bad = tmp_path / "bad.npy"
    np.save(bad, np.zeros((2, 3, 3), np.float32))
    result = invoke("compare", PB, quant, "--data", bad)
    assert result.exit_code == 1 and result.output.startswith("error:")
    assert "input 'input'" in result.output and "Traceback" not in result.output
