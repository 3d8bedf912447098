"""converter/passes/loops.py: the WHILE-loop patterns the loop passes share -- counters,
static trip counts, and the item a reader takes from a list -- on small IR graphs."""

from types import SimpleNamespace

import numpy as np

from edgelite.converter.ir import Activation, Graph
from edgelite.converter.passes.loops import counters, int_constant, ints, takes_item, trip_count


def test_constants():
    g = Graph()
    assert ints(g.const("v", np.array([[1, 2], [3, 4]], np.int32))) == [1, 2, 3, 4]
    assert ints(g.tensor("x", np.int32, (2,))) is None
    assert int_constant(g.const("one", np.array([5], np.int64))) == 5
    assert int_constant(g.const("f", np.float32(5))) is None       # not an integer
    assert int_constant(g.const("two", np.int32([1, 2]))) is None  # not one element
    assert int_constant(None) is None


def _body(step=1, fused=Activation.NONE):
    """Loop variables (i, x): the body returns (i + step, x)."""
    body = Graph()
    i, x = body.tensor("i", np.int32, ()), body.tensor("x", np.float32, (3,))
    body.inputs = [i, x]
    nxt = body.tensor("i_next", np.int32, ())
    body.add_op("ADD", [i, body.const("step", np.int32(step))], [nxt],
                {"fused_activation_function": fused})
    body.outputs = [nxt, x]
    return body


def test_counters_start_at_zero_and_step_by_one():
    g = Graph()
    zero, seven = g.const("zero", np.int32(0)), g.const("seven", np.int32(7))
    x = g.tensor("x", np.float32, (3,))
    assert counters(SimpleNamespace(inputs=[zero, x]), _body()) == {0}
    assert counters(SimpleNamespace(inputs=[seven, x]), _body()) == set()
    assert counters(SimpleNamespace(inputs=[zero, x]), _body(step=2)) == set()
    assert counters(SimpleNamespace(inputs=[zero, x]), _body(fused=Activation.RELU)) == set()


def _cond(bounds, op="LESS"):
    """cond(i, x): LOGICAL_AND of `i < bound` for each bound."""
    cond = Graph()
    i, x = cond.tensor("i", np.int32, ()), cond.tensor("x", np.float32, (3,))
    cond.inputs = [i, x]
    tests = []
    for n, bound in enumerate(bounds):
        t = cond.tensor(f"t{n}", np.bool_, ())
        cond.add_op(op, [i, cond.const(f"n{n}", np.int32(bound))], [t])
        tests.append(t)
    while len(tests) > 1:
        both = cond.tensor(f"and{len(tests)}", np.bool_, ())
        cond.add_op("LOGICAL_AND", tests[-2:], [both])
        tests[-2:] = [both]
    cond.outputs = tests
    return cond


def test_trip_count_is_the_smallest_bound_on_a_counter():
    assert trip_count(_cond([5]), frozenset({0})) == 5
    assert trip_count(_cond([9, 4, 6]), frozenset({0})) == 4
    assert trip_count(_cond([5]), frozenset({1})) is None   # i is no counter
    assert trip_count(_cond([5], op="GREATER"), frozenset({0})) is None


def _slice(begin, shrink=1, **more):
    g = Graph()
    lst = g.tensor("list", np.float32, (5, 3))
    consts = [g.const(n, np.int32(v)) for n, v in (("b", [begin]), ("e", [begin + 1]),
                                                   ("s", [1]))]
    return g.add_op("STRIDED_SLICE", [lst, *consts], [g.tensor("item", np.float32)],
                    {"shrink_axis_mask": shrink, **more})


def test_takes_item_from_the_start_or_the_end():
    assert takes_item(_slice(2), 2, 5) and takes_item(_slice(-3), 2, 5)
    assert not takes_item(_slice(1), 2, 5)
    assert not takes_item(_slice(2, shrink=0), 2, 5)
    assert not takes_item(_slice(2, begin_mask=1), 2, 5)
