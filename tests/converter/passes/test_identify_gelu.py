"""identify_gelu on small IR graphs: each spelling of GELU becomes one GELU with the right
approximate flag and the numbers of the formula; near misses are left alone."""

import math

import numpy as np
import pytest

from edgelite.converter.passes import identify_gelu

from ..irgraph import NONE, fires, input_graph, rand, run_ir, then

X = np.concatenate([3 * rand(2, 5, 7).reshape(-1)[:60], [-6.0, -3.0, 0.0, 3.0, 6.0]]
                   ).astype(np.float32).reshape(1, 65)


def _c(g, name, v):
    return g.const(name, np.float32(v))


def _erfc_gate(g, x, how):
    if how == "neg":      # erfc(-x * (1 / sqrt 2)), tf.nn.gelu
        s = then(g, "MUL", [then(g, "NEG", [x], "neg"), _c(g, "c", 1 / math.sqrt(2))], "s",
                 **NONE)
    else:                 # erfc(x * (-1 / sqrt 2))
        s = then(g, "MUL", [x, _c(g, "c", -1 / math.sqrt(2))], "s", **NONE)
    return then(g, "ERFC", [s], "erfc")


def _erf_gate(g, x, how):
    if how == "div":      # 1 + erf(x / sqrt 2)
        s = then(g, "DIV", [x, _c(g, "c", math.sqrt(2))], "s", **NONE)
    else:
        s = then(g, "MUL", [_c(g, "c", 1 / math.sqrt(2)), x], "s", **NONE)
    return then(g, "ADD", [then(g, "ERF", [s], "erf"), _c(g, "one", 1.0)], "p", **NONE)


def _tanh_gate(g, x, how):
    if how == "pow":
        cube = then(g, "POW", [x, _c(g, "three", 3.0)], "cube")
    else:
        cube = then(g, "MUL", [then(g, "MUL", [x, x], "sq", **NONE), x], "cube", **NONE)
    inner = then(g, "ADD", [x, then(g, "MUL", [_c(g, "k", 0.044715), cube], "kc", **NONE)],
                 "inner", **NONE)
    s = then(g, "MUL", [inner, _c(g, "c", math.sqrt(2 / math.pi))], "s", **NONE)
    return then(g, "ADD", [_c(g, "one", 1.0), then(g, "TANH", [s], "t")], "p", **NONE)


GATES = {"erfc-neg": (_erfc_gate, "neg"), "erfc-mul": (_erfc_gate, "mul"),
         "erf-div": (_erf_gate, "div"), "erf-mul": (_erf_gate, "mul"),
         "tanh-pow": (_tanh_gate, "pow"), "tanh-muls": (_tanh_gate, "muls")}


def _product(g, x, gate, grouping, half=0.5):
    if grouping == "half-x-first":    # (0.5 * x) * gate
        return then(g, "MUL", [then(g, "MUL", [_c(g, "half", half), x], "hx", **NONE), gate],
                    "gelu", **NONE)
    if grouping == "x-gate-first":    # (x * gate) * 0.5
        return then(g, "MUL", [then(g, "MUL", [x, gate], "xg", **NONE), _c(g, "half", half)],
                    "gelu", **NONE)
    return then(g, "MUL", [x, then(g, "MUL", [gate, _c(g, "half", half)], "hg", **NONE)],
                "gelu", **NONE)       # x * (gate * 0.5)


def _reference(x, approximate):
    x = x.astype(np.float64)
    if approximate:
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


@pytest.mark.parametrize("grouping", ["half-x-first", "x-gate-first", "gate-half-first"])
@pytest.mark.parametrize("gate", sorted(GATES))
def test_gelu_spellings(gate, grouping):
    g, x = input_graph(X.shape)
    make, how = GATES[gate]
    g.outputs = [_product(g, x, make(g, x, how), grouping)]
    assert fires(g, identify_gelu.run) == 1
    assert g.op_counts() == {"GELU": 1}
    (op,) = g.ops
    approximate = gate.startswith("tanh")
    assert op.options == {"approximate": approximate} and op.inputs == [x]
    assert g.outputs[0].name == "gelu"
    np.testing.assert_allclose(run_ir(g, X)[0], _reference(X, approximate), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("change", ["half", "scale", "other-x", "cubic"])
def test_near_misses_are_left_alone(change):
    g, x = input_graph(X.shape)
    if change == "cubic":
        gate = _tanh_gate(g, x, "pow")
        next(op for op in g.ops if op.outputs[0].name == "kc").inputs[0] = _c(g, "k2", 0.05)
    elif change == "scale":
        s = then(g, "MUL", [x, _c(g, "c", -0.7)], "s", **NONE)
        gate = then(g, "ERFC", [s], "erfc")
    elif change == "other-x":
        y = then(g, "NEG", [x], "y")
        gate = _erfc_gate(g, y, "mul")
    else:
        gate = _erfc_gate(g, x, "neg")
    g.outputs = [_product(g, x, gate, "half-x-first", half=0.4 if change == "half" else 0.5)]
    counts = g.op_counts()
    assert identify_gelu.run(g) == 0
    assert g.op_counts() == counts


def test_gelu_of_a_scaled_tensor():
    """x itself a MUL by a constant: the peeling of x / sqrt 2 stops at x."""
    g, inp = input_graph(X.shape)
    x = then(g, "MUL", [inp, _c(g, "two", 2.0)], "x", **NONE)
    g.outputs = [_product(g, x, _erfc_gate(g, x, "mul"), "half-x-first")]
    assert fires(g, identify_gelu.run) == 1
    assert g.op_counts() == {"MUL": 1, "GELU": 1}
    np.testing.assert_allclose(run_ir(g, X)[0], _reference(2 * X, False), rtol=1e-5,
                               atol=1e-6)
