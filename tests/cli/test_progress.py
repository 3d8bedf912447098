"""cli/progress.py: calibration, compare and eval show a bar with a known length (the
samples read from the data file's header) and an ETA, on stderr."""

from __future__ import annotations

import contextlib
import sys

import numpy as np

from edgelite.cli import progress
from tests.support.cli import invoke
from tests.conftest import MODELS


def test_sample_count_reads_headers(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros((7, 3), np.float32))
    np.savez(tmp_path / "b.npz", x=np.zeros((5, 2)), y=np.zeros(5))
    np.savez(tmp_path / "c.npz", x=np.zeros((5, 2)), y=np.zeros(4))   # no single count
    (tmp_path / "d").mkdir()
    for k in range(3):
        np.save(tmp_path / "d" / f"{k}.npy", np.zeros(2))
    (tmp_path / "d" / "notes.txt").write_text("not a sample")
    (tmp_path / "e.bin").write_bytes(b"junk")
    assert [progress.sample_count(tmp_path / n) for n in ("a.npy", "b.npz", "c.npz", "d",
                                                         "e.bin", "missing.npy")] == \
        [7, 5, None, 3, None, None]
    assert progress.limited(7, 4) == 4 and progress.limited(7, None) == 7
    assert progress.limited(None, 4) == 4 and progress.limited(None, None) is None


def _recorded_bars(monkeypatch):
    bars = []
    real = progress.click.progressbar

    def recording(**kwargs):
        kwargs["on_stderr"] = kwargs["file"] is sys.stderr  # (CliRunner's, at call time)
        bars.append(kwargs)
        kwargs = {k: v for k, v in kwargs.items() if k != "on_stderr"}
        bar = real(**kwargs)
        count = []
        bars[-1]["counted"] = count

        @contextlib.contextmanager
        def wrapped():
            with bar as b:
                original = b.update
                b.update = lambda n, *a: (count.append(n), original(n, *a))[1]
                yield b
        return wrapped()

    monkeypatch.setattr(progress.click, "progressbar", recording)
    return bars


def test_long_commands_know_their_length(tmp_path, monkeypatch):
    bars = _recorded_bars(monkeypatch)
    calib = tmp_path / "calib.npy"
    np.save(calib, np.load(MODELS / "digits_calib.npy")[:12])
    quant = tmp_path / "q.tflite"
    assert invoke("convert", MODELS / "tf1_cnn.pb", "-o", quant, "--quantize", "int8",
                  "--calib", calib, "--calib-samples", 10).exit_code == 0
    test = MODELS / "digits_test.npz"
    assert invoke("compare", MODELS / "tf1_cnn.pb", quant, "--data", test,
                  "--samples", 9).exit_code == 0
    assert invoke("eval", MODELS / "tf1_cnn.pb", quant, "--data", test, "--labels", test,
                  "--samples", 6).exit_code == 0
    # eval counts samples, each run through both models in one shard
    assert [(b["label"], b["length"], b["show_eta"], sum(b["counted"])) for b in bars] == [
        ("calibrating", 10, True, 10), ("comparing", 9, True, 9), ("evaluating", 6, True, 6)]
    assert all(b["on_stderr"] for b in bars)
    assert all(b["hidden"] for b in bars)  # stderr is no terminal here: nothing drawn


def test_checked_transforms_have_their_own_bar(tmp_path, monkeypatch):
    bars = _recorded_bars(monkeypatch)
    calib = tmp_path / "calib.npy"
    np.save(calib, np.load(MODELS / "digits_calib.npy")[:8])
    assert invoke("convert", MODELS / "tf1_cnn.pb", "-o", tmp_path / "q.tflite", "--quantize",
                  "int8", "--calib", calib, "--bias-correction").exit_code == 0
    assert [(b["label"], b["length"], b["show_eta"], sum(b["counted"])) for b in bars] == [
        ("calibrating", 8, True, 8),  # once, on all the samples
        ("checking transforms", 2, True, 2)]  # with and without the bias correction


def test_adaround_and_auto_count_their_steps(tmp_path, monkeypatch):
    from edgelite.converter.quantize import auto
    bars = _recorded_bars(monkeypatch)
    calib = tmp_path / "calib.npy"
    np.save(calib, np.load(MODELS / "digits_calib.npy")[:8])
    assert invoke("convert", MODELS / "tf1_cnn.pb", "-o", tmp_path / "q.tflite", "--quantize",
                  "int8", "--calib", calib, "--adaround", "--force-transforms").exit_code == 0
    (ada,) = [b for b in bars if b["label"] == "AdaRound"]
    assert (ada["length"], sum(ada["counted"]), ada["show_eta"]) == (3, 3, True)  # 2 conv, fc
    bars.clear()
    monkeypatch.setattr(auto, "TRANSFORM_TIERS", ())   # the methods and tensors only: quick
    assert invoke("convert", MODELS / "tf1_cnn.pb", "-o", tmp_path / "a.tflite", "--quantize",
                  "int8", "--calib", calib, "--calib-method", "auto").exit_code == 0
    (cands,) = [b for b in bars if b["label"] == "auto: candidates"]
    methods = len(auto.METHODS)
    assert cands["length"] == methods + auto.LAST_LAYERS * (methods - 1)
    assert sum(cands["counted"]) == cands["length"]  # no transform tier to end early
