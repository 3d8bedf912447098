"""converter/lower/embeddings.py: the ops of tf.sparse.from_dense, tf.nn.embedding_lookup_sparse
and partitioned tf.nn.embedding_lookup, one node each, lowered to builtins; references from
TF's op docs (array_ops.cc, math_ops.cc, data_flow_ops.cc), written in numpy -- empty
segments, gaps, negative ids and duplicate stitch indices included."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.errors import GraphError, UnsupportedOpError

from .lowering import BOOL, F32, I32, I64, check, floats, graph, rng

COVERED = {"Where", "GatherNd", "Unique", "Size", "Rank", "DivNoNan", "SegmentSum",
           "SegmentMean", "SegmentMax", "SegmentMin", "SegmentProd",
           "UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin",
           "UnsortedSegmentProd", "SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN",
           "SparseSegmentSumWithNumSegments", "SparseSegmentMeanWithNumSegments",
           "SparseSegmentSqrtNWithNumSegments", "DynamicPartition", "DynamicStitch",
           "ParallelDynamicStitch"}

COUNT = ["ADD", "CONCATENATION", "REDUCE_MAX"]  # last segment id + 1 (0 for no ids)


def outputs(name, n):
    return [f"{name}:{k}" for k in range(n)]


# -- tf.sparse.from_dense: Where, GatherNd ------------------------------------------------------
@pytest.mark.parametrize("dtype", [BOOL, F32, I64], ids=str)
def test_where_gives_row_major_coordinates(dtype):
    x = (rng().integers(0, 3, (3, 4)) * rng().integers(-1, 2, (3, 4))).astype(dtype)
    x[0, 0] = 1
    g = graph(x=(x.shape, dtype))
    g.node("y", "Where", ["x"], T=dtype)
    check(g, {"x": x}, np.argwhere(x).astype(np.int64), ["WHERE"])


def test_from_dense_where_then_gather_nd():
    x = np.array([[3, 0, 5, 0], [0, 0, 0, 7]], np.int64)
    g = graph(x=(x.shape, I64))
    g.const("zero", np.int64(0))
    g.node("mask", "NotEqual", ["x", "zero"], T=I64)
    g.node("idx", "Where", ["mask"], T=BOOL)
    g.node("y", "GatherNd", ["x", "idx"], Tparams=I64, Tindices=I64)
    r = check(g, {"x": x}, x[x != 0], ["NOT_EQUAL", "WHERE", "GATHER_ND"])
    where = r.graph.producer(r.graph.outputs[0]).inputs[1]
    assert where.shape_signature == (-1, 2)  # rows only the values tell: -1 in the file


@pytest.mark.parametrize("constant", [False, True])
def test_gather_nd(constant):
    p = floats(rng(), 3, 4, 2)
    idx = np.array([[2, 1], [0, 3], [2, 1]], np.int32)
    g = graph(p=p.shape) if constant else graph(p=p.shape, idx=(idx.shape, I32))
    if constant:
        g.const("idx", idx)
    g.node("y", "GatherNd", ["p", "idx"], Tparams=F32, Tindices=I32)
    feeds = {"p": p} if constant else {"p": p, "idx": idx}
    check(g, feeds, p[idx[:, 0], idx[:, 1]], ["GATHER_ND"])


# -- Unique, Size, Rank, DivNoNan ---------------------------------------------------------------
@pytest.mark.parametrize("out_idx", [I32, I64])
def test_unique(out_idx):
    x = np.array([7, 3, 7, 1, 3, 9], np.int64)
    g = graph(x=(x.shape, I64))
    g.node("y", "Unique", ["x"], T=I64, out_idx=out_idx)
    check(g, {"x": x}, [np.array([7, 3, 1, 9], np.int64),
                        np.array([0, 1, 0, 2, 1, 3], out_idx)], ["UNIQUE"],
          outputs=outputs("y", 2))


def test_size_of_a_known_shape_is_a_constant_inside_the_graph():
    x = floats(rng(), 2, 3)
    g = graph(x=x.shape)
    g.node("n", "Size", ["x"], T=F32, out_type=I32)
    g.node("r", "Rank", ["x"], T=F32)
    g.node("y", "AddV2", ["n", "r"], T=I32)
    check(g, {"x": x}, np.int32(8), ["RANK", "ADD"])  # (RANK: folded at allocate)


@pytest.mark.parametrize("op, tfl", [("Size", ["SHAPE", "REDUCE_PROD"]), ("Rank", ["RANK"])])
def test_size_and_rank_as_outputs(op, tfl):
    x = floats(rng(), 2, 3)
    g = graph(x=x.shape)
    attrs = dict(out_type=I64) if op == "Size" else {}
    g.node("y", op, ["x"], T=F32, **attrs)
    want = np.int64(6) if op == "Size" else np.int32(2)
    check(g, {"x": x}, want, tfl[-1:])


def test_div_no_nan():
    x = floats(rng(), 2, 3)
    y = np.array([[2.0, 0.0, -1.0], [0.0, 4.0, 0.5]], np.float32)
    g = graph(x=x.shape, d=y.shape)
    g.node("y", "DivNoNan", ["x", "d"], T=F32)
    check(g, {"x": x, "d": y}, np.where(y == 0, 0, x / np.where(y == 0, 1, y)),
          ["EQUAL", "DIV", "SELECT_V2"])


# -- segment reductions -------------------------------------------------------------------------
def _segments(data, ids, n, reduce, identity):
    out = np.full((n,) + data.shape[ids.ndim:], identity, data.dtype)
    keep = ids >= 0
    reduce(out, ids[keep], data[keep])
    return out


@pytest.mark.parametrize("ids_const", [False, True])
def test_segment_sum_gives_gaps_zero_rows(ids_const):
    data = floats(rng(), 5, 3)
    ids = np.array([0, 0, 2, 2, 3], np.int64)  # segment 1 empty: LiteRT's SEGMENT_SUM refuses
    g = graph(d=data.shape) if ids_const else graph(d=data.shape, ids=(ids.shape, I64))
    if ids_const:
        g.const("ids", ids)
    g.node("y", "SegmentSum", ["d", "ids"], T=F32, Tindices=I64)
    feeds = {"d": data} if ids_const else {"d": data, "ids": ids}
    ops = ["UNSORTED_SEGMENT_SUM"] if ids_const else ["CAST"] + COUNT + ["UNSORTED_SEGMENT_SUM"]
    check(g, feeds, _segments(data, ids, 4, np.add.at, 0), ops)


SORTED = {  # TF's Segment* (math_ops.cc): empty segments are 0, a product's 1. Constant ids:
    # the counts fold (a mean divides by constants: a MUL, div_to_mul)
    "SegmentMean": ["UNSORTED_SEGMENT_SUM", "MUL"],
    "SegmentMax": ["UNSORTED_SEGMENT_MAX", "SELECT_V2"],
    "SegmentMin": ["UNSORTED_SEGMENT_MIN", "SELECT_V2"],
    "SegmentProd": ["UNSORTED_SEGMENT_PROD"],
}
COUNTED = ["CAST", *COUNT]  # ids at run time: last id + 1, then the rows per segment
RUNTIME_IDS = {
    "SegmentMean": COUNTED + ["UNSORTED_SEGMENT_SUM", "EQUAL", "CAST", "UNSORTED_SEGMENT_SUM",
                              "MAXIMUM", "RESHAPE", "DIV"],
    "SegmentMax": COUNTED + ["UNSORTED_SEGMENT_MAX", "EQUAL", "CAST", "UNSORTED_SEGMENT_SUM",
                             "RESHAPE", "GREATER", "SELECT_V2"],
}


def _sorted_reference(op, data, ids, n):
    out = np.zeros((n,) + data.shape[1:], np.float64)
    for s in range(n):
        rows = data[ids == s].astype(np.float64)
        if op == "SegmentProd":
            out[s] = rows.prod(axis=0)
        elif len(rows):
            out[s] = {"SegmentMean": rows.mean, "SegmentMax": rows.max,
                      "SegmentMin": rows.min}[op](axis=0)
    return out.astype(np.float32)


@pytest.mark.parametrize("op", sorted(SORTED))
def test_sorted_segments_empty_segments_as_tf(op):
    data = floats(rng(), 6, 3) - 2.0  # all negative: an empty max must still be 0
    ids = np.array([0, 0, 2, 2, 2, 4], np.int64)  # segments 1 and 3 empty
    g = graph(d=data.shape)
    g.const("ids", ids)
    g.node("y", op, ["d", "ids"], T=F32, Tindices=I64)
    check(g, {"d": data}, _sorted_reference(op, data, ids, 5), SORTED[op])


@pytest.mark.parametrize("op", sorted(RUNTIME_IDS))
def test_sorted_segments_with_ids_at_run_time(op):
    data = floats(rng(), 6, 3) - 2.0
    ids = np.array([1, 1, 1, 3, 3, 4], np.int64)  # segments 0 and 2 empty
    g = graph(d=data.shape, ids=(ids.shape, I64))
    g.node("y", op, ["d", "ids"], T=F32, Tindices=I64)
    check(g, {"d": data, "ids": ids}, _sorted_reference(op, data, ids, 5), RUNTIME_IDS[op])


F32_MAX = np.finfo(np.float32).max
UNSORTED = {"UnsortedSegmentSum": (np.add.at, 0), "UnsortedSegmentProd": (np.multiply.at, 1),
            "UnsortedSegmentMax": (np.maximum.at, -F32_MAX),
            "UnsortedSegmentMin": (np.minimum.at, F32_MAX)}


@pytest.mark.parametrize("op", sorted(UNSORTED))
def test_unsorted_segments(op):
    """Empty segments hold 0 / 1 / lowest / highest and negative ids drop their row, in TF
    (math_ops.cc "UnsortedSegment*") as in LiteRT."""
    data = floats(rng(), 6, 2)
    ids = np.array([3, 0, -1, 3, 0, 1], np.int64)
    g = graph(d=data.shape, ids=(ids.shape, I64))
    g.const("n", np.int32(5))
    g.node("y", op, ["d", "ids", "n"], T=F32, Tindices=I64, Tnumsegments=I32)
    check(g, {"d": data, "ids": ids}, _segments(data, ids, 5, *UNSORTED[op]),
          ["CAST", f"UNSORTED_SEGMENT_{op[15:].upper()}"])


def _sparse_segment(data, indices, ids, n, kind):
    """SparseSegmentReduction (TF): rows data[indices] summed per segment; mean divides by
    the count and sqrtn by its square root; empty segments are 0."""
    out = np.zeros((n,) + data.shape[1:], np.float64)
    count = np.zeros(n)
    for i, s in zip(indices, ids):
        out[s] += data[i]
        count[s] += 1
    if kind == "Mean":
        out /= np.maximum(count, 1)[:, None]
    elif kind == "SqrtN":
        out /= np.sqrt(np.maximum(count, 1))[:, None]
    return out.astype(np.float32)


SPARSE_OPS = {  # (kind, with num_segments) -> TF op, the ops in execution order
    ("Sum", False): ("SparseSegmentSum", ["GATHER", "CAST", *COUNT, "UNSORTED_SEGMENT_SUM"]),
    ("Sum", True): ("SparseSegmentSumWithNumSegments",
                    ["CAST", "GATHER", "UNSORTED_SEGMENT_SUM"]),
    ("Mean", False): ("SparseSegmentMean", ["GATHER", "CAST", *COUNT, "UNSORTED_SEGMENT_SUM",
                                            "EQUAL", "CAST", "UNSORTED_SEGMENT_SUM", "MAXIMUM",
                                            "RESHAPE", "DIV"]),
    ("Mean", True): ("SparseSegmentMeanWithNumSegments",
                     ["GATHER", "CAST", "UNSORTED_SEGMENT_SUM", "EQUAL", "CAST",
                      "UNSORTED_SEGMENT_SUM", "MAXIMUM", "RESHAPE", "DIV"]),
    ("SqrtN", False): ("SparseSegmentSqrtN", ["GATHER", "CAST", *COUNT, "UNSORTED_SEGMENT_SUM",
                                              "EQUAL", "CAST", "UNSORTED_SEGMENT_SUM",
                                              "MAXIMUM", "SQRT", "RESHAPE", "DIV"]),
    ("SqrtN", True): ("SparseSegmentSqrtNWithNumSegments",
                      ["GATHER", "CAST", "UNSORTED_SEGMENT_SUM", "EQUAL", "CAST",
                       "UNSORTED_SEGMENT_SUM", "MAXIMUM", "SQRT", "RESHAPE", "DIV"]),
}


@pytest.mark.parametrize("kind, with_count", sorted(SPARSE_OPS))
def test_sparse_segment(kind, with_count):
    data = floats(rng(), 6, 3)
    indices = np.array([5, 0, 5, 2, 1], np.int32)
    ids = np.array([0, 0, 2, 2, 2], np.int64)  # segment 1 empty
    n = 5 if with_count else 3
    g = graph(d=data.shape, i=(indices.shape, I32), ids=(ids.shape, I64))
    ins = ["d", "i", "ids"]
    attrs = dict(T=F32, Tidx=I32, Tsegmentids=I64)
    if with_count:
        g.const("n", np.int32(n))
        ins.append("n")
        attrs["Tnumsegments"] = I32
    op, ops = SPARSE_OPS[kind, with_count]
    g.node("y", op, ins, **attrs)
    r = check(g, {"d": data, "i": indices, "ids": ids},
              _sparse_segment(data, indices, ids, n, kind), ops)
    if not with_count:
        assert r.graph.outputs[0].shape_signature == (-1, 3)


def test_segment_refusals():
    data = np.arange(6).reshape(3, 2)
    g = graph(d=(data.shape, I64), ids=((3,), I32))
    g.const("n", np.int32(2))
    g.node("y", "UnsortedSegmentMax", ["d", "ids", "n"], T=I64, Tindices=I32,
           Tnumsegments=I32)
    with pytest.raises(UnsupportedOpError, match=r"^node 'y' \(UnsortedSegmentMax\): data of "
                       r"type int64: TFLite's segment reductions take float32 and int32"):
        convert_detailed(g.bytes(), ConvertOptions(inputs=["d", "ids"], outputs=["y"]))


# -- partitioned embeddings: DynamicPartition, DynamicStitch -----------------------------------
def test_dynamic_partition_keeps_row_order():
    data = floats(rng(), 6, 2)
    parts = np.array([2, 0, 2, 1, 0, 2], np.int32)
    g = graph(d=data.shape, p=(parts.shape, I32))
    g.node("y", "DynamicPartition", ["d", "p"], T=F32, num_partitions=3)
    check(g, {"d": data, "p": parts}, [data[parts == k] for k in range(3)],
          ["EQUAL", "WHERE", "GATHER_ND"] * 3, outputs=outputs("y", 3))


# (RANGE over the positions is folded: their count is known)
STITCH = [*COUNT, "UNSORTED_SEGMENT_MAX", "MAXIMUM", "GATHER", "GREATER_EQUAL", "ZEROS_LIKE",
          "SELECT"]


@pytest.mark.parametrize("op", ["DynamicStitch", "ParallelDynamicStitch"])
def test_dynamic_stitch_later_indices_win_and_gaps_are_zero(op):
    """merged[indices[m][i]] = data[m][i]; an index written twice keeps the later write
    (data_flow_ops.cc "DynamicStitch"); row 2 is never written: 0."""
    d0, d1 = floats(rng(), 2, 3), floats(rng(), 2, 3) + 5
    i0, i1 = np.array([0, 4], np.int32), np.array([1, 4], np.int32)
    g = graph(i0=(i0.shape, I32), i1=(i1.shape, I32), d0=d0.shape, d1=d1.shape)
    g.node("y", op, ["i0", "i1", "d0", "d1"], T=F32, N=2)
    want = np.zeros((5, 3), np.float32)
    want[0], want[4], want[1] = d0[0], d1[1], d1[0]
    check(g, {"i0": i0, "i1": i1, "d0": d0, "d1": d1}, want,
          ["CONCATENATION", "CONCATENATION", *STITCH])


def test_dynamic_stitch_of_matrices_of_indices():
    d0 = floats(rng(), 2, 2, 3)
    i0 = np.array([[3, 0], [1, 2]], np.int32)
    g = graph(i0=(i0.shape, I32), d0=d0.shape)
    g.node("y", "DynamicStitch", ["i0", "d0"], T=F32, N=1)
    want = np.zeros((4, 3), np.float32)
    want[i0.reshape(-1)] = d0.reshape(4, 3)
    check(g, {"i0": i0, "d0": d0}, want, ["RESHAPE", "RESHAPE", *STITCH])


def test_dynamic_stitch_refuses_unpaired_inputs():
    g = graph(i0=((2,), I32), d0=(2, 3), d1=(2, 3))
    g.node("y", "DynamicStitch", ["i0", "d0", "d1"], T=F32, N=1)
    with pytest.raises(GraphError, match=r"^node 'y' \(DynamicStitch\): takes N indices and N "
                       r"data inputs \(N = 1\), found 3 inputs"):
        convert_detailed(g.bytes(), ConvertOptions(inputs=["i0", "d0", "d1"], outputs=["y"]))


@pytest.mark.parametrize("kind", ["Sum", "Mean", "SqrtN"])
def test_embedding_lookup_sparse_graph(kind):
    """What tf.nn.embedding_lookup_sparse(table, SparseTensor(indices, ids, shape)) freezes
    to: Unique(ids) -> GatherV2(table, values) -> SparseSegment*(rows, positions,
    indices[:, 0]). Rows 1 and 4 have no ids: row 1 is 0, row 4 is dropped (TF returns
    last row + 1 rows). The Unique and its gather fold away (passes/fold_unique_gather.py)."""
    table = floats(rng(), 7, 3)
    indices = np.array([[0, 0], [0, 1], [2, 0], [3, 0], [3, 1], [3, 2]], np.int64)
    ids = np.array([4, 6, 4, 0, 6, 6], np.int64)
    g = graph(ind=(indices.shape, I64), ids=(ids.shape, I64))
    g.const("table", table)
    g.node("u", "Unique", ["ids"], T=I64, out_idx=I32)
    g.const("axis", np.int32(0))
    g.node("rows", "GatherV2", ["table", "u", "axis"], Tparams=F32, Tindices=I64, Taxis=I32)
    for name, v in (("b", [0, 0]), ("e", [0, 1]), ("s", [1, 1])):
        g.const(name, np.array(v, np.int32))
    g.node("seg", "StridedSlice", ["ind", "b", "e", "s"], T=I64, Index=I32, begin_mask=1,
           end_mask=1, shrink_axis_mask=2)
    g.node("y", f"SparseSegment{kind}", ["rows", "u:1", "seg"], T=F32, Tidx=I32,
           Tsegmentids=I64)
    want = _sparse_segment(table, ids, indices[:, 0], 4, kind)
    gather, *rest = SPARSE_OPS[kind, False][1]  # the GATHER reads the table by the ids
    check(g, {"ind": indices, "ids": ids}, want, [gather, "STRIDED_SLICE", *rest])
