"""Issue 25's tf.linalg band and tensor-scatter models (family "misc").

Run from the repository root (dev only, needs TensorFlow; deterministic: fixed seeds,
single-threaded TF)::

    EDGELITE_ROOT=$PWD /work/venv/bin/python -m models.builders.zoo_linalg

Both are built as builders/zoo_misc.py's graphs (one input x [B, 6, 6], constant weights,
16 golden and 32 calibration inputs) and go through builders/beyond.py's finish_beyond
(frozen .pb, TF's golden outputs, TF's float .tflite and op list where its converter
writes builtins, TF's int8 conversion); tests/models/test_real_world.py (TF goldens,
LiteRT, op count <= TF's) and tests/models/test_beyond_cnn.py (int8) test them. Scatter
ops work on [6, 6, B] (the batch last, so constant index tuples address rows whatever
the batch) and transpose back.

* linalg_builtin: what TF's converter writes as builtins -- band_part (NEG, GREATER_EQUAL,
  LOGICAL_AND, ZEROS_LIKE, SELECT_V2 there), diag and set_diag on the main diagonal
  (MATRIX_DIAG, MATRIX_SET_DIAG), tensor_scatter_nd_update / _add with distinct indices
  (six and eight ops there), scatter_nd.
* linalg_flex: what TF leaves to Flex -- diag off the main diagonal, rectangular sizes,
  padding and an alignment; diag_part; tensor_scatter_nd_update / _max / _min / _sub
  with duplicate indices; // of int64 argmax indices (FlexFloorDiv). (A band k = (lo, hi)
  of diag crashes TF 2.21's converter, and set_diag of a band fails TF's graph-mode shape
  function for an unknown batch: tests/converter/lower/test_linalg.py covers both.)
"""

from __future__ import annotations

from .beyond import finish_beyond  # first: sets TF_USE_LEGACY_KERAS
from .common import SEED, tf
from .op_zoo import _const
from .zoo_misc import _graph_model

SHAPE = (6, 6)


def _affine(x, rng):
    """h(): a fresh x * w + b per op (w, b per column), so no op's range widens another's."""
    return lambda: x * _const(rng, [SHAPE[-1]], 1.0) + _const(rng, [SHAPE[-1]], 0.3)


def _rows_first(h):
    """[B, 6, 6] -> [6, 6, B]: scatter indices address rows, the batch rides along."""
    return tf.transpose(h, [1, 2, 0])


def _batch_first(t):
    return tf.transpose(t, [2, 0, 1])


def _builtin_body(x, out, rng):
    h = _affine(x, rng)
    out(tf.linalg.band_part(h(), 1, 0), "band_part")
    out(tf.linalg.diag(h()[:, 0, :]), "diag")
    v = h()
    out(tf.linalg.set_diag(v, v[:, 1, :] * -2.0), "set_diag")
    t = _rows_first(h())
    out(_batch_first(tf.tensor_scatter_nd_update(t, [[1], [4]], t[2:4] * 2.0 - 1.0)),
        "scatter_update")
    t = _rows_first(h())
    out(_batch_first(tf.tensor_scatter_nd_add(t, [[0], [5], [2]], t[3:] * 0.5)),
        "scatter_add")
    t = _rows_first(h())
    out(_batch_first(tf.scatter_nd([[3], [0]], t[:2], tf.shape(t))), "scatter_nd")


def _flex_body(x, out, rng):
    h = _affine(x, rng)
    # (a band k = (lo, hi) of diagonals crashes TF 2.21's converter -- a segfault, not a
    # Flex error -- so it is left to tests/converter/lower/test_linalg.py)
    out(tf.linalg.diag(h()[:, 1, :5], k=-2, num_cols=5, padding_value=0.5,
                       align="LEFT_RIGHT"), "diag_sub")
    out(tf.linalg.diag(h()[:, 0, :4], k=1, num_rows=6, padding_value=-1.0), "diag_k1")
    out(tf.linalg.diag_part(h(), k=(-2, 1), padding_value=-1.0), "diag_part_band")
    # one scale for every column: a few values are not drowned in int8 by the range (and
    # the calibrated clipping) of a column weighted 3x (per-tensor parameters)
    out(tf.linalg.diag_part(x[:, :4, :] * 1.3 - 0.2), "diag_part")
    dup = [[1], [4], [1], [0]]
    for op, name in ((tf.tensor_scatter_nd_update, "scatter_update_dup"),
                     (tf.tensor_scatter_nd_max, "scatter_max"),
                     (tf.tensor_scatter_nd_min, "scatter_min"),
                     (tf.tensor_scatter_nd_sub, "scatter_sub")):
        t = _rows_first(x * 1.2 - 0.1)  # one scale for all columns (as diag_part's)
        out(_batch_first(op(t, dup, t[1:5] * 1.5 - 0.5)), name)
    # int64 indices in [0, 6), // 2 -- an int64 output (exact in float; int8 runs skip it:
    # near-ties flip an argmax of quantized values)
    out(tf.math.argmax(h(), axis=2) // 2, "argmax_floordiv")


def main() -> None:
    tf.compat.v1.set_random_seed(SEED)
    models = [
        _graph_model("linalg_builtin", SEED + 2500, SHAPE, _builtin_body, (
            "MatrixBandPart", "MatrixDiagV3", "MatrixSetDiagV3", "TensorScatterUpdate",
            "TensorScatterAdd", "ScatterNd")),
        _graph_model("linalg_flex", SEED + 2510, SHAPE, _flex_body, (
            "MatrixDiagV3", "MatrixDiagPartV3", "TensorScatterUpdate",
            "TensorScatterMax", "TensorScatterMin", "TensorScatterSub", "FloorDiv")),
    ]
    for spec, built, calib in models:
        print(spec.name)
        finish_beyond(spec, built, "misc", calib)


if __name__ == "__main__":
    main()
