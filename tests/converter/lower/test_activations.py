"""converter/lower/activations.py: element-wise activations and unary math, one node each.

References follow TensorFlow's op definitions (tensorflow/core/ops/math_ops.cc, nn_ops.cc)
and kernels (cwise_ops.h, relu_op_functor.h, softmax_op_functor.h), written in numpy.
"""

import math

import numpy as np
import pytest

from .lowering import BOOL, DEFAULT, F32, I32, NONE, check, floats, graph, rng, run

COVERED = {"Relu", "Relu6", "Elu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Rsqrt", "Square",
           "Abs", "Neg", "Floor", "Ceil", "Sin", "Cos", "Round", "Sign", "LogicalNot",
           "ZerosLike", "LeakyRelu", "Softmax", "LogSoftmax", "Softplus", "Erf", "Erfc"}

# Values on and around every kink and rounding boundary the references below care about.
EDGES = np.array([-8.0, -6.0, -2.5, -1.5, -1.0, -0.5, -0.49, 0.0, 0.49, 0.5, 1.0, 1.5, 2.5,
                  5.99, 6.0, 6.01, 8.0], np.float32)


def _round_half_even(x):
    # tf.math.round / the Round op: "Rounds half to even. Also known as bankers rounding."
    # (math_ops.cc; cwise_ops.h scalar_round_half_to_even_op). numpy's rint does the same.
    return np.rint(x)


# TF op -> (TFLite op, reference, input values (None: EDGES + random), tolerance rtol)
FLOAT_UNARY = {
    "Relu": ("RELU", lambda x: np.maximum(x, 0), None),
    "Relu6": ("RELU6", lambda x: np.minimum(np.maximum(x, 0), 6), None),
    # Elu: x if x > 0 else exp(x) - 1 (relu_op_functor.h).
    "Elu": ("ELU", lambda x: np.where(x > 0, x, np.expm1(x)), None),
    "Sigmoid": ("LOGISTIC", lambda x: 1 / (1 + np.exp(-x)), None),
    "Tanh": ("TANH", np.tanh, None),
    "Exp": ("EXP", np.exp, None),
    "Log": ("LOG", np.log, "positive"),
    "Sqrt": ("SQRT", np.sqrt, "positive"),
    "Rsqrt": ("RSQRT", lambda x: 1 / np.sqrt(x), "positive"),
    "Square": ("SQUARE", np.square, None),
    "Abs": ("ABS", np.abs, None),
    "Neg": ("NEG", np.negative, None),
    "Floor": ("FLOOR", np.floor, None),
    "Ceil": ("CEIL", np.ceil, None),
    "Sin": ("SIN", np.sin, None),
    "Cos": ("COS", np.cos, None),
    "Round": ("ROUND", _round_half_even, None),
    # Sign: -1 if x < 0, 0 if x == 0, 1 if x > 0 (math_ops.cc).
    "Sign": ("SIGN", np.sign, None),
}


def _values(kind):
    r = rng()
    if kind == "positive":
        return np.concatenate([[0.01, 0.5, 1.0, 4.0], floats(r, 12, lo=0.05, hi=9.0)]
                              ).astype(np.float32).reshape(2, 8)
    return np.concatenate([EDGES, floats(r, 15, lo=-9.0, hi=9.0)]).reshape(2, 4, 4)


@pytest.mark.parametrize("op", sorted(FLOAT_UNARY))
def test_float_unary(op):
    tfl, ref, kind = FLOAT_UNARY[op]
    x = _values(kind)
    g = graph(x=x.shape)
    g.node("y", op, ["x"], T=F32)
    check(g, {"x": x}, ref(x.astype(np.float64)).astype(np.float32), [tfl], rtol=2e-6,
          atol=1e-6)


# Ops TF defines on integers too: the same element-wise formulas. TFLite's RELU, RELU6,
# SQUARE and ROUND have no int32 kernels, so those lower to integer MAXIMUM / MINIMUM / MUL
# (and Round to nothing: its output is its input, here fed to a NEG).
INT_UNARY = {
    "Relu": (["MAXIMUM"], lambda x: np.maximum(x, 0)),
    "Relu6": (["MAXIMUM", "MINIMUM"], lambda x: np.clip(x, 0, 6)),
    "Square": (["MUL"], np.square),
    "Abs": (["ABS"], np.abs),
    "Neg": (["NEG"], np.negative),
    "Sign": (["SIGN"], np.sign),
}


@pytest.mark.parametrize("passes", [DEFAULT, NONE], ids=["passes", "no-passes"])
@pytest.mark.parametrize("op", sorted(INT_UNARY))
def test_int32_unary(op, passes):
    ops, ref = INT_UNARY[op]
    x = np.array([[-9, -6, -1, 0], [1, 5, 6, 7]], np.int32)
    g = graph(x=(x.shape, I32))
    g.node("y", op, ["x"], T=I32)
    check(g, {"x": x}, ref(x).astype(np.int32), ops, passes=passes)


def test_int32_round_is_the_identity():
    x = np.array([[-9, -6, -1, 0], [1, 5, 6, 7]], np.int32)
    g = graph(x=(x.shape, I32))
    g.node("r", "Round", ["x"], T=I32)
    g.node("y", "Neg", ["r"], T=I32)
    check(g, {"x": x}, -x, ["NEG"], lowered={"NEG": 1})


def test_logical_not():
    x = np.array([[True, False, True], [False, False, True]])
    g = graph(x=(x.shape, BOOL))
    g.node("y", "LogicalNot", ["x"])
    check(g, {"x": x}, ~x, ["LOGICAL_NOT"])


@pytest.mark.parametrize("dtype, ops", [(F32, ["ZEROS_LIKE"]), (I32, ["ZEROS_LIKE"]),
                                        (BOOL, ["NOT_EQUAL"])])  # no bool ZEROS_LIKE kernel
def test_zeros_like(dtype, ops):
    x = np.arange(6).reshape(2, 3).astype(dtype)
    g = graph(x=(x.shape, dtype))
    g.node("y", "ZerosLike", ["x"], T=dtype)
    check(g, {"x": x}, np.zeros_like(x), ops)


@pytest.mark.parametrize("alpha", [None, 0.01, -0.5, 1.5])
def test_leaky_relu(alpha):
    """LeakyRelu: features > 0 ? features : features * alpha (relu_op_functor.h; "alpha
    might be > 1 or < 0", so not max(x, alpha * x)); alpha defaults to 0.2 (nn_ops.cc)."""
    x = _values(None)
    g = graph(x=x.shape)
    attrs = {} if alpha is None else {"alpha": alpha}
    g.node("y", "LeakyRelu", ["x"], T=F32, **attrs)
    a = np.float32(0.2 if alpha is None else alpha)
    check(g, {"x": x}, np.where(x > 0, x, x * a), ["LEAKY_RELU"])


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("shape", [(5,), (3, 5), (2, 3, 4), (1, 2, 2, 6)])
def test_softmax_over_last_axis(shape):
    """Softmax: softmax[i, j] = exp(logits[i, j]) / sum_j(exp(logits[i, j])) over the last
    dimension, whatever the rank (nn_ops.cc "Softmax"; tf.nn.softmax axis=-1)."""
    x = floats(rng(), *shape, lo=-4, hi=4)
    g = graph(x=shape)
    g.node("y", "Softmax", ["x"], T=F32)
    check(g, {"x": x}, _softmax(x.astype(np.float64)).astype(np.float32), ["SOFTMAX"])


@pytest.mark.parametrize("shape", [(3, 5), (2, 2, 6)])
def test_log_softmax_over_last_axis(shape):
    """LogSoftmax: logits - log(sum(exp(logits), axis=-1)) (nn_ops.cc "LogSoftmax")."""
    x = floats(rng(), *shape, lo=-4, hi=4).astype(np.float64)
    g = graph(x=shape)
    g.node("y", "LogSoftmax", ["x"], T=F32)
    want = x - x.max(-1, keepdims=True)
    want = want - np.log(np.exp(want).sum(-1, keepdims=True))
    check(g, {"x": x.astype(np.float32)}, want.astype(np.float32), ["LOG_SOFTMAX"], atol=2e-6)


SOFTPLUS_OPS = ["EXP", "ADD", "LOG"]


def _softplus_graph(x):
    g = graph(x=x.shape)
    g.node("y", "Softplus", ["x"], T=F32)
    return g


@pytest.mark.parametrize("passes", [DEFAULT, NONE], ids=["passes", "no-passes"])
def test_softplus(passes):
    """Softplus: log(exp(features) + 1) (nn_ops.cc); TFLite has no builtin for it, so it is
    EXP, ADD 1, LOG (as TFLite's converter writes it). Below x = -17 TF returns exp(x)
    (softplus_op.h) where log(1 + exp(x)) rounds to 0: an absolute error under 5e-8."""
    x = np.concatenate([_values(None).reshape(-1), [15.0, 19.0, 20.0, 21.0, 88.0, -30.0,
                                                     -100.0]]).astype(np.float32)
    want = np.logaddexp(0, x.astype(np.float64)).astype(np.float32)
    check(_softplus_graph(x), {"x": x}, want, SOFTPLUS_OPS, passes=passes,
          lowered={op: 1 for op in SOFTPLUS_OPS})


@pytest.mark.xfail(strict=True, reason="Softplus lowers to log(1 + exp(x)), infinite once "
                   "exp overflows (x > 88.7); TF returns x there. Exact: MINIMUM(x, 20) before "
                   "the EXP and MAXIMUM(x, .) after the LOG, two ops more than TFLite's "
                   "converter writes (tests/models/test_real_world.py op-count bar)")
def test_softplus_of_large_inputs_is_the_input():
    x = np.array([89.0, 100.0, 1000.0], np.float32)
    check(_softplus_graph(x), {"x": x}, x, SOFTPLUS_OPS)


def _erf(x):
    return np.vectorize(math.erf)(x.astype(np.float64))


@pytest.mark.parametrize("op", ["Erf", "Erfc"])
def test_bare_erf_is_written_as_builtins(op):
    """TFLite has no erf (TF's converter needs FlexErf / FlexErfc): a bare Erf / Erfc becomes
    the erfcc formula in builtins (passes/decompose_erf.py), within 2e-7 of math.erf."""
    x = np.concatenate([EDGES, [-3.0, -0.1, 0.1, 3.0, 5.0, -5.0, 12.0]]).astype(np.float32)
    g = graph(x=x.shape)
    g.node("y", op, ["x"], T=F32)
    want = _erf(x) if op == "Erf" else 1.0 - _erf(x)
    r = run(g, {"x": x}, ["y"])
    np.testing.assert_allclose(r.outputs[0], want, rtol=0, atol=2e-7)
    assert r.lowered == {op.upper(): 1}
    assert "CUSTOM" not in r.ops and r.ops.count("EXP") == 1


def _gelu_graph(x, form):
    """GELU as TF / Keras / BERT write it (nn_ops.py gelu; the erf and tanh forms)."""
    g = graph(x=x.shape)
    g.const("half", np.float32(0.5))
    g.const("one", np.float32(1.0))
    if form == "erfc":    # 0.5 * x * erfc(-x * (1 / sqrt 2)), tf.nn.gelu in TF >= 2.16
        g.const("c", np.float32(0.7071067811865476))
        g.node("neg", "Neg", ["x"], T=F32)
        g.node("s", "Mul", ["neg", "c"], T=F32)
        g.node("e", "Erfc", ["s"], T=F32)
        g.node("h", "Mul", ["half", "x"], T=F32)
        g.node("y", "Mul", ["h", "e"], T=F32)
    elif form == "erf":   # x * 0.5 * (1 + erf(x / sqrt 2))
        g.const("c", np.float32(1.4142135623730951))
        g.node("s", "RealDiv", ["x", "c"], T=F32)
        g.node("e", "Erf", ["s"], T=F32)
        g.node("p", "AddV2", ["one", "e"], T=F32)
        g.node("h", "Mul", ["x", "half"], T=F32)
        g.node("y", "Mul", ["h", "p"], T=F32)
    else:                 # 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
        g.const("three", np.float32(3.0))
        g.const("k", np.float32(0.044715))
        g.const("c", np.float32(0.7978845608028654))
        g.node("cube", "Pow", ["x", "three"], T=F32)
        g.node("kc", "Mul", ["k", "cube"], T=F32)
        g.node("inner", "AddV2", ["x", "kc"], T=F32)
        g.node("s", "Mul", ["c", "inner"], T=F32)
        g.node("t", "Tanh", ["s"], T=F32)
        g.node("p", "AddV2", ["one", "t"], T=F32)
        g.node("h", "Mul", ["half", "x"], T=F32)
        g.node("y", "Mul", ["h", "p"], T=F32)
    return g


@pytest.mark.parametrize("form", ["erfc", "erf", "tanh"])
def test_gelu_forms_become_one_gelu(form):
    """The three ways TF graphs write GELU end as one GELU op (identify_gelu), within float
    rounding of the formula itself (the tanh form: 1e-6 absolute where 1 + tanh cancels,
    x < -4; LiteRT's own two kernel sets differ by that much there)."""
    x = np.concatenate([EDGES, floats(rng(), 15, lo=-9.0, hi=9.0)]).astype(np.float32)
    x64 = x.astype(np.float64)
    if form == "tanh":
        want = 0.5 * x64 * (1 + np.tanh(np.sqrt(2 / np.pi) * (x64 + 0.044715 * x64 ** 3)))
    else:
        want = 0.5 * x64 * (1 + _erf(x64 / np.sqrt(2)))
    check(_gelu_graph(x, form), {"x": x}, want.astype(np.float32), ["GELU"], rtol=2e-6,
          atol=1e-6 if form == "tanh" else 2e-7)
