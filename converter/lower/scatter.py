"""ScatterNd and the TensorScatter ops (Update, Add, Sub, Max, Min), all on SCATTER_ND.

SCATTER_ND (scatter_nd.cc) writes a zero tensor with each update slice *added* at its
index tuple, so duplicates sum. TF defines (tensorflow/core/ops/array_ops.cc and the
tf.tensor_scatter_nd_* docs, CPU kernels measured):

* ScatterNd: duplicates sum -> SCATTER_ND as it is;
* TensorScatterAdd / Sub: ``tensor +- sum of the updates at each index`` -> ADD / SUB of
  one SCATTER_ND (TF's converter writes eight ops for Add: GATHER_ND, ADD and the
  Update pattern; TensorScatterSub is Flex there);
* TensorScatterUpdate: the elements at the indices replaced, the last of duplicates
  winning. Constant indices (the usual case) are deduplicated at conversion time and the
  replaced elements are a constant mask: SELECT_V2(mask, SCATTER_ND(updates), tensor).
  Computed indices scatter a bool mask too (bool SCATTER_ND ORs) and zero every update
  that a later duplicate overrides (an n x n comparison of the index tuples), so the sum
  SCATTER_ND makes is the last update;
* TensorScatterMax / Min: the maximum (minimum) of the tensor and every update at an
  index. Constant indices: one SCATTER_ND / MAXIMUM / SELECT_V2 round per layer of
  distinct indices (one round without duplicates); computed ones: each update is first
  replaced by the maximum over its duplicates (n x n), the others zeroed, as for Update.

Index tuples outside the tensor are refused when the indices are constant (TF fails
them); computed ones fail the invoke, as in TF and LiteRT. Indices become int32
(SCATTER_ND takes nothing else).
"""

from __future__ import annotations

import numpy as np

from edgelite.errors import ShapeError
from ..ir import Activation, Tensor
from .context import LowerCtx, fail
from .einsum import static_shape
from .spec import INDEX, In, Lowering, NodeSpec, spec, vector_input

_D = np.dtype
_I32, _BOOL = _D(np.int32), _D(np.bool_)
# SCATTER_ND's updates (scatter_nd.cc); SELECT_V2 takes them all.
SCATTERABLE = frozenset(map(_D, (np.float32, np.int8, np.uint8, np.int32, np.int64, np.bool_)))
_SUMMABLE = frozenset(map(_D, (np.float32, np.int32, np.int64)))  # ADD / SUB without params
_ORDERED = SCATTERABLE - {_BOOL}  # MAXIMUM / MINIMUM
_NONE = dict(fused_activation_function=Activation.NONE)
# Computed indices with duplicates compare every pair of index tuples: an n x n (x slice)
# intermediate, bounded so a large scatter does not become a huge tensor.
MAX_PAIRWISE = 1 << 24


class Scatter:
    """One node's scatter operands: indices (int32, constant data or None), the updates
    as given, and the target shape."""

    def __init__(self, ctx: LowerCtx, node, idx: Tensor, updates: Tensor, shape) -> None:
        self.ctx, self.node, self.shape = ctx, node, tuple(shape)
        idx_shape = static_shape(ctx, node, idx)
        self.nd = idx_shape[-1] if idx_shape else -1
        if not idx_shape or self.nd > len(shape):
            raise fail(ShapeError, node, f"the indices have shape {list(idx_shape)}; their "
                       f"last dimension (the index tuple length) must lie in [0, {len(shape)}]")
        want = tuple(idx_shape[:-1]) + self.shape[self.nd:]
        got = static_shape(ctx, node, updates)
        if got != want:
            raise fail(ShapeError, node, f"the updates have shape {list(got)}; indices "
                       f"{list(idx_shape)} into shape {list(shape)} take {list(want)}")
        self.n = int(np.prod(idx_shape[:-1]))
        self.slice = self.shape[self.nd:]
        self.updates = updates
        self.data = None
        if idx.is_const:
            self.data = np.asarray(idx.data).reshape(self.n, self.nd).astype(np.int64)
            self._check_bounds()
            self.idx = ctx.const(node, "indices", self.data.astype(np.int32))
        else:
            self.idx = idx if idx.dtype == _I32 else \
                ctx.step(node, "CAST", [idx], "indices_int32", _I32)
        self.idx_shape = idx_shape
        self.shape_t = ctx.const(node, "shape", np.array(shape, np.int32))

    def _check_bounds(self) -> None:
        dims = np.array(self.shape[:self.nd], np.int64)
        bad = (self.data < 0) | (self.data >= dims)
        if bad.any():
            row, col = (int(v[0]) for v in np.nonzero(bad))
            raise fail(ShapeError, self.node, f"index tuple {row} {self.data[row].tolist()} "
                       f"lies outside the shape {list(self.shape)} (dimension {col})")

    def positions(self) -> np.ndarray:
        """Constant indices: the flat position of each tuple's slice."""
        if not self.nd:
            return np.zeros(self.n, np.int64)
        return np.ravel_multi_index(tuple(self.data.T), self.shape[:self.nd])

    def mask(self, rows=None) -> np.ndarray:
        """Constant indices: which elements the tuples (all, or `rows`) cover."""
        covered = np.zeros(self.shape, bool)
        data = self.data if rows is None else self.data[rows]
        covered[tuple(data.T)] = True
        return covered

    def scatter(self, updates: Tensor, suffix: str, idx: Tensor | None = None) -> Tensor:
        idx = self.idx if idx is None else idx
        return self.ctx.step(self.node, "SCATTER_ND", [idx, updates, self.shape_t], suffix,
                             updates.dtype)

    def rows(self, rows: np.ndarray, suffix: str) -> tuple[Tensor, Tensor]:
        """Constant indices: (indices, updates) of the tuples `rows` only."""
        ctx, node = self.ctx, self.node
        flat = _flat_updates(self)
        picked = ctx.step(node, "GATHER", [flat, ctx.const(node, f"{suffix}_picks",
                                                           rows.astype(np.int32))],
                          f"{suffix}_updates", flat.dtype, dict(axis=0, batch_dims=0))
        return ctx.const(node, f"{suffix}_indices", self.data[rows].astype(np.int32)), picked


def _layers(positions: np.ndarray) -> list[np.ndarray]:
    """The tuples split by occurrence: layer r holds each position's r-th tuple, so the
    tuples of one layer are distinct (in order)."""
    rank = np.zeros(len(positions), np.int64)
    seen: dict[int, int] = {}
    for j, p in enumerate(positions.tolist()):
        rank[j] = seen.get(p, 0)
        seen[p] = rank[j] + 1
    return [np.flatnonzero(rank == r) for r in range(int(rank.max()) + 1)] if len(rank) else []


# -- computed indices: duplicates found at run time ----------------------------------------------
def _duplicates(s: Scatter, later: bool) -> tuple[Tensor, Tensor]:
    """bool [n, n]: tuple i and j are equal; bool [n]: a later (earlier) tuple equals it."""
    ctx, node, n = s.ctx, s.node, s.n
    if n * n * max(1, int(np.prod(s.slice))) > MAX_PAIRWISE:
        raise fail(ShapeError, node, f"{n} computed index tuples: deduplicating them takes "
                   f"an {n} x {n} comparison, over edgelite's limit; make the indices "
                   "constant")
    idx = _tuples(s)
    strides = np.array([int(np.prod(s.shape[k + 1:s.nd])) for k in range(s.nd)], np.int32)
    scaled = ctx.step(node, "MUL", [idx, ctx.const(node, "strides", strides)], "scaled", _I32,
                      _NONE)
    flat = ctx.step(node, "SUM", [scaled, ctx.const(node, "tuple_axis", np.array([1], np.int32))],
                    "positions", _I32, dict(keep_dims=False))
    column = _reshaped(s, flat, [n, 1], "positions_column")
    row = _reshaped(s, flat, [1, n], "positions_row")
    same = ctx.step(node, "EQUAL", [column, row], "same", _BOOL)
    order = np.triu(np.ones((n, n), bool), 1) if later else np.tril(np.ones((n, n), bool), -1)
    other = ctx.step(node, "LOGICAL_AND", [same, ctx.const(node, "order", order)], "overridden",
                     _BOOL)
    dup = ctx.step(node, "REDUCE_ANY", [other, ctx.const(node, "pair_axis",
                                                         np.array([1], np.int32))],
                   "duplicate", _BOOL, dict(keep_dims=False))
    return same, _reshaped(s, dup, [n] + [1] * len(s.slice), "duplicate_slices")


def _reshaped(s: Scatter, t: Tensor, dims: list[int], suffix: str) -> Tensor:
    return s.ctx.step(s.node, "RESHAPE", [t, s.ctx.const(s.node, f"{suffix}_shape",
                                                          np.array(dims, np.int32))],
                      suffix, t.dtype, dict(new_shape=dims))


def _zero_duplicates(s: Scatter, dup: Tensor, values: Tensor) -> Tensor:
    """values with the updates of overridden duplicates set to 0 (the scatter's sum then
    holds one value per position); values are [n, slice...]."""
    zero = s.ctx.const(s.node, "zero", np.zeros((), values.dtype))
    return s.ctx.step(s.node, "SELECT_V2", [dup, zero, values], "kept", values.dtype)


def _flat_updates(s: Scatter) -> Tensor:
    if len(s.idx_shape) == 2:
        return s.updates
    return _reshaped(s, s.updates, [s.n, *s.slice], "update_rows")


def _tuples(s: Scatter) -> Tensor:
    """The indices as [n, nd] (to match updates flattened to [n, slice...])."""
    if len(s.idx_shape) == 2:
        return s.idx
    return _reshaped(s, s.idx, [s.n, s.nd], "index_rows")


def _covered(s: Scatter) -> Tensor:
    """Computed indices: bool mask of the elements they cover (bool SCATTER_ND ORs)."""
    ones = s.ctx.const(s.node, "ones", np.ones(s.idx_shape[:-1] + s.slice, bool))
    return s.scatter(ones, "covered")


# -- rules -----------------------------------------------------------------------------------
def scatter_nd(ctx: LowerCtx, node) -> None:
    static_shape(ctx, node, ctx.input(node, 2))  # folds a shape computed from static shapes
    shape = np.asarray(ctx.const_input(node, 2, "the shape")).reshape(-1)
    if (shape < 0).any():
        raise fail(ShapeError, node, f"shape {shape.tolist()[:8]} has a negative dimension")
    s = Scatter(ctx, node, ctx.input(node, 0), ctx.input(node, 1), shape.tolist())
    ctx.emit("SCATTER_ND", node, [s.idx, s.updates, s.shape_t], dtype=s.updates.dtype)


def _tensor_scatter(ctx: LowerCtx, node) -> tuple[Tensor, Scatter]:
    x = ctx.input(node, 0)
    return x, Scatter(ctx, node, ctx.input(node, 1), ctx.input(node, 2),
                      static_shape(ctx, node, x))


def tensor_scatter_update(ctx: LowerCtx, node) -> None:
    x, s = _tensor_scatter(ctx, node)
    if s.data is None:
        _, dup = _duplicates(s, later=True)
        values = s.scatter(_zero_duplicates(s, dup, _flat_updates(s)), "values",
                           _tuples(s))
        ctx.emit("SELECT_V2", node, [_covered(s), values, x], dtype=x.dtype)
        return
    positions = s.positions()
    _, last = np.unique(positions[::-1], return_index=True)
    keep = np.sort(len(positions) - 1 - last)
    idx, updates = (s.idx, s.updates) if len(keep) == s.n else s.rows(keep, "last")
    covered = s.mask()
    if covered.all():
        ctx.emit("SCATTER_ND", node, [idx, updates, s.shape_t], dtype=x.dtype)
        return
    values = s.scatter(updates, "values", idx)
    ctx.emit("SELECT_V2", node, [ctx.const(node, "mask", covered), values, x], dtype=x.dtype)


def _summing(tfl: str):
    def rule(ctx: LowerCtx, node) -> None:
        x, s = _tensor_scatter(ctx, node)
        ctx.emit(tfl, node, [x, s.scatter(s.updates, "sums")], _NONE)
    rule.__name__ = f"tensor_scatter_{tfl.lower()}"
    return rule


def _extreme(tfl: str):
    """TensorScatterMax (MAXIMUM) / TensorScatterMin (MINIMUM)."""
    def rule(ctx: LowerCtx, node) -> None:
        x, s = _tensor_scatter(ctx, node)
        if s.data is None:
            _computed_extreme(s, x, tfl)
            return
        layers = _layers(s.positions())
        current = x
        for r, rows in enumerate(layers):
            idx, updates = (s.idx, s.updates) if len(rows) == s.n else s.rows(rows, f"layer{r}")
            values = s.scatter(updates, f"layer{r}_values", idx)
            covered = s.mask(rows)
            last = r == len(layers) - 1
            if covered.all():
                current = _combine(s, tfl, [current, values], f"layer{r}", last)
                continue
            best = ctx.step(node, tfl, [current, values], f"layer{r}_best", x.dtype)
            current = _combine(s, "SELECT_V2", [ctx.const(node, f"layer{r}_mask", covered),
                                                best, current], f"layer{r}", last)
        if current is x:  # no updates at all
            ctx.alias(node, x)
    rule.__name__ = f"tensor_scatter_{tfl.lower()}"
    return rule


def _combine(s: Scatter, tfl: str, inputs, suffix: str, last: bool) -> Tensor:
    if last:
        return s.ctx.emit(tfl, s.node, inputs, dtype=inputs[-1].dtype)
    return s.ctx.step(s.node, tfl, inputs, suffix, inputs[-1].dtype)


def _computed_extreme(s: Scatter, x: Tensor, tfl: str) -> None:
    """Each update replaced by the extreme over its duplicates, every duplicate but the
    first zeroed, scattered, then combined with x where the indices point."""
    ctx, node, n = s.ctx, s.node, s.n
    same, dup = _duplicates(s, later=False)
    rows = _flat_updates(s)
    k = len(s.slice)
    info = np.finfo(x.dtype) if x.dtype.kind == "f" else np.iinfo(x.dtype)
    neutral = ctx.const(node, "neutral", np.array(info.min if tfl == "MAXIMUM" else info.max,
                                                  x.dtype))
    pairs = _reshaped(s, same, [n, n] + [1] * k, "same_slices")
    spread = _reshaped(s, rows, [1, n, *s.slice], "updates_row")
    candidates = ctx.step(node, "SELECT_V2", [pairs, spread, neutral], "candidates", x.dtype)
    reduce = "REDUCE_MAX" if tfl == "MAXIMUM" else "REDUCE_MIN"
    extreme = ctx.step(node, reduce, [candidates, ctx.const(node, "group_axis",
                                                            np.array([1], np.int32))],
                       "group_extreme", x.dtype, dict(keep_dims=False))
    values = s.scatter(_zero_duplicates(s, dup, extreme), "values", _tuples(s))
    best = ctx.step(node, tfl, [x, values], "best", x.dtype)
    ctx.emit("SELECT_V2", node, [_covered(s), best, x], dtype=x.dtype)


# -- specs (TF op definitions: array_ops.cc) ---------------------------------------------------
_INDICES = In("the indices", INDEX, "Tindices")


def _tensor_spec(dtypes) -> NodeSpec:
    return spec(In("the tensor", dtypes), _INDICES, In("the updates", dtypes))


RULES = {
    "ScatterNd": Lowering(scatter_nd, spec(_INDICES, In("the updates", SCATTERABLE),
                                           vector_input("the shape", "Tindices"))),
    "TensorScatterUpdate": Lowering(tensor_scatter_update, _tensor_spec(SCATTERABLE)),
    "TensorScatterAdd": Lowering(_summing("ADD"), _tensor_spec(_SUMMABLE)),
    "TensorScatterSub": Lowering(_summing("SUB"), _tensor_spec(_SUMMABLE)),
    "TensorScatterMax": Lowering(_extreme("MAXIMUM"), _tensor_spec(_ORDERED)),
    "TensorScatterMin": Lowering(_extreme("MINIMUM"), _tensor_spec(_ORDERED)),
}
