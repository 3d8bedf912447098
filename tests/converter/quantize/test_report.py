"""report.py: why each op was left float, from the flags and the later steps."""

from edgelite.converter.quantize import QuantizeOptions, QuantizeReport, QuantMode, quantize
from edgelite.converter.quantize.selective import Goal, GoalKind, SelectiveReport

from ._small import samples, small_graph


def test_float_reasons_merge_the_steps_choices():
    report = QuantizeReport(QuantMode.INT8, kept_float={"out": "--keep-float"})
    report.selective = SelectiveReport(Goal(GoalKind.MIN_SQNR, 40.0), kept=["y"])
    assert report.float_reasons() == {"out": "--keep-float", "y": "kept float by --min-sqnr"}
    report.selective = SelectiveReport(Goal(GoalKind.MAX_ACCURACY_DROP, 0.01), kept=["y"])
    assert report.float_reasons()["y"] == "kept float by --max-accuracy-drop"


def test_a_quantize_report_names_keep_float():
    report = quantize(small_graph(), QuantizeOptions(calib=samples(), keep_float=["RELU"]))
    assert report.kept_float == {"RELU": "--keep-float"}
    assert report.float_reasons() == {"RELU": "--keep-float"}
    assert report.mode is QuantMode.INT8 and report.steps[0] == "check"
