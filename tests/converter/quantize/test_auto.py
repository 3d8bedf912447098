"""Choices checked on held-out calibration samples (converter/quantize/auto.py):
--calib-method auto is never below min/max there, and an explicit transform that makes the
held-out output error worse is reverted with a warning."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import QuantizeOptions
from edgelite.converter.quantize.auto import HOLD_OUT_EVERY, split
from edgelite.interpreter.errors import EdgeliteError
from tests.conftest import MODELS

CALIB = str(MODELS / "digits_calib.npy")


def _convert(model: str, **options):
    q = QuantizeOptions(calib=CALIB, **options)
    return convert_detailed(MODELS / model, ConvertOptions(quantize=q)).quantization


def test_split_holds_out_every_fourth_sample():
    fit, held = split(list(range(10)))
    assert held == [3, 7] and fit == [0, 1, 2, 4, 5, 6, 8, 9] and HOLD_OUT_EVERY == 4
    with pytest.raises(EdgeliteError, match="at least 4"):
        split([0, 1, 2])


@pytest.mark.parametrize("model, per_channel", [("keras_cnn.pb", False),
                                                ("tf1_cnn.pb", True)])
def test_auto_is_never_below_minmax_on_the_held_out_samples(model, per_channel):
    report = _convert(model, calib_method="auto", per_channel=per_channel,
                      calib_samples=48).auto
    (first, baseline), scores = report.tried[0], dict(report.tried)
    assert str(first.method) == "minmax" and not first.transforms and not first.ranges
    assert scores[report.chosen] >= baseline
    assert scores[report.chosen] == max(scores.values())  # the best candidate is kept
    methods = {str(c.method) for c, _ in report.tried}
    assert {"minmax", "mse", "entropy", "percentile:99.99"} <= methods
    assert any(c.transforms for c, _ in report.tried) and any(c.ranges for c, _ in report.tried)
    assert "<- chosen" in report.table() and report.held_out == 12 and report.fit == 36


def test_an_explicit_transform_that_hurts_is_reverted():
    # Per-tensor keras_cnn: equalization lowers the output SQNR (README's table).
    q = _convert("keras_cnn.pb", equalize=True, per_channel=False)
    assert q.auto.reverted == ["equalize"] and q.equalization is None
    assert "warning: --equalize made the held-out output error worse" in q.auto.table()
    forced = _convert("keras_cnn.pb", equalize=True, per_channel=False, force_transforms=True)
    assert forced.auto is None and forced.equalization is not None


def test_an_explicit_transform_that_helps_is_kept():
    # Per-tensor MobileNetV2 (digits): equalization gains several dB (README's table).
    q = _convert("mobilenet_v2_digits.pb", equalize=True, per_channel=False,
                 calib_samples=40)
    assert q.auto.reverted == [] and q.equalization is not None
    with_eq, without = (score for _, score in q.auto.tried)
    assert with_eq > without


def test_auto_from_the_command_line(tmp_path):
    from click.testing import CliRunner

    from edgelite.cli.main import main
    out = tmp_path / "m.tflite"
    r = CliRunner().invoke(main, ["convert", str(MODELS / "tf1_cnn.pb"), "-o", str(out),
                                  "--quantize", "int8", "--calib", CALIB, "--calib-method",
                                  "auto"])
    assert r.exit_code == 0, r.output
    assert "held-out output SQNR (25 of 100 calibration samples held out)" in r.output
    assert "<- chosen" in r.output and out.exists()
    assert np.isfinite(float(r.output.split("dB")[0].split()[-1]))
