"""Choices checked on held-out calibration samples (converter/quantize/auto.py):
--calib-method auto is never below min/max there, and an explicit transform that makes the
held-out output error worse is reverted with a warning."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import QuantizeOptions
from edgelite.converter.quantize.auto import FOLDS, TRANSFORM_TIERS, folds, scoring_graph
from edgelite.errors import EdgeliteError
from tests.conftest import MODELS

CALIB = str(MODELS / "digits_calib.npy")


def _convert(model: str, **options):
    q = QuantizeOptions(calib=CALIB, **options)
    return convert_detailed(MODELS / model, ConvertOptions(quantize=q)).quantization


def test_folds_hold_out_each_sample_once():
    parts = folds(list(range(10)))
    assert len(parts) == FOLDS == 4
    assert [held for _, held in parts] == [[0, 4, 8], [1, 5, 9], [2, 6], [3, 7]]
    for fit, held in parts:
        assert sorted(fit + held) == list(range(10)) and not set(fit) & set(held)
    with pytest.raises(EdgeliteError, match="at least 4"):
        folds([0, 1, 2])


def test_a_final_softmax_is_scored_at_its_logits():
    graph = convert_detailed(MODELS / "tf1_cnn.pb").graph
    scored, which, outputs = scoring_graph(graph)
    assert [t.name for t in scored.outputs] == ["fc/logits", "probs"]
    assert which == [0] and outputs == [1]
    assert [t.name for t in graph.outputs] == ["probs"]          # the graph is left alone
    scored.outputs = scored.outputs[:1]      # no final softmax: the outputs themselves
    scored.remove_dead_ops()
    head, which, outputs = scoring_graph(scored)
    assert [t.name for t in head.outputs] == ["fc/logits"] and which == outputs == [0]


@pytest.mark.parametrize("model, per_channel", [("keras_cnn.pb", False),
                                                ("tf1_cnn.pb", True)])
def test_auto_is_never_below_minmax_on_the_held_out_samples(model, per_channel):
    report = _convert(model, calib_method="auto", per_channel=per_channel,
                      calib_samples=48).auto
    first = report.tried[0]
    assert str(first.cand.method) == "minmax" and not first.cand.transforms
    assert not first.cand.ranges and first.verdict is None
    chosen = report.score_of(report.chosen)
    assert chosen.db >= first.score.db and chosen.output_db >= first.score.output_db
    methods = {str(t.cand.method) for t in report.tried}
    assert {"minmax", "mse", "entropy", "percentile:99.99"} <= methods
    assert any(t.cand.ranges for t in report.tried)
    assert "<- chosen" in report.table() and report.samples == 48 and report.folds == 4
    assert report.scored == "logits"
    # simplest first: methods and ranges, then equalization / bias correction, AdaRound last
    order = [max((k for k, tier in enumerate(TRANSFORM_TIERS) if set(tier) & t.cand.transforms),
                 default=-1) for t in report.tried]
    assert order == sorted(order) and order[-1] == 1
    # each replacement won clearly over the candidate it was judged against
    path = [report.index_of(report.chosen)]
    while report.tried[path[-1]].against is not None:
        assert report.tried[path[-1]].verdict.kept
        path.append(report.tried[path[-1]].against)
    assert path[-1] == 0


def test_an_explicit_transform_that_hurts_is_reverted():
    # Per-tensor keras_cnn: equalization lowers the output SQNR (docs/results.md's table).
    q = _convert("keras_cnn.pb", equalize=True, per_channel=False)
    assert q.auto.reverted == ["equalize"] and q.equalization is None
    assert "warning: --equalize made the held-out error worse" in q.auto.table()
    forced = _convert("keras_cnn.pb", equalize=True, per_channel=False, force_transforms=True)
    assert forced.auto is None and forced.equalization is not None


def test_an_explicit_transform_that_helps_is_kept():
    # Per-tensor MobileNetV2 (digits): equalization gains several dB (docs/results.md's table).
    q = _convert("mobilenet_v2_digits.pb", equalize=True, per_channel=False)
    assert q.auto.reverted == [] and q.equalization is not None
    with_eq, without = q.auto.tried
    assert not without.verdict.kept and without.score.db < with_eq.score.db - 2.0


def test_auto_from_the_command_line(tmp_path):
    from click.testing import CliRunner

    from edgelite.cli.main import main
    out = tmp_path / "m.tflite"
    r = CliRunner().invoke(main, ["convert", str(MODELS / "tf1_cnn.pb"), "-o", str(out),
                                  "--quantize", "int8", "--calib", CALIB, "--calib-method",
                                  "auto"])
    assert r.exit_code == 0, r.output
    assert ("held-out SQNR (100 calibration samples, 4 folds: each sample scored by a model "
            "calibrated without it); a candidate replaces the simpler one it is judged against "
            "(vs) only if its mean gain at the logits exceeds 0.05 dB and it wins on every "
            "fold or its mean gain exceeds the folds' spread (std), without losing at the "
            "outputs:") in r.output
    assert ("    #  logits outputs  vs  gain per fold (dB)             mean spread  "
            "candidate -- verdict") in r.output
    assert "<- chosen" in r.output and out.exists()
    rows = r.output.split("candidate -- verdict\n")[1].splitlines()
    first, second = rows[0].split(), rows[1].split()
    assert first[0] == "0" and np.isfinite(float(first[1])) and first[3:6] == [
        "minmax", "--", "baseline"]
    assert second[3] == "0" and len(second[4:8]) == 4 and all(
        np.isfinite(float(g)) for g in second[4:10])        # 4 gains, their mean and spread


def test_auto_with_the_16x8_fallback_tries_the_ops_that_gain_most():
    """--fallback int16: after the methods and transforms, 16x8 for the top 1, 2, 4, ...
    ops by their gain; still never below min/max, and the chosen ops run 16x8."""
    result = convert_detailed(MODELS / "keras_cnn.pb", ConvertOptions(quantize=QuantizeOptions(
        calib=CALIB, calib_method="auto", fallback="int16", calib_samples=48)))
    report = result.quantization.auto
    wide = [t.cand for t in report.tried if t.cand.wide]
    assert [len(c.wide) for c in wide] == [1, 2, 4, 7][:len(wide)] and len(wide) >= 3
    assert all("16x8" in c.label() for c in wide)
    chosen, baseline = report.score_of(report.chosen), report.baseline
    assert chosen.db >= baseline.db and chosen.output_db >= baseline.output_db
    widened = [op for op in result.graph.ops if op.outputs[0].name in report.chosen.wide
               and op.type != "DEQUANTIZE"]  # (a graph output's DEQUANTIZE takes its name)
    assert all(op.inputs[0].dtype == np.int16 for op in widened)


def test_auto_does_not_lose_to_minmax_on_data_it_never_saw():
    """Calibrated on 32 training digits, evaluated on 128 test digits (disjoint): auto's
    choice is no worse than min/max at the logits, the outputs or top-1. (The rule before
    issue 25 -- a majority of the folds -- chose min/max + AdaRound + a percentile range
    here: +0.04 dB at the logits, -5.1 dB at the outputs. bench/auto_heldout.py measures
    more draws and models.)"""
    from edgelite.converter.runner import ModelRunner
    from tests.converter.quantize.held_out import LOGITS, held_out_sqnr
    test = np.load(MODELS / "digits_test.npz")
    x, y = test["x"][:128], test["y"][:128]
    float_model = convert_detailed(MODELS / "tf1_cnn.pb").model
    scores = {}
    for method in ("minmax", "auto"):
        q = convert_detailed(MODELS / "tf1_cnn.pb", ConvertOptions(quantize=QuantizeOptions(
            calib=CALIB, calib_samples=32, calib_method=method)))
        runner = ModelRunner(q.model)
        hits = sum(int(runner.run({"input": s})[0].argmax() == c) for s, c in zip(x, y))
        scores[method] = (*held_out_sqnr(float_model, q.model, x, LOGITS["tf1_cnn"]), hits)
    (mm_logits, mm_out, mm_hits), (au_logits, au_out, au_hits) = scores.values()
    assert au_logits >= mm_logits - 0.1 and au_out >= mm_out - 0.5 and au_hits >= mm_hits - 1
