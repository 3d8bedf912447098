"""Every failure of the `edgelite` command is one `error:` line with a meaningful status:
1 bad input, 2 bad command line, 3 internal error (traceback with EDGELITE_DEBUG=1),
130 interrupted; `python -m edgelite.cli` is the same command."""

import os
import subprocess
import sys

import numpy as np
import pytest

from edgelite.cli import errors, inspect_cmd
from edgelite.errors import EdgeliteError
from tests.conftest import MODELS, ROOT

from tests.support.cli import error_line, invoke

MODEL = MODELS / "keras_cnn.tf.tflite"


def raising(exc):
    def describe(path):
        raise exc
    return describe


def test_edgelite_error_is_one_line_status_1(monkeypatch):
    monkeypatch.setattr(inspect_cmd, "describe", raising(EdgeliteError("bad 'x\x1b[2J'")))
    line = error_line(invoke("inspect", MODEL), errors.EXIT_ERROR)
    assert line == "error: bad 'x\\x1b[2J'"


def test_multi_line_edgelite_error_cannot_forge_lines(monkeypatch):
    """edgelite's own multi-line reports keep their lines, indented: no later line can pass
    for a new 'error:' line."""
    monkeypatch.setattr(inspect_cmd, "describe",
                        raising(EdgeliteError("2 problems:\nerror: forged\n\x1b[31mred")))
    result = invoke("inspect", MODEL)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == ["error: 2 problems:", "  error: forged",
                                          "  \\x1b[31mred"]


def test_internal_error_is_one_line_status_3(monkeypatch):
    monkeypatch.delenv(errors.DEBUG_VARIABLE, raising=False)
    monkeypatch.setattr(inspect_cmd, "describe", raising(ZeroDivisionError("boom\n\x1b[2J")))
    line = error_line(invoke("inspect", MODEL), errors.EXIT_INTERNAL)
    assert line.startswith("error: internal error: ZeroDivisionError: boom\\n\\x1b[2J (a bug "
                           "in edgelite: run again with EDGELITE_DEBUG=1 to see the traceback")


def test_debug_variable_shows_the_traceback(monkeypatch):
    monkeypatch.setattr(inspect_cmd, "describe", raising(ZeroDivisionError("boom")))
    result = invoke("inspect", MODEL, env={errors.DEBUG_VARIABLE: "1"})
    assert result.exit_code == errors.EXIT_INTERNAL
    assert result.stderr.startswith("Traceback (most recent call last):")
    assert "in describe" in result.stderr
    assert result.stderr.splitlines()[-1].startswith("error: internal error: ZeroDivisionError")


def test_keyboard_interrupt_is_one_line_status_130(monkeypatch):
    monkeypatch.setattr(inspect_cmd, "describe", raising(KeyboardInterrupt()))
    assert error_line(invoke("inspect", MODEL), 130) == "error: interrupted"


def test_eof_error_is_not_a_bare_aborted(monkeypatch):
    """click turns EOFError into a bare "Aborted!"; here it is an internal error line."""
    monkeypatch.setattr(inspect_cmd, "describe", raising(EOFError("No data left in file")))
    line = error_line(invoke("inspect", MODEL), errors.EXIT_INTERNAL)
    assert "EOFError: No data left in file" in line and "Aborted" not in line


def test_os_error_names_the_escaped_path(monkeypatch):
    monkeypatch.setattr(inspect_cmd, "describe", raising(
        PermissionError(13, "Permission denied", "/data/\x1b]0;title\x07m.tflite")))
    line = error_line(invoke("inspect", MODEL))
    assert line == "error: '/data/\\x1b]0;title\\x07m.tflite': Permission denied"


@pytest.mark.parametrize("error, detail", [(MemoryError(), ""),
                                           (MemoryError("Unable to allocate 4 EiB"),
                                            " (Unable to allocate 4 EiB)")])
def test_memory_error_names_the_command_and_its_files(monkeypatch, error, detail):
    monkeypatch.setattr(inspect_cmd, "describe", raising(error))
    assert error_line(invoke("inspect", MODEL, "--target", "micro")) == (
        f"error: out of memory while running 'edgelite inspect' on '{MODEL}'{detail}; use a "
        "smaller model, batch or data file")


@pytest.mark.parametrize("args, text", [
    (["convert"], "Missing argument 'MODEL' (or --saved_model_dir / --graph_def_file); see "
     "'edgelite convert --help'"),
    (["inspect", MODEL, "--bogus"], "No such option '--bogus'; see 'edgelite inspect --help'"),
    (["frobnicate"], "No such command 'frobnicate'; see 'edgelite --help'"),
    (["convert", MODELS / "tf1_cnn.pb", "-o", "x.tflite", "--input-shape", "nocolon"],
     "Invalid value for --input-shape: 'nocolon': expected NAME:D0,D1,..."),
    (["inspect", "missing\x1b[2J.tflite"], "'missing\\x1b[2J.tflite' does not exist"),
    (["eval", MODEL, "--data", MODEL, "--labels", MODEL, "--min-accuracy", "\x1b"],
     "'\\x1b': expected a fraction"),
])
def test_click_usage_errors_are_one_line_status_2(args, text):
    line = error_line(invoke(*args), errors.EXIT_USAGE)
    assert text in line


def test_help_and_version_still_exit_0():
    assert invoke("--help").exit_code == 0
    result = invoke("--version")
    assert result.exit_code == 0 and "edgelite, version" in result.output


def run_module(*args, cwd=None):
    env = dict(os.environ)
    env.pop(errors.DEBUG_VARIABLE, None)
    return subprocess.run([sys.executable, "-m", "edgelite.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd or ROOT, env=env,
                          timeout=120)


def test_python_dash_m_runs_the_command(tmp_path):
    result = run_module("--version")
    assert result.returncode == 0 and result.stdout.startswith("edgelite, version")
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((1, 8, 8, 1), np.float32))
    result = run_module("run", MODEL, "--input", x)
    assert result.returncode == 0, result.stderr
    assert "float32 [1, 10]" in result.stdout


def test_python_dash_m_bad_data_is_one_line_in_a_real_process(tmp_path):
    """Outside CliRunner too: the empty .npy that used to print only "Aborted!"."""
    empty = tmp_path / "empty.npy"
    empty.write_bytes(b"")
    result = run_module("run", MODEL, "--input", empty)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: input '") and "is empty (0 bytes)" in result.stderr
