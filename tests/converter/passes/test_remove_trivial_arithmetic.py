"""remove_trivial_arithmetic on small graphs: exact op counts after, the same numbers before and
after."""

import numpy as np
import pytest

from edgelite.converter.passes import remove_trivial_arithmetic

from ..irgraph import NONE, check, input_graph, rand, then


@pytest.mark.parametrize("op,c", [("MUL", 1.0), ("DIV", 1.0), ("ADD", 0.0), ("SUB", 0.0)])
def test_remove_trivial_arithmetic(op, c):
    g, x = input_graph()
    r = then(g, "RELU", [x], "relu")
    g.outputs = [then(g, "ABS", [then(g, op, [r, g.const("c", np.full(7, c, np.float32))],
                                      "noop", **NONE)], "abs")]
    check(g, remove_trivial_arithmetic.run, rand(2, 5, 7), 1, {"ABS": 1, "RELU": 1})


def test_trivial_arithmetic_that_broadcasts_is_kept():
    g, x = input_graph((2, 5, 1))
    g.outputs = [then(g, "MUL", [x, g.const("ones", np.ones(7, np.float32))], "grow", **NONE)]
    assert remove_trivial_arithmetic.run(g) == 0


def _select_graph(kind: str, cond: np.ndarray, picked_shape=(2, 5, 7)):
    """relu(SELECT(cond, x, neg(y))) with cond a constant."""
    g, x = input_graph(picked_shape)
    n = then(g, "NEG", [x], "neg")
    picked = then(g, kind, [g.const("cond", cond), x, n], "pick")
    g.outputs = [then(g, "RELU", [picked], "relu")]
    return g


@pytest.mark.parametrize("kind", ["SELECT", "SELECT_V2"])
@pytest.mark.parametrize("value, left", [(True, {"RELU": 1}), (False, {"NEG": 1, "RELU": 1})])
def test_a_select_on_a_constant_condition_is_its_operand(kind, value, left):
    """Dropout with keep_prob = 1 leaves where(all true, x, 0) (lower/random.py)."""
    g = _select_graph(kind, np.full((2, 5, 7), value))
    # (+1: the NEG nothing reads any more, when x is picked)
    check(g, lambda g: remove_trivial_arithmetic.run(g) + _dead(g), rand(2, 5, 7), 1 + value,
          left)


def _dead(g) -> int:
    from edgelite.converter.passes import remove_dead
    return remove_dead.run(g)


def test_a_select_is_kept_when_the_condition_varies_or_the_operand_broadcasts():
    mixed = _select_graph("SELECT_V2", np.arange(70).reshape(2, 5, 7) % 2 == 0)
    assert remove_trivial_arithmetic.run(mixed) == 0
    grows = _select_graph("SELECT_V2", np.ones((2, 5, 7), bool), picked_shape=(5, 7))
    assert remove_trivial_arithmetic.run(grows) == 0


def test_a_select_before_shapes_are_inferred():
    """Between passes the operands' shapes may be unknown: they are inferred first."""
    g = _select_graph("SELECT_V2", np.ones((1, 7), bool))
    assert next(op for op in g.ops if op.type == "NEG").outputs[0].shape is None
    assert remove_trivial_arithmetic.run(g) == 1
    assert g.op_counts() == {"NEG": 1, "RELU": 1}
    assert g.ops[-1].inputs[0] is g.inputs[0]


def _select_chain(links: int):
    """x -> (NEG -> SELECT_V2(all true, h, neg(h)))* -> RELU, no shapes inferred yet."""
    g, h = input_graph((1, 7))
    for k in range(links):
        n = then(g, "NEG", [h], f"neg{k}")
        h = then(g, "SELECT_V2", [g.const(f"c{k}", np.ones((1, 7), bool)), h, n], f"pick{k}")
    g.outputs = [then(g, "RELU", [h], "relu")]
    return g


def test_selects_before_shapes_look_at_each_op_once():
    """Shapes inferred for one SELECT are not looked for again for the next: the calls made
    grow 4x with 4x the SELECTs (a scan from the first op per SELECT made it 6.5x here)."""
    import cProfile
    import pstats
    calls = []
    for links in (50, 200):
        g = _select_chain(links)
        prof = cProfile.Profile()
        assert prof.runcall(remove_trivial_arithmetic.run, g) == links
        assert g.op_counts() == {"NEG": links, "RELU": 1}  # (the NEGs: remove_dead's job)
        calls.append(pstats.Stats(prof).total_calls)
    assert calls[1] / calls[0] < 4.4, calls
