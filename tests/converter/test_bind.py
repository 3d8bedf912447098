"""Placeholders bound to constants (converter/bind.py, `--set NAME=VALUE`): values are
parsed and checked against the placeholder's dtype and shape, bad ones get one line naming
the placeholder, and a cond a bound placeholder decides keeps one branch."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, check, convert_detailed
from edgelite.converter.bind import bind_placeholders, parse_set, parse_value
from edgelite.errors import DTypeError, GraphError, ShapeError
from edgelite.converter.tf_tensor import tensor_to_numpy

from .lower.lowering import BOOL, F32, I32, floats, graph, rng


@pytest.mark.parametrize("text, value", [
    ("true", np.True_), ("False", np.False_), ("1", np.int64(1)), ("-3", np.int64(-3)),
    ("1.0", np.float64(1.0)), ("2.5e-1", np.float64(0.25)), (" [1, 2, 3] ", [1, 2, 3]),
    ("[[0.5, 1], [2, 3]]", [[0.5, 1.0], [2.0, 3.0]]), ("[true, false]", [True, False]),
    ("[]", np.zeros(0))])
def test_values(text, value):
    got = parse_value(text)
    want = np.asarray(value)
    assert got.shape == want.shape and got.dtype.kind == want.dtype.kind
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("text", ["hello", "[1, 2", "[1, [2]]", "{'a': 1}", "'x'", "",
                                  "None", "1j"])
def test_what_is_not_a_value(text):
    with pytest.raises(GraphError, match=r"^--set 'x': .* is not a value --set takes: "
                       r"true/false, a number, or a list of them like \[1, 2, 3\]$"):
        parse_set(f"x={text}")


def test_name_and_value():
    name, value = parse_set(" keep_prob = 1.0")
    assert name == "keep_prob" and value == 1.0
    with pytest.raises(GraphError, match=r"^--set 'keep_prob': expected NAME=VALUE, e\.g\. "
                       r"is_training=false or keep_prob=1\.0$"):
        parse_set("keep_prob")


def _placeholders():
    g = graph(x=(2, 3), is_training=((), BOOL), mode=((), I32), bias=((3,), F32),
              rows=((-1, 3), F32))
    g.const("default", np.float32(0.5))
    g.node("rate", "PlaceholderWithDefault", ["default"], dtype=F32)
    g.gd.node[-1].attr["shape"].shape.SetInParent()
    return g.gd


def _value(gd, name):
    node = next(n for n in gd.node if n.name == name)
    assert node.op == "Const" and not node.input
    return tensor_to_numpy(node.attr["value"].tensor, name)


def test_binding_makes_each_placeholder_a_constant_of_its_dtype():
    gd = _placeholders()
    bind_placeholders(gd, {"is_training": parse_value("0"), "mode:0": "2", "bias": [1, 2, 3],
                           "rate": 1, "rows": np.ones((5, 3))})
    for name, want in [("is_training", np.False_), ("mode", np.int32(2)),
                       ("bias", np.array([1, 2, 3], np.float32)), ("rate", np.float32(1)),
                       ("rows", np.ones((5, 3), np.float32))]:
        got = _value(gd, name)
        assert got.dtype == want.dtype and got.shape == np.shape(want), name
        np.testing.assert_array_equal(got, want)
    assert next(n for n in gd.node if n.name == "x").op == "Placeholder"


@pytest.mark.parametrize("values, error, message", [
    ({"is_trainig": True}, GraphError, "--set 'is_trainig': the graph has no placeholder of "
     "that name; did you mean 'is_training'?"),
    ({"zzz": 1}, GraphError, "--set 'zzz': the graph has no placeholder of that name; its "
     "placeholders: 'x', 'is_training', 'mode', 'bias', 'rows', 'rate'"),
    ({"default": 1}, GraphError, "--set 'default': the node is a Const, not a placeholder; "
     "--set binds Placeholder / PlaceholderWithDefault nodes"),
    ({"x:1": 1}, GraphError, "--set 'x:1': the graph has no placeholder of that name; did you "
     "mean 'x'?"),
    ({"is_training": 2}, DTypeError, "--set 'is_training': the placeholder is bool; give "
     "true/false (or 1/0)"),
    ({"mode": 1.5}, DTypeError, "--set 'mode': the placeholder is int32; give an integer"),
    ({"mode": 2 ** 40}, DTypeError, "--set 'mode': the value does not fit the placeholder's "
     "int32 (-2147483648 to 2147483647)"),
    ({"bias": True}, DTypeError, "--set 'bias': the placeholder is float32; give a number"),
    ({"bias": [1, 2]}, ShapeError, "--set 'bias': the placeholder has shape [3], the value [2]"),
    ({"mode": [1]}, ShapeError, "--set 'mode': the placeholder has shape [] (a scalar), the "
     "value [1]"),
    ({"rows": [1, 2, 3]}, ShapeError, "--set 'rows': the placeholder has shape [?, 3], the "
     "value [3]"),
    ({"bias": [[1], [2, 3]]}, GraphError, "--set 'bias': the value is not an array of numbers"),
])
def test_a_bad_binding_is_one_line(values, error, message):
    with pytest.raises(error) as e:
        bind_placeholders(_placeholders(), values)
    assert str(e.value) == message


def _cond(pred_name: str = "is_training"):
    """TF1 tf.cond (Switch / Merge) on a bool placeholder: relu(x) if true, -x if false."""
    g = graph(x=(2, 3), is_training=((), BOOL))
    g.node("sw", "Switch", ["x", pred_name], T=F32)
    g.node("f", "Neg", ["sw:0"], T=F32)
    g.node("t", "Relu", ["sw:1"], T=F32)
    g.node("y", "Merge", ["f", "t"], T=F32, N=2)
    return g


@pytest.mark.parametrize("value, ops", [("false", {"NEG": 1}), ("true", {"RELU": 1})])
def test_a_cond_on_a_bound_placeholder_keeps_one_branch(value, ops):
    result = convert_detailed(_cond().bytes(), ConvertOptions(
        outputs=["y"], set_values={"is_training": value}))
    assert result.graph.op_counts() == ops
    assert [t.name for t in result.graph.inputs] == ["x"]   # the bound one is no input
    unbound = convert_detailed(_cond().bytes(), ConvertOptions(outputs=["y"]))
    assert unbound.graph.op_counts() == {"IF": 1}


def test_an_int_placeholder_deciding_a_cond_through_equal():
    g = graph(x=(2, 3), mode=((), I32))
    g.const("one", np.int32(1))
    g.node("is_train", "Equal", ["mode", "one"], T=I32)
    g.node("sw", "Switch", ["x", "is_train"], T=F32)
    g.node("f", "Neg", ["sw:0"], T=F32)
    g.node("t", "Relu", ["sw:1"], T=F32)
    g.node("y", "Merge", ["f", "t"], T=F32, N=2)
    result = convert_detailed(g.bytes(), ConvertOptions(outputs=["y"], set_values={"mode": 0}))
    assert result.graph.op_counts() == {"NEG": 1}
    from edgelite.interpreter import Interpreter
    interp = Interpreter(model_content=result.model)
    x = floats(rng(), 2, 3)
    np.testing.assert_array_equal(interp.get_signature_runner()(x=x)["y"], -x)


def test_a_bound_name_cannot_also_be_an_input():
    with pytest.raises(GraphError, match=r"^'is_training' is given a value with --set, so it "
                       "cannot also be an input$"):
        convert_detailed(_cond().bytes(), ConvertOptions(
            inputs=["x", "is_training"], outputs=["y"], set_values={"is_training": False}))


def test_check_takes_values_too():
    report = check(_cond().bytes(), outputs=["y"], set_values={"is_training": True})
    assert report.ok and set(report.ops) == {"Placeholder", "Const", "If", "Relu", "Identity"}
    assert report.ops["Placeholder"].nodes == ["x"]
    with pytest.raises(GraphError, match="did you mean 'is_training'"):
        check(_cond().bytes(), outputs=["y"], set_values={"is_trainnig": True})
