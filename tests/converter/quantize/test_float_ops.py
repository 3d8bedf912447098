"""float_ops.py: the ops that stay float whatever the options say (NaN / inf, a comparison
or divisor outside the integer kernels' domain, subgraph ops never run) and the one error
naming every tensor without a range."""

import numpy as np
import pytest

from edgelite.converter.ir import Graph
from edgelite.converter.quantize.float_ops import (COMPARISONS, check_ranges, non_finite_ops,
                                                   outside_kernels)
from edgelite.converter.quantize.params import QType
from edgelite.converter.shape_inference import infer_shapes
from edgelite.errors import EdgeliteError

from ..irgraph import NONE
from ._small import small_graph


def test_comparisons_are_the_records_comparisons():
    assert COMPARISONS == {"EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS",
                           "LESS_EQUAL"}


def _compare_and_divide() -> Graph:
    g = Graph()
    x, d = g.tensor("x", np.float32, (1, 4)), g.tensor("d", np.float32, (1, 4))
    g.inputs = [x, d]
    big = g.tensor("big", np.bool_)
    g.add_op("GREATER", [x, g.const("k", np.float32(0.5))], [big], name="big")
    q = g.tensor("q", np.float32)
    g.add_op("DIV", [x, d], [q], NONE, name="q")
    g.outputs = [big, q]
    infer_shapes(g)
    return g


def test_outside_kernels():
    g = _compare_and_divide()
    # x spans 1000 (int8 scale ~3.9 >= 1: comparisons.cc would shift by a negative amount);
    # d's range holds 0: a divisor quantized to the zero point
    assert outside_kernels(g, {"x": (-500.0, 500.0), "d": (-1.0, 1.0)}, QType.INT8) == \
        {"big", "q"}
    # a fine x and a divisor well away from 0 (more than half a step): both integer
    assert outside_kernels(g, {"x": (-1.0, 1.0), "d": (0.5, 2.0)}, QType.INT8) == set()


def test_non_finite_ops_only_after_calibration():
    g = small_graph()
    ranges = {"x": (-1.0, 1.0), "scaled": (-2.0, 2.0), "shifted": (-1.0, 3.0), "y": (0.0, 3.0)}
    # "out" got no range: it held NaN / inf on every sample -> its op stays float
    assert non_finite_ops(g, ranges, calibrated=True) == {"out"}
    assert non_finite_ops(g, ranges, calibrated=False) == frozenset()


def test_check_ranges_names_every_missing_tensor():
    g = small_graph()
    with pytest.raises(EdgeliteError, match=r"3 tensor\(s\) have no range: 'x', 'scaled', "
                                            r"'shifted'"):
        check_ranges(g, {"y": (0.0, 3.0), "out": (-3.0, 0.0)}, set())
    check_ranges(g, {"scaled": (-2, 2), "shifted": (-1, 3), "y": (0, 3), "out": (-3, 0)},
                 given={"x"})
    # an op kept float needs no range for its outputs
    check_ranges(g, {"x": (-1, 1), "scaled": (-2, 2), "shifted": (-1, 3), "y": (0, 3)}, set(),
                 kept_float=frozenset({"out"}))
