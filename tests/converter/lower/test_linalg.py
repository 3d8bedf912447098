"""converter/lower/linalg.py: tf.linalg band ops, one node each, against numpy references
written from TF's op docs (array_ops.cc "MatrixDiagV3" and friends: the band layout, the
four alignments, num_rows / num_cols inference; "MatrixBandPart"), with the exact builtins
of each case -- MATRIX_DIAG / MATRIX_SET_DIAG where TF's converter writes them, GATHER /
SELECT_V2 (after a RESHAPE) for the cases TF leaves to Flex."""

import numpy as np
import pytest

from edgelite.errors import ShapeError

from .lowering import BOOL, F32, I32, I64, check, floats, graph, rng

COVERED = {"MatrixDiag", "MatrixDiagV2", "MatrixDiagV3", "MatrixSetDiag", "MatrixSetDiagV2",
           "MatrixSetDiagV3", "MatrixDiagPart", "MatrixDiagPartV2", "MatrixDiagPartV3",
           "MatrixBandPart"}
ALIGNS = ["RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"]


# -- references (tf.linalg docs), element by element ---------------------------------------------
def _k(k):
    k = np.atleast_1d(k)
    return int(k[0]), int(k[-1])


def _diag_len(d, rows, cols):
    return min(rows + min(0, d), cols - max(0, d))


def _offset(d, align, rows, cols, width):
    sup, sub = align.split("_")
    right = (d >= 0 and sup == "RIGHT") or (d <= 0 and sub == "RIGHT")
    return width - _diag_len(d, rows, cols) if right else 0


def ref_diag(diag, k=0, num_rows=-1, num_cols=-1, pad=0, align="RIGHT_LEFT"):
    lo, hi = _k(k)
    width = diag.shape[-1]
    min_rows, min_cols = width - min(hi, 0), width + max(lo, 0)
    if num_rows == num_cols == -1:
        num_rows = num_cols = max(min_rows, min_cols)
    rows = min_rows if num_rows == -1 else num_rows
    cols = min_cols if num_cols == -1 else num_cols
    batch = diag.shape[:-2] if lo < hi else diag.shape[:-1]
    return _fill_band(np.full(batch + (rows, cols), pad, diag.dtype), diag, k, align)


def _fill_band(out, diag, k, align):
    """out with the diagonals k of `diag` written on its matrices (in place)."""
    lo, hi = _k(k)
    if lo == hi:
        diag = diag[..., None, :]
    rows, cols = out.shape[-2:]
    width = diag.shape[-1]
    for m in range(rows):
        for n in range(cols):
            d = n - m
            if lo <= d <= hi:
                out[..., m, n] = diag[..., hi - d,
                                      n - max(d, 0) + _offset(d, align, rows, cols, width)]
    return out


def ref_diag_part(x, k=0, pad=0, align="RIGHT_LEFT"):
    lo, hi = _k(k)
    rows, cols = x.shape[-2:]
    width = min(rows + min(hi, 0), cols - max(lo, 0))
    out = np.full(x.shape[:-2] + (hi - lo + 1, width), pad, x.dtype)
    for i, d in enumerate(range(hi, lo - 1, -1)):
        for n in range(width):
            p = n - _offset(d, align, rows, cols, width)
            if 0 <= p < _diag_len(d, rows, cols):
                out[..., i, n] = x[..., p + max(-d, 0), p + max(d, 0)]
    return out[..., 0, :] if lo == hi else out


def ref_set_diag(x, diag, k=0, align="RIGHT_LEFT"):
    return _fill_band(x.copy(), diag, k, align)


def ref_band(x, lower, upper):
    m, n = np.arange(x.shape[-2])[:, None], np.arange(x.shape[-1])[None, :]
    keep = ((lower < 0) | (m - n <= lower)) & ((upper < 0) | (n - m <= upper))
    return np.where(keep, x, np.zeros((), x.dtype))


# -- graphs ----------------------------------------------------------------------------------
def diag_graph(op, diag, k=0, rows=-1, cols=-1, pad=0.0, align=None):
    g = graph(d=(diag.shape, diag.dtype))
    inputs = ["d"]
    if op != "MatrixDiag":
        g.const("k", np.array(k, np.int32))
        g.const("rows", np.int32(rows))
        g.const("cols", np.int32(cols))
        g.const("pad", np.asarray(pad, diag.dtype))
        inputs += ["k", "rows", "cols", "pad"]
    attrs = {} if align is None else {"align": align}
    g.node("y", op, inputs, T=diag.dtype, **attrs)
    return g


def test_matrix_diag_v1_is_the_builtin():
    d = floats(rng(), 2, 4)
    check(diag_graph("MatrixDiag", d), {"d": d}, ref_diag(d), ["MATRIX_DIAG"])


def test_matrix_diag_v3_main_diagonal_is_the_builtin():
    d = floats(rng(), 3)
    check(diag_graph("MatrixDiagV3", d, align="RIGHT_LEFT"), {"d": d}, ref_diag(d),
          ["MATRIX_DIAG"])


@pytest.mark.parametrize("align", ALIGNS)
@pytest.mark.parametrize("k, rows, cols", [(1, -1, -1), (-2, -1, -1), ((-1, 1), -1, -1),
                                           ((0, 2), 3, -1), ((-1, 0), -1, 5), (0, 3, 5),
                                           (0, 5, 3)])
def test_matrix_diag_bands(align, k, rows, cols):
    """Offsets, bands, rectangular outputs and a padding value: GATHER of the diagonals by a
    constant table, SELECT_V2 with the padding off the band (RESHAPE first for a band)."""
    lo, hi = _k(k)
    width = 3
    d = floats(rng(), 2, *((hi - lo + 1,) if lo < hi else ()), width)
    want = ref_diag(d, k, rows, cols, pad=9.0, align=align)
    ops = (["RESHAPE"] if lo < hi else []) + ["GATHER", "SELECT_V2"]
    check(diag_graph("MatrixDiagV3", d, k, rows, cols, 9.0, align), {"d": d}, want, ops)


def test_matrix_diag_v2_lays_out_left_left_and_pads_ints():
    d = np.arange(12, dtype=np.int32).reshape(2, 2, 3)
    want = ref_diag(d, (-1, 0), pad=-5, align="LEFT_LEFT")
    check(diag_graph("MatrixDiagV2", d, (-1, 0), pad=-5), {"d": d}, want,
          ["RESHAPE", "GATHER", "SELECT_V2"])


def test_matrix_diag_of_bools_avoids_the_builtin():
    """LiteRT's MATRIX_DIAG reads bool as float: GATHER / SELECT_V2 instead."""
    d = np.array([[True, False, True]])
    check(diag_graph("MatrixDiag", d), {"d": d}, ref_diag(d), ["GATHER", "SELECT_V2"])


def test_matrix_diag_sizes_that_do_not_fit_are_refused():
    d = floats(rng(), 3)
    with pytest.raises(ShapeError, match=r"num_rows 5 and num_cols 6 do not fit diagonals of "
                                         r"length 3 at k = \[0, 0\]"):
        check(diag_graph("MatrixDiagV3", d, 0, 5, 6), {"d": d}, None, [])
    with pytest.raises(ShapeError, match=r"takes \[\.\.\., 2, width\]"):
        check(diag_graph("MatrixDiagV3", d, (0, 1)), {"d": d}, None, [])


# -- MatrixDiagPart --------------------------------------------------------------------------
def part_graph(op, x, k=0, pad=0.0, align=None):
    g = graph(x=(x.shape, x.dtype))
    inputs = ["x"]
    if op != "MatrixDiagPart":
        g.const("k", np.array(k, np.int32))
        g.const("pad", np.asarray(pad, x.dtype))
        inputs += ["k", "pad"]
    attrs = {} if align is None else {"align": align}
    g.node("y", op, inputs, T=x.dtype, **attrs)
    return g


def test_matrix_diag_part_v1():
    x = floats(rng(), 2, 3, 4)
    check(part_graph("MatrixDiagPart", x), {"x": x}, ref_diag_part(x), ["RESHAPE", "GATHER"])


@pytest.mark.parametrize("align", ALIGNS)
@pytest.mark.parametrize("shape, k", [((3, 4), 1), ((4, 3), (-2, 1)), ((3, 3), (-1, 1)),
                                      ((2, 5), (0, 3))])
def test_matrix_diag_part_bands(align, shape, k):
    x = floats(rng(), 2, *shape)
    want = ref_diag_part(x, k, 7.0, align)
    check(part_graph("MatrixDiagPartV3", x, k, 7.0, align), {"x": x}, want,
          ["RESHAPE", "GATHER"] + (["SELECT_V2"] if (want == 7.0).any() else []))


def test_matrix_diag_part_v2_of_ints():
    x = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
    check(part_graph("MatrixDiagPartV2", x, (-1, 2), -1), {"x": x},
          ref_diag_part(x, (-1, 2), -1, "LEFT_LEFT"), ["RESHAPE", "GATHER", "SELECT_V2"])


def test_matrix_diag_part_k_outside_the_matrix_is_refused():
    x = floats(rng(), 3, 4)
    with pytest.raises(ShapeError, match=r"k = \[0, 4\] lies outside the 3 x 4 matrices"):
        check(part_graph("MatrixDiagPartV3", x, (0, 4)), {"x": x}, None, [])


# -- MatrixSetDiag ---------------------------------------------------------------------------
def set_graph(op, x, d, k=0, align=None):
    g = graph(x=(x.shape, x.dtype), d=(d.shape, d.dtype))
    inputs = ["x", "d"]
    if op != "MatrixSetDiag":
        g.const("k", np.array(k, np.int32))
        inputs.append("k")
    attrs = {} if align is None else {"align": align}
    g.node("y", op, inputs, T=x.dtype, **attrs)
    return g


@pytest.mark.parametrize("op", ["MatrixSetDiag", "MatrixSetDiagV3"])
def test_matrix_set_diag_main_diagonal_is_the_builtin(op):
    x, d = floats(rng(), 2, 3, 5), floats(rng(), 2, 3)
    check(set_graph(op, x, d), {"x": x, "d": d}, ref_set_diag(x, d), ["MATRIX_SET_DIAG"])


@pytest.mark.parametrize("align", ALIGNS)
@pytest.mark.parametrize("shape, k", [((3, 4), 1), ((4, 3), (-2, 1)), ((3, 3), (-1, 0))])
def test_matrix_set_diag_bands(align, shape, k):
    x = floats(rng(), 2, *shape)
    d = ref_diag_part(floats(rng(), 2, *shape), k, 0.0, align)  # the right shape
    ops = (["RESHAPE"] if np.ptp(_k(k)) else []) + ["GATHER", "SELECT_V2"]
    check(set_graph("MatrixSetDiagV3", x, d, k, align), {"x": x, "d": d},
          ref_set_diag(x, d, k, align), ops)


def test_matrix_set_diag_v2_of_bools():
    x = np.zeros((3, 3), bool)
    d = np.array([[True, False, True], [True, True, False]])
    check(set_graph("MatrixSetDiagV2", x, d, (0, 1)), {"x": x, "d": d},
          ref_set_diag(x, d, (0, 1), "LEFT_LEFT"), ["RESHAPE", "GATHER", "SELECT_V2"])


def test_matrix_set_diag_wrong_diagonal_is_refused():
    x, d = floats(rng(), 3, 4), floats(rng(), 4)
    with pytest.raises(ShapeError, match=r"the diagonal has shape \[4\]; the input \[3, 4\] at "
                                         r"k = \[0, 0\] takes \[3\]"):
        check(set_graph("MatrixSetDiag", x, d), {"x": x, "d": d}, None, [])


# -- MatrixBandPart --------------------------------------------------------------------------
def band_graph(x, lower, upper, dtype=I64, computed=False):
    g = graph(x=(x.shape, x.dtype), **({"lo": ((), dtype), "up": ((), dtype)} if computed else {}))
    if not computed:
        g.const("lo", np.asarray(lower, dtype))
        g.const("up", np.asarray(upper, dtype))
    g.node("y", "MatrixBandPart", ["x", "lo", "up"], T=x.dtype, Tindex=dtype)
    return g


@pytest.mark.parametrize("lower, upper", [(0, 0), (-1, 0), (0, -1), (1, 2), (3, 0), (2, 3)])
def test_matrix_band_part_is_one_select(lower, upper):
    x = floats(rng(), 2, 3, 5)
    check(band_graph(x, lower, upper), {"x": x}, ref_band(x, lower, upper), ["SELECT_V2"])


def test_matrix_band_part_keeping_everything_is_no_op():
    x = floats(rng(), 3, 4)
    g = band_graph(x, -1, -1, I32)
    g.node("z", "Neg", ["y"], T=F32)
    check(g, {"x": x}, -x, ["NEG"], outputs=["z"])


@pytest.mark.parametrize("lower, upper", [(1, 0), (-1, 2), (0, -1)])
def test_matrix_band_part_with_computed_limits(lower, upper):
    x = np.arange(1, 13, dtype=np.int32).reshape(3, 4)
    feeds = {"x": x, "lo": np.int32(lower), "up": np.int32(upper)}
    check(band_graph(x, lower, upper, I32, computed=True), feeds, ref_band(x, lower, upper),
          ["GREATER_EQUAL", "LESS", "LOGICAL_OR", "GREATER_EQUAL", "LESS", "LOGICAL_OR",
           "LOGICAL_AND", "SELECT_V2"])


def test_matrix_band_part_limit_past_the_matrix_is_refused():
    x = floats(rng(), 3, 4)
    with pytest.raises(ShapeError, match="num_lower = 4 must be negative or at most 3"):
        check(band_graph(x, 4, 0), {"x": x}, None, [])


def test_bool_band():
    x = np.ones((3, 3), bool)
    check(band_graph(x, 0, 1), {"x": x}, ref_band(x, 0, 1), ["SELECT_V2"])
    assert BOOL == x.dtype
