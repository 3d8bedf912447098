"""fold_broadcast_to: a binary op reads a BROADCAST_TO's input when its own broadcasting gives
the same output (TF's optimize_broadcast_like_pass): exact op counts, the same numbers."""

import numpy as np
import pytest

from edgelite.converter.passes import fold_broadcast_to

from ..irgraph import NONE, check, input_graph, rand


def _graph(op_type, x_shape, y_shape, target, second_reader=False):
    g, x = input_graph(x_shape)
    y = g.const("y", rand(*y_shape))
    b = g.tensor("b", np.float32, tuple(target))
    g.add_op("BROADCAST_TO", [y, g.const("shape", np.asarray(target, np.int32))], [b])
    out_shape = tuple(np.broadcast_shapes(tuple(x_shape), tuple(target)))
    out = g.tensor("out", np.float32, out_shape)
    options = NONE if op_type in ("ADD", "SUB", "MUL", "DIV") else {}
    g.add_op(op_type, [x, b], [out], options)
    g.outputs = [out, b] if second_reader else [out]
    return g


@pytest.mark.parametrize("op_type", ["MUL", "ADD", "MAXIMUM", "SQUARED_DIFFERENCE"])
@pytest.mark.parametrize("y_shape", [(1, 5, 1), (7,), (2, 1, 7)])
def test_broadcast_done_by_the_op(op_type, y_shape):
    g = _graph(op_type, (2, 5, 7), y_shape, (2, 5, 7))
    check(g, fold_broadcast_to.run, rand(2, 5, 7), 1, {op_type: 1})


def test_a_broadcast_that_grows_the_output_is_kept():
    """y [5, 1] broadcast to [2, 5, 7] and added to x [1, 5, 7]: x + y alone is [1, 5, 7]."""
    g = _graph("ADD", (1, 5, 7), (5, 1), (2, 5, 7))
    assert fold_broadcast_to.run(g) == 0


def test_ranks_the_kernel_does_not_broadcast_are_kept():
    """MAXIMUM broadcasts up to rank 4 (MUL up to 6): a rank-5 MAXIMUM keeps its input."""
    shape = (1, 2, 3, 4, 5)
    g = _graph("MAXIMUM", shape, (5,), shape)
    assert fold_broadcast_to.run(g) == 0
    g = _graph("MUL", shape, (5,), shape)
    assert fold_broadcast_to.run(g) == 1


def test_a_broadcast_read_elsewhere_stays():
    g = _graph("MUL", (2, 5, 7), (7,), (2, 5, 7), second_reader=True)
    assert fold_broadcast_to.run(g) == 1
    assert g.op_counts() == {"BROADCAST_TO": 1, "MUL": 1}


def _select_graph(tile: tuple[int, ...], mask_shape=(2, 1)):
    """y = SELECT_V2(TILE(x > 0, tile), a, b): a Keras masked RNN step's state select."""
    g, x = input_graph(mask_shape)
    m = g.tensor("m", np.bool_, mask_shape)
    g.add_op("GREATER", [x, g.const("zero", np.float32(0))], [m])
    tiled_shape = tuple(d * r for d, r in zip(mask_shape, tile))
    t = g.tensor("t", np.bool_, tiled_shape)
    g.add_op("TILE", [m, g.const("reps", np.asarray(tile, np.int32))], [t])
    out = g.tensor("out", np.float32, (2, 4))
    g.add_op("SELECT_V2", [t, g.const("a", rand(2, 4)), g.const("b", rand(2, 4))], [out])
    g.outputs = [out]
    return g


def test_tile_of_unit_axes_feeds_select_v2_directly():
    g = _select_graph((1, 4))
    check(g, fold_broadcast_to.run, np.float32([[1.0], [-1.0]]), 1,
          {"GREATER": 1, "SELECT_V2": 1})


def test_tile_repeating_a_longer_axis_stays():
    g = _select_graph((2, 4), mask_shape=(1, 1))   # [1, 1] -> [2, 4]: both unit axes: folds
    assert fold_broadcast_to.run(g) == 1
    g = _select_graph((1, 2), mask_shape=(2, 2))   # a repeat of a length-2 axis: not a broadcast
    assert fold_broadcast_to.run(g) == 0 and g.op_counts()["TILE"] == 1
