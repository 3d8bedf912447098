"""pipeline.py: quantize() runs named steps over one Plan; which steps run for which
options, and that a plan with its ranges given skips the measurement (auto.py's way)."""

import numpy as np
import pytest

from edgelite.converter.export import export_tflite
from edgelite.converter.quantize import PIPELINE, QuantizeOptions, QuantizeReport, quantize
from edgelite.converter.quantize.auto import quantize_with
from edgelite.converter.quantize.pipeline import CHECK, QUANTIZE, Plan, Step, run
from edgelite.errors import EdgeliteError

from ._small import samples, small_graph


def _types(g):
    return [(op.type, op.outputs[0].dtype) for op in g.ops]


def test_the_pipeline_is_check_held_out_then_quantize():
    assert [s.name for s in PIPELINE] == [
        "check", "held_out", "weights_only", "check_data", "equalize", "calibrate",
        "given_ranges", "float_ops", "subgraphs", "sequence", "rewrite", "measured"]


def test_int8_with_calibration_runs_the_plain_rewrite():
    g = small_graph()
    report = quantize(g, QuantizeOptions(calib=samples()))
    assert report.steps == ["check", "check_data", "calibrate", "given_ranges", "float_ops",
                            "sequence", "rewrite"]
    assert report.calibration.used == 8 and set(report.ranges) >= {"x", "scaled", "out"}
    assert ("MUL", np.dtype(np.int8)) in _types(g)


def test_weights_only_modes_stop_early():
    report = quantize(small_graph(), QuantizeOptions("float16"))
    assert report.steps == ["check", "weights_only"]


def test_bias_correction_takes_the_measured_rewrite():
    report = quantize(small_graph(), QuantizeOptions(calib=samples(), bias_correction=True,
                                                     force_transforms=True))
    assert report.steps[-1] == "measured" and "rewrite" not in report.steps


def test_given_ranges_skip_calibration_and_match_it():
    """auto.py's plans: ranges measured once, then the same steps; same graph as calibrating."""
    calibrated, given = small_graph(), small_graph()
    ranges = quantize(calibrated, QuantizeOptions(calib=samples())).ranges
    report = quantize_with(given, QuantizeOptions(), samples(), dict(ranges))
    assert report.calibration is None and report.ranges == ranges
    assert export_tflite(given) == export_tflite(calibrated)


def test_a_step_may_finish_the_plan():
    seen = []

    def stop(plan):
        seen.append("stop")
        plan.done = True

    plan = Plan(small_graph(), QuantizeOptions(), QuantizeReport(QuantizeOptions().mode))
    report = run(plan, (CHECK, Step("stop", stop), *QUANTIZE))
    assert report.steps == ["check", "stop"] and seen == ["stop"]


def test_tools_that_measure_need_data():
    with pytest.raises(EdgeliteError, match="give --calib DATA"):
        quantize(small_graph(), QuantizeOptions(adaround=True))
