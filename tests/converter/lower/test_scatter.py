"""converter/lower/scatter.py: ScatterNd and the TensorScatter ops, one node each, against
numpy references of TF's semantics (array_ops.cc, tf.tensor_scatter_nd_* docs; CPU kernels:
duplicates sum for ScatterNd / Add / Sub, the last wins for Update, all count for Max /
Min), constant and computed indices, with and without duplicates, and the exact builtins."""

import numpy as np
import pytest

from edgelite.errors import DTypeError, ShapeError

from .lowering import F32, I32, I64, check, floats, graph, rng

COVERED = {"ScatterNd", "TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub",
           "TensorScatterMax", "TensorScatterMin"}


def reference(op, tensor, indices, updates):
    """TF's loop: each index tuple's slice applied in order."""
    out = tensor.copy()
    nd = indices.shape[-1]
    flat = updates.reshape((-1,) + tensor.shape[nd:])
    apply = {"TensorScatterUpdate": lambda a, u: u, "TensorScatterAdd": np.add,
             "TensorScatterSub": np.subtract, "TensorScatterMax": np.maximum,
             "TensorScatterMin": np.minimum, "ScatterNd": np.add}[op]
    for k, tup in enumerate(indices.reshape(-1, nd)):
        out[tuple(tup)] = apply(out[tuple(tup)], flat[k])
    return out


def tensor_graph(op, x, idx, upd, computed=False):
    g = graph(x=(x.shape, x.dtype), u=(upd.shape, upd.dtype),
              **({"i": (idx.shape, idx.dtype)} if computed else {}))
    if not computed:
        g.const("i", idx)
    g.node("y", op, ["x", "i", "u"], T=x.dtype, Tindices=idx.dtype)
    return g


def feeds(x, idx, upd, computed):
    return {"x": x, "u": upd, **({"i": idx} if computed else {})}


# -- ScatterNd -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.bool_])
def test_scatter_nd_sums_duplicates(dtype):
    idx = np.array([[1, 0], [3, 2], [1, 0]], np.int64)
    upd = (floats(rng(), 3) * 10).astype(dtype)
    g = graph(u=(upd.shape, upd.dtype))
    g.const("i", idx)
    g.const("s", np.array([4, 3], np.int64))
    g.node("y", "ScatterNd", ["i", "u", "s"], T=upd.dtype, Tindices=I64)
    want = reference("ScatterNd", np.zeros((4, 3), dtype), idx, upd)
    check(g, {"u": upd}, want, ["SCATTER_ND"])


def test_scatter_nd_with_computed_int64_indices():
    idx = np.array([[2], [0], [2]], np.int64)
    upd = floats(rng(), 3, 2)
    g = graph(i=(idx.shape, idx.dtype), u=upd.shape)
    g.const("s", np.array([3, 2], np.int64))
    g.node("y", "ScatterNd", ["i", "u", "s"], T=F32, Tindices=I64)
    want = reference("ScatterNd", np.zeros((3, 2), np.float32), idx, upd)
    check(g, {"i": idx, "u": upd}, want, ["CAST", "SCATTER_ND"])


def test_scatter_nd_refusals():
    upd = floats(rng(), 2)
    g = graph(u=upd.shape)
    g.const("i", np.array([[1], [4]], np.int32))
    g.const("s", np.array([4], np.int32))
    g.node("y", "ScatterNd", ["i", "u", "s"], T=F32, Tindices=I32)
    with pytest.raises(ShapeError, match=r"index tuple 1 \[4\] lies outside the shape \[4\]"):
        check(g, {"u": upd}, None, [])
    g = graph(u=(2,))
    g.const("i", np.array([[1], [2]], np.int32))
    g.const("s", np.array([4, 2], np.int32))
    g.node("y", "ScatterNd", ["i", "u", "s"], T=F32, Tindices=I32)
    with pytest.raises(ShapeError, match=r"the updates have shape \[2\]; .* take \[2, 2\]"):
        check(g, {"u": upd}, None, [])
    g = graph(u=((2,), np.dtype(np.int16)))
    g.const("i", np.array([[1], [2]], np.int32))
    g.const("s", np.array([4], np.int32))
    g.node("y", "ScatterNd", ["i", "u", "s"], T=np.dtype(np.int16), Tindices=I32)
    with pytest.raises(DTypeError, match="int16"):
        check(g, {"u": np.ones(2, np.int16)}, None, [])


# -- TensorScatter with constant indices ------------------------------------------------------
CONST_OPS = {"TensorScatterUpdate": ["SCATTER_ND", "SELECT_V2"],
             "TensorScatterAdd": ["SCATTER_ND", "ADD"], "TensorScatterSub": ["SCATTER_ND", "SUB"],
             "TensorScatterMax": ["SCATTER_ND", "MAXIMUM", "SELECT_V2"],
             "TensorScatterMin": ["SCATTER_ND", "MINIMUM", "SELECT_V2"]}


@pytest.mark.parametrize("op", sorted(CONST_OPS))
@pytest.mark.parametrize("nd", [1, 2])
def test_constant_distinct_indices(op, nd):
    x = floats(rng(), 5, 3, 2)
    idx = np.array([[4, 1], [0, 2], [2, 0]], np.int32)[:, :nd]
    upd = floats(rng(), 3, *x.shape[nd:]) * 3
    check(tensor_graph(op, x, idx, upd), {"x": x, "u": upd}, reference(op, x, idx, upd),
          CONST_OPS[op])


@pytest.mark.parametrize("op, ops", [
    ("TensorScatterUpdate", ["GATHER", "SCATTER_ND", "SELECT_V2"]),  # the last of each kept
    ("TensorScatterAdd", ["SCATTER_ND", "ADD"]),
    # two layers of distinct indices: [1, 4, 0] then [1]
    ("TensorScatterMax", ["GATHER", "SCATTER_ND", "MAXIMUM", "SELECT_V2"] * 2),
    ("TensorScatterMin", ["GATHER", "SCATTER_ND", "MINIMUM", "SELECT_V2"] * 2)])
def test_constant_duplicate_indices(op, ops):
    x = floats(rng(), 6, 2)
    idx = np.array([[1], [4], [1], [0]], np.int64)
    upd = floats(rng(), 4, 2) * 4
    check(tensor_graph(op, x, idx, upd), {"x": x, "u": upd}, reference(op, x, idx, upd),
          ops)


def test_update_covering_everything_is_one_scatter():
    x = np.arange(6, dtype=np.int32).reshape(3, 2)
    idx = np.array([[2], [0], [1], [0]], np.int32)
    upd = -np.arange(8, dtype=np.int32).reshape(4, 2)
    check(tensor_graph("TensorScatterUpdate", x, idx, upd), {"x": x, "u": upd},
          reference("TensorScatterUpdate", x, idx, upd), ["GATHER", "SCATTER_ND"])


def test_update_with_batched_index_tuples_of_bools():
    x = np.zeros((4, 4), bool)
    idx = np.array([[[0, 1], [3, 3]], [[2, 2], [0, 1]]], np.int32)
    upd = np.array([[True, True], [True, False]])
    check(tensor_graph("TensorScatterUpdate", x, idx, upd), {"x": x, "u": upd},
          reference("TensorScatterUpdate", x, idx, upd),
          ["RESHAPE", "GATHER", "SCATTER_ND", "SELECT_V2"])


# -- TensorScatter with computed indices -------------------------------------------------------
# The n x n comparison of the index tuples' flat positions: which tuples a later (Update) or
# an earlier (Max / Min) duplicate overrides.
_PAIRS = ["SUM", "RESHAPE", "RESHAPE", "EQUAL", "LOGICAL_AND", "REDUCE_ANY"]
COMPUTED_OPS = {
    "TensorScatterAdd": ["SCATTER_ND", "ADD"], "TensorScatterSub": ["SCATTER_ND", "SUB"],
    # zero the overridden updates, scatter them and a bool mask, select
    "TensorScatterUpdate": _PAIRS + ["SELECT_V2", "SCATTER_ND", "SCATTER_ND", "SELECT_V2"],
    # each update becomes its group's extreme (SELECT_V2 + REDUCE over the n x n pairs)
    **{f"TensorScatter{k}": _PAIRS + ["RESHAPE", "RESHAPE", "SELECT_V2", f"REDUCE_{k.upper()}",
                                      "SELECT_V2", "SCATTER_ND", f"{k.upper()}IMUM",
                                      "SCATTER_ND", "SELECT_V2"] for k in ("Max", "Min")}}


@pytest.mark.parametrize("op", sorted(COMPUTED_OPS))
def test_computed_indices_with_duplicates(op):
    x = floats(rng(), 5, 3)
    idx = np.array([[3], [1], [3], [0], [3]], np.int32)
    upd = floats(rng(), 5, 3) * 3
    check(tensor_graph(op, x, idx, upd, computed=True), feeds(x, idx, upd, True),
          reference(op, x, idx, upd), COMPUTED_OPS[op])


def test_computed_int64_tuples_of_ints():
    """int64 tuples of length 2 in a batch: CAST to int32, flat positions from a MUL by the
    strides, updates and tuples flattened to rows."""
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    idx = np.array([[[1, 2], [0, 0]], [[1, 2], [1, 1]]], np.int64)
    upd = -np.arange(16, dtype=np.int32).reshape(2, 2, 4)
    check(tensor_graph("TensorScatterMax", x, idx, upd, computed=True),
          feeds(x, idx, upd, True), reference("TensorScatterMax", x, idx, upd),
          ["CAST", "RESHAPE", "MUL", "SUM", "RESHAPE", "RESHAPE", "EQUAL", "LOGICAL_AND",
           "REDUCE_ANY", "RESHAPE", "RESHAPE", "SELECT_V2", "REDUCE_MAX", "SELECT_V2",
           "SCATTER_ND", "MAXIMUM", "SCATTER_ND", "SELECT_V2"])


def test_too_many_computed_tuples_are_refused():
    x = floats(rng(), 5000)
    idx = np.zeros((5000, 1), np.int32)
    upd = floats(rng(), 5000)
    with pytest.raises(ShapeError, match="5000 computed index tuples: .* make the indices "
                                         "constant"):
        check(tensor_graph("TensorScatterUpdate", x, idx, upd, computed=True),
              feeds(x, idx, upd, True), None, [])
