"""decompose_erf: ERF / ERFC left after identify_gelu written as TFLite builtins (the erfcc
formula), within 2e-7 of math.erf over the whole line."""

import math

import numpy as np
import pytest

from edgelite.converter.ir import PSEUDO_OPS
from edgelite.converter.passes import decompose_erf

from ..irgraph import input_graph, run_ir, then

X = np.concatenate([np.linspace(-7, 7, 281), [0.0, 1e-6, -1e-6, 12.0, -30.0, 0.4769363]]
                   ).astype(np.float32).reshape(1, -1)
COUNTS = {"ERF": 29, "ERFC": 30}


@pytest.mark.parametrize("op", ["ERF", "ERFC"])
def test_decompose_erf(op):
    g, x = input_graph(X.shape)
    g.outputs = [then(g, op, [x], "y")]
    assert decompose_erf.run(g) == 1
    assert sum(g.op_counts().values()) == COUNTS[op]
    assert not set(g.op_counts()) & PSEUDO_OPS
    assert g.outputs[0].name == "y"
    erf = np.vectorize(math.erf)(X.astype(np.float64))
    want = erf if op == "ERF" else 1.0 - erf
    np.testing.assert_allclose(run_ir(g, X)[0], want, rtol=0, atol=2e-7)


def test_nothing_to_do():
    g, x = input_graph(X.shape)
    g.outputs = [then(g, "TANH", [x], "y")]
    assert decompose_erf.run(g) == 0
