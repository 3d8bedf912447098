"""Sparse and partitioned embeddings: what tf.nn.embedding_lookup_sparse, tf.sparse.from_dense
and tf.nn.embedding_lookup over partitioned params put in a frozen graph, lowered to builtins.

TF's converter needs Flex for most of these (SparseSegment*, DynamicPartition,
ParallelDynamicStitch); here each becomes builtins with TF's numbers:

* Where(x) -> WHERE (int64 coordinates of the non-zero elements, row-major); GatherNd ->
  GATHER_ND; Unique -> UNIQUE; Size -> SHAPE + REDUCE_PROD; Rank -> RANK.
* Segment sums -> UNSORTED_SEGMENT_SUM. LiteRT's SEGMENT_SUM refuses ids with gaps (an
  empty segment: kernels/segment_sum.cc checks each step is 0 or 1) and its reference
  resolver lacks the op, while TF's SegmentSum gives empty segments zero rows; so the
  count of segments is computed: last id + 1 = REDUCE_MAX(CONCAT(ids + 1, [0])) (0 rows
  for no ids, as TF). The WithNumSegments variants and UnsortedSegment* take the count
  given (TF and LiteRT agree: empty segments are 0 / 1 / lowest / highest, negative ids
  are dropped).
* SparseSegmentSum(data, indices, ids) = segment sum of GATHER(data, indices); Mean
  divides by max(count, 1) and SqrtN by sqrt(max(count, 1)), the count being a segment
  sum of ones (TF's SparseSegmentReduction divides only segments of more than one row,
  and empty ones stay 0 -- the same numbers).
* DynamicPartition(data, partitions) -> per partition p: GATHER_ND(data, WHERE(EQUAL(
  partitions, p))) (rows in order, like TF).
* DynamicStitch / ParallelDynamicStitch(indices..., data...) -> the indices and data
  flattened and concatenated; for every output row the last position writing it wins
  (TF: "later indices win") = UNSORTED_SEGMENT_MAX(positions, indices, rows); the rows
  are GATHERed, rows no index names are 0 (SELECT_V2).
* DivNoNan(x, y) -> SELECT_V2(EQUAL(y, 0), 0, DIV(x, y)) (what TF's converter writes).
"""

from __future__ import annotations

import numpy as np

from edgelite.errors import GraphError, ShapeError, UnsupportedOpError
from ..ir import Activation, Tensor
from .context import LowerCtx, attr_dtype, attr_int, fail
from .spec import (ANY, INDEX, MAX_OUTPUTS, REAL, Attr, In, Lowering, scalar_input,
                   spec)

_I32, _I64, _F32 = np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.float32)
# What LiteRT's segment kernels reduce (kernels/unsorted_segment.cc): float32 and int32.
_SEGMENT_DATA = frozenset({_F32, _I32})
_WHERE_TYPES = frozenset(map(np.dtype, (np.bool_, np.float32, np.int32, np.int64, np.int8,
                                        np.uint8)))
_NONE = dict(fused_activation_function=Activation.NONE)
_TFL_TYPE = {_I32: 2, _I64: 4}  # tflite TensorType INT32, INT64


def _op(ctx: LowerCtx, node, type_: str, inputs, suffix: str, dtype, options=None) -> Tensor:
    """One intermediate op of node's lowering; its output is named node/suffix."""
    out = ctx.graph.tensor(f"{node.name}/{suffix}", dtype)
    ctx.graph.add_op(type_, inputs, [out], options, name=node.name)
    return out


def _int32(ctx: LowerCtx, node, t: Tensor, what: str) -> Tensor:
    """An index tensor as int32 (LiteRT's segment kernels take int32 ids and counts)."""
    if t.dtype == _I32:
        return t
    if t.is_const:
        return ctx.const(node, what, np.asarray(t.data).astype(np.int32))
    return _op(ctx, node, "CAST", [t], f"{what}_int32", _I32)


def _rank(t: Tensor) -> int | None:
    return None if t.shape is None else len(t.shape)


# Ops whose output has the rank of their broadcast inputs.
_ELEMENTWISE = frozenset({
    "ADD", "SUB", "MUL", "DIV", "FLOOR_DIV", "FLOOR_MOD", "MAXIMUM", "MINIMUM", "POW",
    "SQUARED_DIFFERENCE", "CAST", "EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER",
    "GREATER_EQUAL", "SELECT", "SELECT_V2", "TANH", "LOGISTIC", "SQRT", "RSQRT", "NEG",
    "ABS", "ZEROS_LIKE", "LOGICAL_AND", "LOGICAL_OR", "LOGICAL_NOT", "IDENTITY"})
_VECTORS = frozenset({"UNIQUE", "RANGE", "SHAPE"})
_MAX_DEPTH = 64  # producers followed to learn a rank


def rank_of(ctx: LowerCtx, t: Tensor, depth: int = 0) -> int | None:
    """The rank of t: from its shape, else from the ops producing it (during lowering the
    tensors after a WHERE or UNIQUE have no shape yet, but their ranks are fixed). None
    when no rule says."""
    if t.shape is not None:
        return len(t.shape)
    op = ctx.graph.producer(t)
    if op is None or depth > _MAX_DEPTH:
        return None
    ranks = [None if x is None else rank_of(ctx, x, depth + 1) for x in op.inputs]
    known = [r for r in ranks if r is not None]
    if op.type in _ELEMENTWISE:
        return max(known) if len(known) == len([x for x in op.inputs if x is not None]) \
            else None
    if op.type in _VECTORS:
        return 1
    if op.type == "WHERE":
        return 2
    if op.type == "RESHAPE" and op.inputs[1].is_const:
        return int(op.inputs[1].data.size)
    if None in ranks[:2]:
        return None
    if op.type == "GATHER":
        return ranks[0] - 1 + ranks[1] - int(op.options.get("batch_dims", 0))
    if op.type.startswith("UNSORTED_SEGMENT_"):
        return 1 + ranks[0] - ranks[1]
    if op.type == "GATHER_ND":
        nd = _tuple_length(ctx, op.inputs[1], depth)
        return None if nd is None else ranks[1] - 1 + ranks[0] - nd
    return None


def _tuple_length(ctx: LowerCtx, indices: Tensor, depth: int) -> int | None:
    """GATHER_ND's index-tuple length: the last dimension of its indices."""
    if indices.shape is not None:
        return indices.shape[-1] if indices.shape else None
    op = ctx.graph.producer(indices)
    if op is not None and op.type == "WHERE":
        return rank_of(ctx, op.inputs[0], depth + 1)
    return None


# --------------------------------------------------------------------------- simple ops


def where(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    if x.dtype not in _WHERE_TYPES:  # LiteRT's WHERE reads these (kernels/where.cc)
        x = _op(ctx, node, "NOT_EQUAL", [x, ctx.const(node, "zero", np.zeros((), x.dtype))],
                "nonzero", np.bool_)
    if _rank(x) == 0:
        raise fail(ShapeError, node, "the input is a scalar; Where needs rank >= 1")
    ctx.emit("WHERE", node, [x], dtype=_I64)


def gather_nd(ctx: LowerCtx, node) -> None:
    params, indices = ctx.input(node, 0), ctx.input(node, 1)
    ctx.emit("GATHER_ND", node, [params, indices], dtype=params.dtype)


def unique(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    if _rank(x) not in (None, 1):
        raise fail(ShapeError, node, f"the input has shape {list(x.shape)}; Unique takes a "
                   "vector")
    out_idx = attr_dtype(node, "out_idx", _I32)
    values = ctx.output(node, x.dtype, 0)
    idx = ctx.output(node, out_idx, 1)
    ctx.graph.add_op("UNIQUE", [x], [values, idx], dict(idx_out_type=_TFL_TYPE[out_idx]),
                     name=node.name)


def size(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    out = attr_dtype(node, "out_type", _I32)
    dims = _op(ctx, node, "SHAPE", [x], "shape", out, dict(out_type=_TFL_TYPE[out]))
    ctx.emit("REDUCE_PROD", node, [dims, ctx.const(node, "axis", np.zeros(1, np.int32))],
             dict(keep_dims=False), dtype=out)


def rank(ctx: LowerCtx, node) -> None:
    ctx.emit("RANK", node, [ctx.input(node, 0)], dtype=_I32)


def div_no_nan(ctx: LowerCtx, node) -> None:
    x, y = ctx.input(node, 0), ctx.input(node, 1)
    zero = ctx.const(node, "zero", np.zeros((), x.dtype))
    is_zero = _op(ctx, node, "EQUAL", [y, zero], "is_zero", np.bool_)
    q = _op(ctx, node, "DIV", [x, y], "div", x.dtype, _NONE)
    ctx.emit("SELECT_V2", node, [is_zero, zero, q], dtype=x.dtype)


# --------------------------------------------------------------------------- segments


def _segment_count(ctx: LowerCtx, node, ids: Tensor) -> Tensor:
    """last id + 1 for sorted ids, 0 for none: REDUCE_MAX(CONCAT(ids + 1, [0]))."""
    one = ctx.const(node, "one", np.ones((), np.int32))
    flat = ids
    if _rank(ids) != 1:
        flat = _op(ctx, node, "RESHAPE", [ids, ctx.const(node, "flat", np.int32([-1]))],
                   "ids_flat", _I32)
    bumped = _op(ctx, node, "ADD", [flat, one], "ids_plus_1", _I32, _NONE)
    padded = _op(ctx, node, "CONCATENATION", [bumped, ctx.const(node, "no_ids",
                                                                 np.zeros(1, np.int32))],
                 "ids_or_0", _I32, dict(axis=0, **_NONE))
    return _op(ctx, node, "REDUCE_MAX", [padded, ctx.const(node, "axis", np.int32([0]))],
               "num_segments", _I32, dict(keep_dims=False))


def _num_segments(ctx: LowerCtx, node, i: int) -> Tensor:
    n = ctx.input(node, i)
    if n.is_const:
        return ctx.const(node, "num_segments", np.asarray(n.data).astype(np.int32).reshape(()))
    return _int32(ctx, node, n, "num_segments")


def _check_data(node, data: Tensor) -> None:
    if data.dtype not in _SEGMENT_DATA:
        raise fail(UnsupportedOpError, node, f"data of type {data.dtype.name}: TFLite's "
                   "segment reductions take float32 and int32 only")


def _reduce_segments(ctx: LowerCtx, node, tfl: str, data: Tensor, ids: Tensor, n: Tensor,
                     final: bool, suffix: str = "sum") -> Tensor:
    _check_data(node, data)
    if final:
        return ctx.emit(tfl, node, [data, ids, n], dtype=data.dtype)
    return _op(ctx, node, tfl, [data, ids, n], suffix, data.dtype)


def segment_sum(ctx: LowerCtx, node) -> None:
    """SegmentSum(data, ids): sorted ids, last id + 1 rows, empty segments 0."""
    data = ctx.input(node, 0)
    ids = _int32(ctx, node, ctx.input(node, 1), "ids")
    _reduce_segments(ctx, node, "UNSORTED_SEGMENT_SUM", data, ids,
                     _segment_count(ctx, node, ids), final=True)


def _unsorted(tfl: str):
    def rule(ctx: LowerCtx, node) -> None:
        data = ctx.input(node, 0)
        ids = _int32(ctx, node, ctx.input(node, 1), "ids")
        _reduce_segments(ctx, node, tfl, data, ids, _num_segments(ctx, node, 2), final=True)
    rule.__name__ = tfl.lower()
    return rule


def _sparse_segment(kind: str, with_count: bool):
    """SparseSegment{Sum,Mean,SqrtN}[WithNumSegments](data, indices, ids[, n])."""
    def rule(ctx: LowerCtx, node) -> None:
        data, indices = ctx.input(node, 0), ctx.input(node, 1)
        _check_data(node, data)
        if data.dtype != _F32 and kind != "sum":
            raise fail(UnsupportedOpError, node, "a mean / sqrt-n of non-float data")
        ids = _int32(ctx, node, ctx.input(node, 2), "ids")
        n = _num_segments(ctx, node, 3) if with_count else _segment_count(ctx, node, ids)
        rows = _op(ctx, node, "GATHER", [data, indices], "rows", data.dtype,
                   dict(axis=0, batch_dims=0))
        if kind == "sum":
            _reduce_segments(ctx, node, "UNSORTED_SEGMENT_SUM", rows, ids, n, final=True)
            return
        total = _reduce_segments(ctx, node, "UNSORTED_SEGMENT_SUM", rows, ids, n, False)
        _divide_by_count(ctx, node, total, data, ids, n, kind == "sqrtn")
    rule.__name__ = f"sparse_segment_{kind}"
    return rule


def _counts(ctx: LowerCtx, node, ids: Tensor, n: Tensor) -> Tensor:
    """How many rows each segment has (float32, [n])."""
    same = _op(ctx, node, "EQUAL", [ids, ids], "each_id", np.bool_)
    ones = _op(ctx, node, "CAST", [same], "ones", _F32)  # one per id: true -> 1.0
    return _reduce_segments(ctx, node, "UNSORTED_SEGMENT_SUM", ones, ids, n, False, "count")


def _column(ctx: LowerCtx, node, per_segment: Tensor, data: Tensor) -> Tensor:
    """[n] -> [n, 1, ...]: one value per segment against the data's rows."""
    r = rank_of(ctx, data)
    if r is None:
        raise fail(ShapeError, node, "the rank of the data is unknown; edgelite needs it to "
                   "weigh each segment by its row count")
    return _op(ctx, node, "RESHAPE", [per_segment, ctx.const(
        node, "column", np.int32([-1] + [1] * (r - 1)))], "count_column", per_segment.dtype)


def _divide_by_count(ctx: LowerCtx, node, total: Tensor, data: Tensor, ids: Tensor,
                     n: Tensor, sqrt: bool) -> None:
    """total / max(count, 1) (a mean; an empty segment stays 0), or by its square root."""
    count = _op(ctx, node, "MAXIMUM", [_counts(ctx, node, ids, n), ctx.const(
        node, "at_least_1", np.ones((), np.float32))], "count_or_1", _F32)
    if sqrt:
        count = _op(ctx, node, "SQRT", [count], "sqrt_count", _F32)
    ctx.emit("DIV", node, [total, _column(ctx, node, count, data)], _NONE, dtype=_F32)


def _sorted_segment(kind: str):
    """Segment{Mean,Max,Min,Prod}(data, sorted ids): last id + 1 rows (math_ops.cc); an empty
    segment is 0 (1 for a product), where TFLite's unsorted max / min give the lowest /
    highest value -- those rows are selected away."""
    def rule(ctx: LowerCtx, node) -> None:
        data = ctx.input(node, 0)
        _check_data(node, data)
        ids = _int32(ctx, node, ctx.input(node, 1), "ids")
        n = _segment_count(ctx, node, ids)
        if kind == "Prod":
            _reduce_segments(ctx, node, "UNSORTED_SEGMENT_PROD", data, ids, n, final=True)
            return
        if kind == "Mean":
            if data.dtype != _F32:
                raise fail(UnsupportedOpError, node, "a mean of non-float data")
            total = _reduce_segments(ctx, node, "UNSORTED_SEGMENT_SUM", data, ids, n, False)
            _divide_by_count(ctx, node, total, data, ids, n, False)
            return
        extreme = _reduce_segments(ctx, node, f"UNSORTED_SEGMENT_{kind.upper()}", data, ids,
                                   n, False, kind.lower())
        count = _column(ctx, node, _counts(ctx, node, ids, n), data)
        filled = _op(ctx, node, "GREATER", [count, ctx.const(
            node, "none", np.zeros((), np.float32))], "filled", np.bool_)
        zero = ctx.const(node, "zero", np.zeros((), data.dtype))
        ctx.emit("SELECT_V2", node, [filled, extreme, zero], dtype=data.dtype)
    rule.__name__ = f"segment_{kind.lower()}"
    return rule


# --------------------------------------------------------------------------- partitions


def dynamic_partition(ctx: LowerCtx, node) -> None:
    data, parts = ctx.input(node, 0), ctx.input(node, 1)
    num = attr_int(node, "num_partitions")
    parts = _int32(ctx, node, parts, "partitions")
    for p in range(num):
        hit = _op(ctx, node, "EQUAL", [parts, ctx.const(node, f"p{p}", np.int32(p))],
                  f"is_{p}", np.bool_)
        coords = _op(ctx, node, "WHERE", [hit], f"where_{p}", _I64)
        out = ctx.output(node, data.dtype, p)
        ctx.graph.add_op("GATHER_ND", [data, coords], [out], name=node.name)


def _flat(ctx: LowerCtx, node, idx: Tensor, d: Tensor, m: int) -> tuple[Tensor, Tensor, int]:
    """Indices m as a vector and data m as rows [count, row dims...], and the row rank:
    1-D indices (embedding_lookup's) need nothing; else both are RESHAPEd, the rows'
    dims read from SHAPE(data) after the indices' rank."""
    ri, rd = rank_of(ctx, idx), rank_of(ctx, d)
    if ri is None or rd is None or rd < ri:
        raise fail(ShapeError, node, f"the ranks of indices {m} and data {m} are unknown or "
                   "do not fit; edgelite needs them to merge the rows")
    idx = _int32(ctx, node, idx, f"indices{m}")
    if ri == 1:
        return idx, d, rd - 1
    idx = _op(ctx, node, "RESHAPE", [idx, ctx.const(node, f"flat{m}", np.int32([-1]))],
              f"indices{m}_flat", _I32)
    if d.shape is not None:
        shape = ctx.const(node, f"rows{m}", np.int32([-1, *d.shape[ri:]]))
    else:
        dims = _op(ctx, node, "SHAPE", [d], f"data{m}_shape", _I32, dict(out_type=2))
        tail = _op(ctx, node, "SLICE", [dims, ctx.const(node, f"begin{m}", np.int32([ri])),
                                        ctx.const(node, f"size{m}", np.int32([-1]))],
                   f"data{m}_row_shape", _I32)
        shape = _op(ctx, node, "CONCATENATION", [ctx.const(node, f"count{m}", np.int32([-1])),
                                                 tail], f"data{m}_rows_shape", _I32,
                    dict(axis=0, **_NONE))
    return idx, _op(ctx, node, "RESHAPE", [d, shape], f"data{m}_rows", d.dtype), rd - ri


def dynamic_stitch(ctx: LowerCtx, node) -> None:
    ins = ctx.inputs(node)
    k = len(ins) // 2
    if len(ins) % 2 or k != attr_int(node, "N", k):
        raise fail(GraphError, node, f"takes N indices and N data inputs (N = "
                   f"{attr_int(node, 'N', k)}), found {len(ins)} inputs; the GraphDef is "
                   "malformed")
    indices, data = ins[:k], ins[k:]
    flat_idx, flat_data, row_ranks = [], [], set()
    for m, (idx, d) in enumerate(zip(indices, data)):
        i, rows, row_rank = _flat(ctx, node, idx, d, m)
        flat_idx.append(i)
        flat_data.append(rows)
        row_ranks.add(row_rank)
    if len(row_ranks) > 1:
        raise fail(ShapeError, node, "the data's rows differ in rank")
    cat = dict(axis=0, **_NONE)
    all_idx = flat_idx[0] if k == 1 else _op(ctx, node, "CONCATENATION", flat_idx,
                                             "indices", _I32, cat)
    all_data = flat_data[0] if k == 1 else _op(ctx, node, "CONCATENATION", flat_data,
                                               "data", data[0].dtype, cat)
    n = _segment_count(ctx, node, all_idx)
    total = _op(ctx, node, "SHAPE", [all_idx], "count", _I32, dict(out_type=2))
    total = _op(ctx, node, "RESHAPE", [total, ctx.const(node, "scalar", np.zeros(0, np.int32))],
                "count_scalar", _I32)
    positions = _op(ctx, node, "RANGE", [ctx.const(node, "zero", np.int32(0)), total,
                                         ctx.const(node, "step", np.int32(1))],
                    "positions", _I32)
    last = _op(ctx, node, "UNSORTED_SEGMENT_MAX", [positions, all_idx, n], "last_writer",
               _I32)
    source = _op(ctx, node, "MAXIMUM", [last, ctx.const(node, "first", np.int32(0))],
                 "source", _I32)
    rows = _op(ctx, node, "GATHER", [all_data, source], "rows", data[0].dtype,
               dict(axis=0, batch_dims=0))
    written = _op(ctx, node, "GREATER_EQUAL", [last, ctx.const(node, "none", np.int32(0))],
                  "written", np.bool_)
    zeros = _op(ctx, node, "ZEROS_LIKE", [rows], "zero_rows", data[0].dtype)
    # SELECT (v1): a rank-1 condition picks whole rows (select.cc).
    ctx.emit("SELECT", node, [written, rows, zeros], dtype=data[0].dtype)


# --------------------------------------------------------------------------- specs

_DATA = In("the data", REAL)
_IDS = In("the segment ids", INDEX, "Tsegmentids")
_NUM = scalar_input("num_segments", INDEX, "Tnumsegments", const=False)
_SPARSE = (_DATA, In("the indices", INDEX, "Tidx"), _IDS)


def _sparse_rules() -> dict:
    rules = {}
    for kind, tf_name in (("sum", "Sum"), ("mean", "Mean"), ("sqrtn", "SqrtN")):
        rules[f"SparseSegment{tf_name}"] = Lowering(_sparse_segment(kind, False),
                                                     spec(*_SPARSE))
        rules[f"SparseSegment{tf_name}WithNumSegments"] = Lowering(
            _sparse_segment(kind, True), spec(*_SPARSE, _NUM))
    return rules


RULES = {
    "Where": Lowering(where, spec(In("the condition", ANY))),
    "GatherNd": Lowering(gather_nd, spec(In("the params", ANY, "Tparams"),
                                         In("the indices", INDEX, "Tindices"))),
    "Unique": Lowering(unique, spec(In("the input", ANY),
                                    attrs=(Attr("out_idx", "type", dtypes=INDEX),))),
    "Size": Lowering(size, spec(In("the input", ANY),
                                attrs=(Attr("out_type", "type", dtypes=INDEX),))),
    "Rank": Lowering(rank, spec(In("the input", ANY))),
    "DivNoNan": Lowering(div_no_nan, spec(In("operand x", REAL), In("operand y", REAL))),
    "SegmentSum": Lowering(segment_sum, spec(_DATA, In("the segment ids", INDEX, "Tindices"))),
    **{f"Segment{kind}": Lowering(_sorted_segment(kind),
                                  spec(_DATA, In("the segment ids", INDEX, "Tindices")))
       for kind in ("Mean", "Max", "Min", "Prod")},
    **{f"UnsortedSegment{op}": Lowering(_unsorted(f"UNSORTED_SEGMENT_{op.upper()}"),
                                        spec(_DATA, In("the segment ids", INDEX, "Tindices"),
                                             _NUM))
       for op in ("Sum", "Max", "Min", "Prod")},
    **_sparse_rules(),
    "DynamicPartition": Lowering(dynamic_partition, spec(
        In("the data", ANY), In("the partitions", INDEX, None),
        attrs=(Attr("num_partitions", "i", True, lo=1, hi=MAX_OUTPUTS),))),
    **{op: Lowering(dynamic_stitch, spec(variadic=In("indices / data", ANY, None), n_attr=None,
                                         n_min=2))
       for op in ("DynamicStitch", "ParallelDynamicStitch")},
}
