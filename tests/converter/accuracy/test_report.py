"""converter/accuracy/report.py: the number and name formatting of compare / eval reports
-- strict JSON for non-finite SQNR, table cells, names from files escaped and cut (whole
reports: test_compare.py, test_classification.py)."""

import json
import math

from edgelite.converter.accuracy.report import db, dumps, json_number, pct, short


def test_non_finite_numbers_are_strings_in_strict_json():
    assert [json_number(x) for x in (math.inf, -math.inf, math.nan, 1.5, 3, "x")] == [
        "inf", "-inf", "nan", 1.5, 3, "x"]
    text = dumps({"sqnr": [math.inf, 12.25], "nested": {"cos": math.nan}, "pair": (1, -math.inf)})
    assert json.loads(text) == {"sqnr": ["inf", 12.25], "nested": {"cos": "nan"},
                                "pair": [1, "-inf"]}
    assert "NaN" not in text and "Infinity" not in text


def test_table_cells():
    assert [db(x) for x in (math.inf, -math.inf, 12.345, -0.5)] == ["inf", "-inf", "12.35",
                                                                    "-0.50"]
    assert pct(None) == "-" and pct(0.98765) == "98.77%"


def test_names_are_escaped_shortened_and_cut_from_the_left():
    assert short("model/conv1/Relu") == "model/conv1/Relu"
    assert short("a/b;c/d;e") == "a/b;..."             # TFLite's fused names
    assert short("x\x1b[2Jy") == "x\\x1b[2Jy"          # escaped: no terminal control
    long = "block/" * 20 + "Relu"
    cut = short(long, 20)
    assert len(cut) == 20 and cut == "..." + long[-17:]
