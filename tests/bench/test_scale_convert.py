"""bench/scale_convert.py's GraphDef chains: conversion stays linear in the number of nodes.
Counted in Python function calls (cProfile), not seconds: the count is the same on an idle
and on a busy machine, and a pass that rescans the graph per node shows as a ratio far
above the size ratio (quadratic: 9x for 3x the nodes)."""

import cProfile
import importlib.util
import pstats
import sys

import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("scale_convert",
                                                  ROOT / "bench" / "scale_convert.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _calls(data: bytes) -> tuple[int, int]:
    """(Python function calls, ops written) of one float conversion."""
    profile = cProfile.Profile()
    profile.enable()
    result = convert_detailed(data, ConvertOptions())
    profile.disable()
    return pstats.Stats(profile).total_calls, len(result.graph.ops)


def test_conversion_work_grows_linearly_with_the_graph(bench):
    small, small_ops = _calls(bench.build(800, branches=True))  # chains, forks and concats
    large, large_ops = _calls(bench.build(2400, branches=True))
    assert 2.8 <= large_ops / small_ops <= 3.2  # the graphs: 3x as many ops
    ratio = large / small
    assert 2.5 < ratio < 3.3, f"{ratio:.2f}x the calls for 3x the nodes: not linear"
