"""RandomUniform (lower/random.py): dropout's noise folds away once its rate is a constant.

TF (random_ops.cc, random_distributions.h): RandomUniform "Outputs random values from a
uniform distribution ... in the range [0, 1)"; float32 values are the 2^23 numbers
k * 2^-23 (Uint32ToFloat: a random mantissa of 1.m, minus 1), so 0 <= u <= 1 - 2^-23.
A comparison that every such u answers the same way is a constant mask; one that depends on
u stays random, and a random op has no inference model: the report says so.
"""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.errors import UnsupportedOpError

from .lowering import F32, I32, check, floats, graph, rng

COVERED = {"RandomUniform", "StatelessRandomUniform", "StatelessRandomUniformV2"}
I64, U64 = np.dtype(np.int64), np.dtype(np.uint64)


def _noise(g, kind: str = "RandomUniform", shape=None) -> str:
    """A noise node shaped like x (a constant shape, or Shape(x): known after lowering)."""
    if shape is None:
        g.node("shape", "Shape", ["x"], T=F32, out_type=I32)
    else:
        g.const("shape", np.array(shape, np.int32))
    if kind == "RandomUniform":
        return g.node("u", kind, ["shape"], T=I32, dtype=F32, seed=1, seed2=2)
    if kind == "StatelessRandomUniformV2":
        key = g.node("key", "Const", value=np.array([7], np.uint64), dtype=U64)
        counter = g.node("counter", "Const", value=np.array([0, 0], np.uint64), dtype=U64)
        g.const("alg", np.array(1, np.int32))
        return g.node("u", kind, ["shape", key, counter, "alg"], Tshape=I32, dtype=F32)
    g.const("seed", np.array([1, 2], np.int64))
    return g.node("u", "StatelessRandomUniform", ["shape", "seed"], T=I32, Tseed=I64,
                  dtype=F32)


def _dropout(kind: str = "RandomUniform", shape=None, keep_prob: float = 1.0):
    """tf.nn.dropout (TF >= 1.13) with a constant keep_prob, then a Relu."""
    g = graph(x=(2, 5))
    g.const("keep_prob", np.float32(keep_prob))
    g.const("one", np.float32(1.0))
    g.node("rate", "Sub", ["one", "keep_prob"], T=F32)
    g.node("scale", "Sub", ["one", "rate"], T=F32)
    g.node("scaled", "RealDiv", ["x", "scale"], T=F32)
    _noise(g, kind, shape)
    g.node("keep", "GreaterEqual", ["u", "rate"], T=F32)
    g.const("zero", np.float32(0.0))
    g.node("dropped", "SelectV2", ["keep", "scaled", "zero"], T=F32)
    g.node("y", "Relu", ["dropped"], T=F32)
    return g


@pytest.mark.parametrize("kind", sorted(COVERED))
@pytest.mark.parametrize("shape", [None, (2, 5)])
def test_dropout_with_keep_prob_one_is_the_identity(kind, shape):
    x = floats(rng(), 2, 5)
    r = check(_dropout(kind, shape), {"x": x}, np.maximum(x, 0), ["RELU"])
    # the comparison folds as it is lowered: to a constant mask, or to FILL(Shape(x), true)
    # while x's shape is not known yet; the noise itself is gone
    mask = {"SHAPE": 1, "FILL": 1} if shape is None else {}
    assert r.lowered == {"DIV": 1, "SELECT_V2": 1, "RELU": 1, **mask}


def test_pre_1_13_dropout_floor_of_keep_prob_plus_noise():
    """tf.nn.dropout before TF 1.13: floor(keep_prob + u) is 1 for every u when keep_prob
    is 1 (1 + (1 - 2^-23) is still below 2 in float32)."""
    g = graph(x=(2, 5))
    g.const("keep_prob", np.float32(1.0))
    _noise(g, shape=(2, 5))
    g.node("sum", "AddV2", ["keep_prob", "u"], T=F32)
    g.node("mask", "Floor", ["sum"], T=F32)
    g.node("scaled", "RealDiv", ["x", "keep_prob"], T=F32)
    g.node("y", "Mul", ["scaled", "mask"], T=F32)
    g.node("z", "Relu", ["y"], T=F32)
    x = floats(rng(), 2, 5)
    check(g, {"x": x}, np.maximum(x, 0), ["RELU"], outputs=["z"])


# (comparison, constant, noise first?, the answer for every u in [0, 1 - 2^-23])
DECIDED = [("GreaterEqual", 0.0, True, True), ("GreaterEqual", 1.0, True, False),
           ("Greater", -0.5, True, True), ("Greater", 1.0 - 2.0 ** -23, True, False),
           ("Less", 1.0, True, True), ("Less", 0.0, True, False),
           ("LessEqual", 1.0 - 2.0 ** -23, True, True), ("LessEqual", -1e-6, True, False),
           ("LessEqual", 0.0, False, True), ("Greater", 1.0, False, True),
           ("GreaterEqual", -0.1, False, False), ("Less", 1.0 - 2.0 ** -23, False, False)]


@pytest.mark.parametrize("op, c, noise_first, answer", DECIDED)
def test_a_comparison_every_value_answers_alike_is_a_constant(op, c, noise_first, answer):
    """y = relu(where(cmp, x, -x)): the comparison folds, so one side of the where goes."""
    g = graph(x=(2, 5))
    _noise(g, shape=(2, 5))
    g.const("c", np.float32(c))
    g.node("cmp", op, ["u", "c"] if noise_first else ["c", "u"], T=F32)
    g.node("neg", "Neg", ["x"], T=F32)
    g.node("pick", "SelectV2", ["cmp", "x", "neg"], T=F32)
    g.node("y", "Relu", ["pick"], T=F32)
    x = floats(rng(), 2, 5)
    check(g, {"x": x}, np.maximum(x if answer else -x, 0), ["RELU"] if answer else
          ["NEG", "RELU"])


def test_shifted_and_scaled_noise_keeps_its_range():
    """tf.random.uniform(minval=-1, maxval=1) is u * 2 + (-1), in [-1, 1 - 2^-22]; 1 - that
    is in [2^-22, 2]: every value is above 0."""
    g = graph(x=(3,))
    _noise(g, shape=(3,))
    g.const("two", np.float32(2.0))
    g.const("minus_one", np.float32(-1.0))
    g.const("one", np.float32(1.0))
    g.const("zero", np.float32(0.0))
    g.node("scaled", "Mul", ["u", "two"], T=F32)
    g.node("shifted", "AddV2", ["scaled", "minus_one"], T=F32)
    g.node("flipped", "Sub", ["one", "shifted"], T=F32)
    g.node("cmp", "Greater", ["flipped", "zero"], T=F32)
    g.node("y", "SelectV2", ["cmp", "x", "zero"], T=F32)
    g.node("z", "Relu", ["y"], T=F32)
    x = floats(rng(), 3)
    check(g, {"x": x}, np.maximum(x, 0), ["RELU"], outputs=["z"])


def test_noise_compared_with_a_run_time_rate_is_reported_with_a_hint():
    g = _dropout()
    g.gd.node.remove(next(n for n in g.gd.node if n.name == "keep_prob"))
    g.placeholder("keep_prob", [])
    with pytest.raises(UnsupportedOpError) as e:
        convert_detailed(g.bytes(), ConvertOptions(inputs=["x", "keep_prob"], outputs=["y"]))
    lines = str(e.value).splitlines()
    assert lines[0] == "1 node(s) use 1 op type(s) edgelite cannot convert:"
    assert "  RandomUniform                    1  UNSUPPORTED: u" in lines
    assert ("  hint: input 'keep_prob' (float32 []) sets the rate of dropout noise 'u'; "
            "--set keep_prob=VALUE (e.g. keep_prob=1.0) makes the mask a constant and the "
            "noise goes") in lines


def test_noise_a_comparison_cannot_decide_stays_random():
    """keep_prob 0.5: the mask depends on each u; with --allow-custom-ops the noise is a
    CUSTOM op named after the TF op."""
    g = _dropout(keep_prob=0.5, shape=(2, 5))
    with pytest.raises(UnsupportedOpError, match=r"RandomUniform +1  UNSUPPORTED: u\n"):
        convert_detailed(g.bytes(), ConvertOptions(inputs=["x"], outputs=["y"]))
    result = convert_detailed(g.bytes(), ConvertOptions(inputs=["x"], outputs=["y"],
                                                        allow_custom_ops=True))
    customs = [op.custom_code for op in result.graph.ops if op.type == "CUSTOM"]
    assert customs == ["RandomUniform"]
    assert result.graph.op_counts()["GREATER_EQUAL"] == 1
