"""Issue 16, sparse and partitioned embeddings (family "embedding"): small frozen graphs with
TensorFlow's own goldens, written by builders/beyond.py's finish_beyond.

Run from the repo root (TensorFlow is only in the threads venv):

    /work/wt/threads/.venv/bin/python -m models.builders.zoo_embedding

Every model takes a dense id matrix [batch, IDS] whose id 0 is padding and turns it into a
SparseTensor the way tf.sparse.from_dense does (NotEqual, Where, GatherNd) -- the real
pattern in front of tf.nn.embedding_lookup_sparse -- so each golden sample runs alone at
batch 1 (tests/models/test_beyond_cnn.py runs them one by one). embedding_lookup_sparse
returns last-row + 1 rows (trailing empty rows are dropped), so zero rows are appended up to
the batch (tf.concat with tf.zeros). A Dense layer (with tanh) follows, so int8 has a float
output to measure. The golden ids vary the number of ids per row, with an empty row in the
middle and one at the end; the calibration ids reach the extremes (calib_rows).

* emb_sparse_combiners:  embedding_lookup_sparse sum / mean / sqrtn (Unique, GatherV2,
                         SparseSegmentSum / Mean / SqrtN), three outputs;
* emb_sparse_weighted:   the same with sp_weights (a float weight per id): mean and sqrtn
                         (GatherV2 by Unique's idx, Mul, SegmentSum, Pow, Sqrt, DivNoNan);
* emb_segment_ops:       the WithNumSegments variants and the unsorted segment reductions
                         (SparseSegmentSumWithNumSegments / MeanWithNumSegments /
                         SqrtNWithNumSegments, UnsortedSegmentSum / Max / Min / Prod);
* emb_partitioned_mod / emb_partitioned_div: tf.compat.v1.nn.embedding_lookup over three
                         shards with partition_strategy "mod" / "div" (DynamicPartition,
                         ParallelDynamicStitch, FloorMod / FloorDiv, Select).
"""

from __future__ import annotations

from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

from .beyond import build_all
from .real_world import Built, np, tf

SEED = 1616
VOCAB = 24   # ids 1..VOCAB-1; 0 is padding
DIM = 6      # embedding width
IDS = 5      # ids per row (before padding is dropped)
UNITS = 4    # Dense units after the embedding
N_GOLDEN, N_CALIB = 16, 32
SHARDS = 3


def id_rows(rng: np.random.RandomState, n: int, empty: tuple = ()) -> np.ndarray:
    """[n, IDS] int ids: row i keeps a varying number of non-padding ids (padding 0 at
    random places, so the kept ids are not always a prefix); rows in `empty` keep none."""
    ids = rng.randint(1, VOCAB, (n, IDS))
    for i in range(n):
        keep = 0 if i in empty else 1 + (i * 3) % IDS
        ids[i, rng.permutation(IDS)[keep:]] = 0
    return ids


def _freeze(fn, specs: list, outputs: list[str]):
    concrete = tf.function(fn, input_signature=specs).get_concrete_function()
    return convert_variables_to_constants_v2(concrete).graph.as_graph_def()


def _dense(rng, x, units: int, name: str, width: int = DIM):
    """Dense + tanh: a bounded head (int8's fixed tanh output range needs no calibration
    of the extremes, which 32 samples of sums of embeddings rarely reach)."""
    w = tf.constant((rng.randn(width, units) / np.sqrt(width) / 2).astype(np.float32))
    b = tf.constant((rng.randn(units) * 0.1).astype(np.float32))
    return tf.tanh(tf.matmul(x, w) + b, name=name)


def _to_batch(e, batch_of):
    """embedding_lookup_sparse's rows followed by zero rows up to the batch."""
    missing = tf.shape(batch_of)[0] - tf.shape(e)[0]
    return tf.concat([e, tf.zeros(tf.stack([missing, DIM]))], 0)


def _sparse_ids(x):
    """tf.sparse.from_dense with 0 as padding: NotEqual, Where, GatherNd."""
    return tf.sparse.from_dense(x)


def _table(rng, rows: int = VOCAB):
    return tf.constant(rng.randn(rows, DIM).astype(np.float32))


def _inputs(dtype: str = "int64", weights: bool = False) -> dict:
    spec = {"ids": ((None, IDS), dtype)}
    if weights:
        spec["weights"] = ((None, IDS), "float32")
    return spec


def calib_rows(rng, n: int) -> np.ndarray:
    """Calibration ids that reach the extremes int8 must cover: half full rows of random
    ids, half one id repeated in every slot (sums of IDS copies of one embedding row), one
    empty row."""
    ids = rng.randint(1, VOCAB, (n, IDS))
    ids[n // 2:] = (np.arange(n - n // 2) * 7 % (VOCAB - 1) + 1)[:, None]
    ids[n // 4] = 0
    return ids


def _golden_and_calib(rng, weights: bool = False, dtype=np.int64):
    golden = {"ids": id_rows(rng, N_GOLDEN, empty=(5, N_GOLDEN - 1)).astype(dtype)}
    calib = {"ids": calib_rows(rng, N_CALIB).astype(dtype)}
    if weights:
        golden["weights"] = rng.uniform(0.2, 2.0, (N_GOLDEN, IDS)).astype(np.float32)
        calib["weights"] = rng.uniform(0.2, 2.0, (N_CALIB, IDS)).astype(np.float32)
    return golden, calib


# --------------------------------------------------------------------------- the models


def sparse_combiners(rng):
    table = _table(rng)
    outs = ["out_sum", "out_mean", "out_sqrtn"]

    def fn(ids):
        sp = _sparse_ids(ids)
        res = []
        for combiner, name in zip(("sum", "mean", "sqrtn"), outs):
            e = tf.nn.embedding_lookup_sparse(table, sp, None, combiner=combiner)
            res.append(_dense(rng, _to_batch(e, ids), UNITS, name))
        return res

    gd = _freeze(fn, [tf.TensorSpec((None, IDS), tf.int64, name="ids")], outs)
    golden, calib = _golden_and_calib(rng)
    return Built(gd, _inputs(), outs, golden,
                 expect_ops=("Where", "GatherNd", "Unique", "SparseSegmentSum",
                             "SparseSegmentMean", "SparseSegmentSqrtN")), calib


def sparse_weighted(rng):
    table = _table(rng)
    outs = ["out_mean", "out_sqrtn"]

    def fn(ids, weights):
        sp = _sparse_ids(ids)
        sw = tf.SparseTensor(sp.indices, tf.gather_nd(weights, sp.indices), sp.dense_shape)
        res = []
        for combiner, name in zip(("mean", "sqrtn"), outs):
            e = tf.nn.embedding_lookup_sparse(table, sp, sw, combiner=combiner)
            res.append(_dense(rng, _to_batch(e, ids), UNITS, name))
        return res

    gd = _freeze(fn, [tf.TensorSpec((None, IDS), tf.int64, name="ids"),
                      tf.TensorSpec((None, IDS), tf.float32, name="weights")], outs)
    golden, calib = _golden_and_calib(rng, weights=True)
    return Built(gd, _inputs(weights=True), outs, golden,
                 expect_ops=("Where", "GatherNd", "Unique", "SegmentSum", "DivNoNan",
                             "Sqrt")), calib


def segment_ops(rng):
    table = _table(rng)
    outs = ["out_segments", "out_unsorted"]

    def fn(ids):
        sp = _sparse_ids(ids)
        rows = tf.cast(sp.indices[:, 0], tf.int32)
        n = tf.shape(ids)[0]
        flat = tf.cast(sp.values, tf.int32)
        per_row = [tf.sparse.segment_sum(table, flat, rows, num_segments=n),
                   tf.sparse.segment_mean(table, flat, rows, num_segments=n),
                   tf.sparse.segment_sqrt_n(table, flat, rows, num_segments=n)]
        gathered = tf.gather(table, flat)
        # max / min of an empty row are -+FLT_MAX: every row also gets a zero entry (max /
        # min pooling with 0 as floor / ceiling), so int8 has a finite range to cover.
        padded = tf.concat([gathered, tf.zeros(tf.stack([n, DIM]))], 0)
        padded_rows = tf.concat([rows, tf.range(n)], 0)
        # which rows have ids: the max of an int32 segment (lowest for an empty one)
        has = tf.reshape(tf.cast(tf.math.unsorted_segment_max(rows, rows, n) >= 0,
                                 tf.float32), [-1, 1])
        unsorted = [tf.math.unsorted_segment_sum(gathered, rows, n),
                    tf.math.unsorted_segment_max(padded, padded_rows, n),
                    tf.math.unsorted_segment_min(padded, padded_rows, n),
                    tf.math.unsorted_segment_prod(tf.tanh(gathered), rows, n) * has]
        return [_dense(rng, tf.concat(per_row, 1), UNITS, outs[0], 3 * DIM),
                _dense(rng, tf.concat(unsorted, 1), UNITS, outs[1], 4 * DIM)]

    gd = _freeze(fn, [tf.TensorSpec((None, IDS), tf.int64, name="ids")], outs)
    golden, calib = _golden_and_calib(rng)
    return Built(gd, _inputs(), outs, golden,
                 expect_ops=("SparseSegmentSumWithNumSegments", "UnsortedSegmentMax",
                             "UnsortedSegmentProd")), calib


def partitioned(strategy: str):
    def build(rng):
        sizes = [8, 8, 8] if strategy == "mod" else [8, 8, 8]
        shards = [tf.constant(rng.randn(s, DIM).astype(np.float32)) for s in sizes]
        outs = ["output"]

        def fn(ids):
            e = tf.compat.v1.nn.embedding_lookup(shards, ids, partition_strategy=strategy)
            return _dense(rng, tf.reshape(e, [-1, IDS * DIM]), UNITS, outs[0], IDS * DIM)

        gd = _freeze(fn, [tf.TensorSpec((None, IDS), tf.int32, name="ids")], outs)
        golden, calib = _golden_and_calib(rng, dtype=np.int32)
        return Built(gd, _inputs("int32"), outs, golden,
                     expect_ops=("DynamicPartition", "ParallelDynamicStitch")), calib
    return build


MODELS = {
    "emb_sparse_combiners": sparse_combiners,
    "emb_sparse_weighted": sparse_weighted,
    "emb_segment_ops": segment_ops,
    "emb_partitioned_mod": partitioned("mod"),
    "emb_partitioned_div": partitioned("div"),
}


def main(names=None) -> int:
    return build_all(MODELS, "embedding", SEED, names)


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
