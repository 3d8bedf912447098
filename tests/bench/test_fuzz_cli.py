"""bench/fuzz_cli.py: the fork-server CLI fuzzer -- how a child's end is classified (exit 3,
a traceback, a signal, a hang are bugs), and a few real mutants of each file kind, none a bug,
each in a forked child bounded in memory and time."""

import importlib.util
import signal
import sys

import pytest

from tests.conftest import ROOT


@pytest.fixture(scope="module")
def fuzz():
    spec = importlib.util.spec_from_file_location("fuzz_cli", ROOT / "bench" / "fuzz_cli.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module          # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _exited(code: int) -> int:
    return code << 8      # a wait status: exited with `code`


@pytest.mark.parametrize("status, stderr, outcome, what", [
    (_exited(0), "", "ok", ""),
    (_exited(1), "error: model 'm.tflite' is truncated\n", "error", ""),
    (_exited(124), "error: timed out after 5 s (--timeout): stopped\n", "timeout (clean)", ""),
    (_exited(3), "error: internal error: KeyError: 'x' (a bug in edgelite ...)\n", "bug",
     "internal error: error: internal error: KeyError"),
    (_exited(1), "Traceback (most recent call last):\n  ...\nValueError: x\n", "bug",
     "traceback: ValueError: x"),
    (_exited(1), "error: 2 ops edgelite cannot convert:\n  Foo  1\n", "error", ""),
    (_exited(1), "", "bug", "exit 1 without an error line"),
    (_exited(2), "error: No such option\n", "bug", "exit 2"),
    (signal.SIGSEGV, "", "bug", "crash: signal SIGSEGV"),
    (None, "", "bug", "hang"),
])
def test_how_a_child_end_is_classified(fuzz, status, stderr, outcome, what):
    got = fuzz.classify(fuzz.Case("pb", 0), status, stderr)
    assert got.status == outcome and got.what.startswith(what), got


def test_every_kind_has_sources(fuzz):
    assert {k: len(fuzz.sources(k)) > 0 for k in fuzz.KINDS} == dict.fromkeys(fuzz.KINDS, True)
    assert all(p.suffix == ".tflite" for p in fuzz.sources("tflite"))


def test_mutants_of_every_kind_run_in_forked_children_without_a_bug(fuzz):
    cases = [fuzz.Case(kind, seed) for kind in fuzz.KINDS for seed in range(3)]
    outcomes = fuzz.run_cases(cases, jobs=2, wall=120.0, mem_bytes=3 << 30)
    assert [o.case for o in outcomes if o.status == "bug"] == [], fuzz.summary(outcomes, 0)
    assert sorted(o.case.label for o in outcomes) == sorted(c.label for c in cases)
