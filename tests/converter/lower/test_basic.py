"""converter/lower/basic.py: Const, Identity-like ops and PlaceholderWithDefault become
tensors or aliases, never kernels (TF: array_ops.cc "Identity", "Snapshot", ...)."""

import numpy as np
import pytest

from .lowering import F32, I32, NONE, check, floats, graph, rng

COVERED = {"Const", "Identity", "IdentityN", "StopGradient", "Snapshot", "CheckNumerics",
           "EnsureShape", "PlaceholderWithDefault"}


@pytest.mark.parametrize("value", [np.array([1.5, -2.0, 0.25], np.float32),
                                   np.float32(3.0)], ids=["vector", "scalar"])
def test_const_operand(value):
    x = floats(rng(), 2, 3)
    g = graph(x=x.shape)
    g.const("c", value)
    g.node("y", "AddV2", ["x", "c"], T=F32)
    check(g, {"x": x}, x + value, ["ADD"])


@pytest.mark.parametrize("value", [np.arange(6, dtype=np.int32).reshape(2, 3),
                                   np.array([[0.5, -1.0]], np.float32)], ids=["int32", "float32"])
def test_const_output(value):
    """A Const that is a graph output is written as a constant tensor: no op."""
    g = graph()
    g.node("y", "Const", value=value, dtype=value.dtype)
    check(g, {}, value, [], lowered={})


@pytest.mark.parametrize("passes", [frozenset(), NONE], ids=["passes", "no-passes"])
@pytest.mark.parametrize("op, attrs", [
    ("Identity", {}), ("StopGradient", {}), ("Snapshot", {}),
    ("CheckNumerics", {"message": "bad"}),
    ("EnsureShape", {}),
])
def test_identity_like(op, attrs, passes):
    """Identity-like nodes forward their input (CheckNumerics: finite inputs; EnsureShape:
    a matching shape); remove_identities (a required pass) drops the IDENTITY."""
    x = floats(rng(), 2, 3)
    g = graph(x=x.shape)
    g.node("n", "Neg", ["x"], T=F32)
    g.node("y", op, ["n"], T=F32, **attrs)
    check(g, {"x": x}, -x, ["NEG"], passes=passes, lowered={"NEG": 1, "IDENTITY": 1})


def test_identity_feeding_an_op():
    x = floats(rng(), 2, 3)
    g = graph(x=x.shape)
    g.node("i", "Identity", ["x"], T=F32)
    g.node("y", "Relu", ["i"], T=F32)
    check(g, {"x": x}, np.maximum(x, 0), ["RELU"])


def test_identity_of_an_input_as_output():
    x = floats(rng(), 2, 3)
    g = graph(x=x.shape)
    g.node("y", "Identity", ["x"], T=F32)
    check(g, {"x": x}, x, [])


def test_identity_n():
    """IdentityN forwards each input to the output of the same index."""
    r = rng()
    a, b = floats(r, 2, 3), np.arange(4, dtype=np.int32)
    g = graph(a=a.shape, b=(b.shape, I32))
    g.node("na", "Neg", ["a"], T=F32)
    g.node("nb", "Neg", ["b"], T=I32)
    n = g.gd.node.add(name="y", op="IdentityN")
    n.input.extend(["na", "nb"])
    n.attr["T"].list.type.extend([1, 3])  # DT_FLOAT, DT_INT32
    check(g, {"a": a, "b": b}, [-a, -b], ["NEG", "NEG"], outputs=["y:0", "y:1"])


def test_placeholder_with_default_not_fed_is_its_default():
    """PlaceholderWithDefault: "A placeholder op that passes through input when its output
    is not fed" (array_ops.cc); not named as an input, it is its default value."""
    x = floats(rng(), 2, 3)
    default = np.array([1.0, 2.0, 3.0], np.float32)
    g = graph(x=x.shape)
    g.const("d", default)
    n = g.node("p", "PlaceholderWithDefault", ["d"], dtype=F32)
    g.gd.node[-1].attr["shape"].shape.dim.add(size=3)
    g.node("y", "Mul", ["x", n], T=F32)
    check(g, {"x": x}, x * default, ["MUL"])


def test_placeholder_with_default_fed_is_an_input():
    x = floats(rng(), 2, 3)
    g = graph(x=x.shape)
    g.const("d", np.zeros(3, np.float32))
    g.node("p", "PlaceholderWithDefault", ["d"], dtype=F32)
    g.gd.node[-1].attr["shape"].shape.dim.add(size=3)
    g.node("y", "Mul", ["x", "p"], T=F32)
    p = np.array([2.0, -1.0, 0.5], np.float32)
    check(g, {"x": x, "p": p}, x * p, ["MUL"])


def test_two_outputs_that_are_one_tensor_are_refused():
    import edgelite
    from edgelite.errors import GraphError

    g = graph(x=(2, 3))
    g.node("y", "Relu", ["x"], T=F32)
    g.node("z", "Identity", ["y"], T=F32)
    with pytest.raises(GraphError, match="outputs 'y' and 'z' are the same tensor"):
        edgelite.convert(g.bytes(), outputs=["y", "z"])
