"""narrow_int64_arithmetic: LiteRT refuses int64 FLOOR_DIV / DIV ("Type 'INT64' is not
supported by floor_div"), ABS, SIGN, SQUARED_DIFFERENCE and POW, so those whose operands
and result provably fit int32 are computed in int32 between CASTs -- the converted files
load and run in LiteRT (lowering.check runs them there) -- and the others are refused in
one line naming the node."""

import numpy as np
import pytest

from edgelite.converter.ir import Graph
from edgelite.converter.passes import narrow_int64_arithmetic
from edgelite.errors import UnsupportedOpError

from ..lower.lowering import F32, I32, I64, check, floats, graph, rng


def test_floor_div_of_argmax_indices_runs_in_int32():
    """tf.argmax(x) // 3 with the default int64 indices: bounded by the axis size."""
    x = floats(rng(), 4, 10)
    g = graph(x=x.shape)
    g.const("axis", np.int32(1))
    g.node("am", "ArgMax", ["x", "axis"], T=F32, Tidx=I32, output_type=I64)
    g.const("three", np.int64(3))
    g.node("y", "FloorDiv", ["am", "three"], T=I64)
    check(g, {"x": x}, np.argmax(x, 1) // 3, ["ARG_MAX", "CAST", "FLOOR_DIV", "CAST"])


@pytest.mark.parametrize("op, divide", [("FloorDiv", np.floor_divide),
                                        ("Div", lambda a, b: np.trunc(a / b).astype(a.dtype))])
def test_division_of_widened_int32_values_drops_the_casts(op, divide):
    """Operands cast from int32 are read in int32 directly; negative values keep TF's
    rounding (floor for FloorDiv, toward zero for Div)."""
    a = np.array([-7, 7, 9, -9, 0, -2**31], np.int32)
    b = np.array([2, 200, 4, 4, 3, 5], np.uint8)  # never -1: -2^31 // b fits int32
    g = graph(a=(a.shape, I32), b=(b.shape, b.dtype))
    g.node("a64", "Cast", ["a"], SrcT=I32, DstT=I64)
    g.node("b64", "Cast", ["b"], SrcT=b.dtype, DstT=I64)
    g.node("y", op, ["a64", "b64"], T=I64)
    want = divide(a.astype(np.int64), b.astype(np.int64))
    check(g, {"a": a, "b": b}, want,
          ["CAST", "FLOOR_DIV" if op == "FloorDiv" else "DIV", "CAST"])  # b: uint8 -> int32


def test_shape_arithmetic_folds_away():
    """tf.shape(x) // 2 style arithmetic on int64 shapes folds to a constant: nothing to
    narrow, no CAST left."""
    x = floats(rng(), 6, 4)
    g = graph(x=x.shape)
    g.node("s", "Shape", ["x"], T=F32, out_type=I64)
    g.const("half", np.array([2, 1], np.int64))
    g.node("q", "FloorDiv", ["s", "half"], T=I64)
    g.const("one", np.float32(1))
    g.node("y", "Fill", ["q", "one"], T=F32, index_type=I64)
    check(g, {"x": x}, np.ones((3, 4), np.float32), ["FILL"])


def test_int64_model_input_is_refused_in_one_line():
    g = graph(ids=((5,), I64))
    g.const("k", np.int64(1000))
    g.node("y", "FloorDiv", ["ids", "k"], T=I64)
    with pytest.raises(UnsupportedOpError, match=r"^operator 'y' \(FLOOR_DIV\): int64 FLOOR_DIV, "
                       r"which LiteRT cannot run \(its kernel takes no INT64\): 'ids' \(a "
                       r"model input\) may not fit int32; cast the operands to int32 in the "
                       r"model$"):
        check(g, {"ids": np.arange(5, dtype=np.int64)}, None, [])


def test_products_that_may_overflow_int32_are_refused():
    a = np.array([3, 4], np.int32)
    g = graph(a=(a.shape, I32))
    g.node("a64", "Cast", ["a"], SrcT=I32, DstT=I64)
    g.node("sq", "Mul", ["a64", "a64"], T=I64)
    g.const("two", np.int64(2))
    g.node("y", "FloorDiv", ["sq", "two"], T=I64)
    with pytest.raises(UnsupportedOpError, match=r"'sq' \(values in \[-\d+, \d+\]\) may not "
                                                 r"fit int32"):
        check(g, {"a": a}, None, [])


def test_bounds():
    g = Graph()
    b = narrow_int64_arithmetic.Bounds(g)
    c = g.const("c", np.array([-5, 7], np.int64))
    assert b.of(c) == (-5, 7)
    assert b.of(g.const("e", np.zeros(0, np.int64))) == (0, 0)
    assert b.of(g.tensor("i8", np.int8)) == (-128, 127)
    assert b.of(g.tensor("wide", np.int64)) is None  # no producer: a model input
    assert narrow_int64_arithmetic._arithmetic("MUL", (-5, 7), (2, 3)) == (-15, 21)
    assert narrow_int64_arithmetic._arithmetic("FLOOR_MOD", (-100, 100), (-4, 3)) == (-4, 4)
    # a quotient by -1 negates; by divisors that exclude -1 it stays between 0 and a (or
    # is at least halved)
    assert narrow_int64_arithmetic._arithmetic("FLOOR_DIV", (-2**31, 5), (-1, 3)) == \
        (-2**31, 2**31)
    assert narrow_int64_arithmetic._arithmetic("FLOOR_DIV", (-2**31, 5), (1, 3))[0] == -2**31
    assert narrow_int64_arithmetic._arithmetic("POW", (-3, 2), (0, 3)) == (-27, 27)
    assert narrow_int64_arithmetic._arithmetic("SQUARED_DIFFERENCE", (0, 5), (-2, 1)) == \
        (0, 49)
    assert narrow_int64_arithmetic._arithmetic("SUB", (0, 10), (-2, 3)) == (-3, 12)


def test_top_k_and_unique_bound_only_their_index_outputs():
    """TOPK_V2 and UNIQUE: output 1 holds indexes (below 2^31); output 0 holds values of
    input 0, bounded as that input is (an int64 model input: unknown)."""
    g = Graph()
    ids, k = g.tensor("ids", np.int64, (8,)), g.const("k", np.int32(3))
    small = g.tensor("small", np.int64, (8,))
    g.add_op("CAST", [g.tensor("i16", np.int16, (8,))], [small], name="small")
    b = narrow_int64_arithmetic.Bounds(g)
    for kind, args in (("TOPK_V2", [k]), ("UNIQUE", [])):
        for source, value_bounds in ((ids, None), (small, (-2**15, 2**15 - 1))):
            values = g.tensor(f"{kind}_{source.name}_v", np.int64, (3,))
            index = g.tensor(f"{kind}_{source.name}_i", np.int32, (3,))
            g.add_op(kind, [source, *args], [values, index], name=values.name)
            assert b.of(values) == value_bounds
            assert b.of(index) == (-2**31, 2**31 - 1)  # int32: its dtype's range
    wide = g.tensor("wide_index", np.int64, (3,))
    g.add_op("TOPK_V2", [ids, k], [g.tensor("v", np.int64, (3,)), wide], name="top")
    assert b.of(wide) == (0, 2**31 - 1)


def test_run_rewrites_each_int64_division():
    g = Graph()
    a = g.tensor("a", np.int16, (3,))
    g.inputs = [a]
    wide, y = g.tensor("wide", np.int64, (3,)), g.tensor("y", np.int64, (3,))
    g.add_op("CAST", [a], [wide], name="wide")
    g.add_op("FLOOR_DIV", [wide, g.const("d", np.array([3, -3, 7], np.int64))], [y], name="y")
    g.outputs = [y]
    assert narrow_int64_arithmetic.run(g) == 1
    assert [op.type for op in g.ops] == ["CAST", "CAST", "FLOOR_DIV", "CAST"]
    assert g.ops[2].inputs[1].dtype == np.int32 and g.ops[3].outputs[0] is y
    assert narrow_int64_arithmetic.run(g) == 0


@pytest.mark.parametrize("op, tfl, ref", [
    ("Abs", "ABS", np.abs), ("Sign", "SIGN", np.sign),
    ("SquaredDifference", "SQUARED_DIFFERENCE", lambda a: (a - 3) ** 2),
    ("Pow", "POW", lambda a: a ** 3)])
def test_other_int64_ops_litert_refuses_run_in_int32(op, tfl, ref):
    """int64 values cast from int8 (so a cube fits int32)."""
    a = np.array([-100, -7, 0, 5, 127], np.int8)
    g = graph(a=(a.shape, a.dtype))
    g.node("a64", "Cast", ["a"], SrcT=a.dtype, DstT=I64)
    inputs = ["a64"]
    if op in ("SquaredDifference", "Pow"):
        g.const("c", np.int64(3))
        inputs.append("c")
    g.node("y", op, inputs, T=I64)
    check(g, {"a": a}, ref(a.astype(np.int64)), ["CAST", tfl, "CAST"])


def test_quotient_of_int32_values_by_minus_one_is_refused():
    """-2^31 / -1 = 2^31 does not fit int32 (and traps in C++)."""
    g = graph(a=((2,), I32), b=((2,), I32))
    g.node("a64", "Cast", ["a"], SrcT=I32, DstT=I64)
    g.node("b64", "Cast", ["b"], SrcT=I32, DstT=I64)
    g.node("y", "FloorDiv", ["a64", "b64"], T=I64)
    with pytest.raises(UnsupportedOpError, match=r"its result may not fit int32 \(operands in "
                                                 r"\[-2147483648, 2147483647\], "):
        check(g, {"a": np.zeros(2, np.int32), "b": np.ones(2, np.int32)}, None, [])
