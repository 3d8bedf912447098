"""Issue 5's accuracy table on the digit CNNs: TFLite-style min/max vs edgelite's calibration
methods and transforms (bench/quant_methods.py; MobileNetV2 is in the bench, not here)."""

import importlib.util
import sys

import pytest

from tests.conftest import ROOT


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("quant_methods",
                                                  ROOT / "bench" / "quant_methods.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module          # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_a_method_beats_minmax_on_every_digits_model(bench, capsys):
    cases = bench.digits_cases()
    results = bench.run(cases)
    with capsys.disabled():
        print("\noutput SQNR vs float / accuracy on the 397 held-out digits\n"
              + bench.table(cases, results))
    baseline = bench.CONFIGS[0][0]
    for case in cases:
        base = results[case.label, baseline]
        best_label, best = max(((label, results[case.label, label])
                                for label, _ in bench.CONFIGS[1:]), key=lambda p: p[1].sqnr)
        assert best.sqnr > base.sqnr + 0.5, (case.label, best_label)
        assert best.accuracy >= base.accuracy - 0.01, (case.label, best_label)
