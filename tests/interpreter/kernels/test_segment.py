"""SEGMENT_SUM and UNSORTED_SEGMENT_SUM / _MAX / _MIN / _PROD (interpreter/kernels/segment.py)
against LiteRT: float32 and int32 data, ids read at invoke or constant, multi-dimensional ids,
negative ids dropped, empty segments holding LiteRT's identities (0, 1, lowest, highest),
and the errors for hostile ids and counts (no huge allocation). SEGMENT_SUM is compared with
LiteRT's default kernels (its reference resolver lacks the op)."""

import numpy as np
import pytest

from edgelite.interpreter import DTypeError, ShapeError, UnsupportedOpError
from tests.support import run_litert

from ..op_models import check_op, check_op_default, const, op_model, run_op

UNSORTED = {"UNSORTED_SEGMENT_SUM": (np.add.at, 0), "UNSORTED_SEGMENT_PROD": (np.multiply.at, 1),
            "UNSORTED_SEGMENT_MAX": (np.maximum.at, "lowest"),
            "UNSORTED_SEGMENT_MIN": (np.minimum.at, "highest")}


def expected(op, data, ids, n):
    reduce, identity = UNSORTED[op]
    if isinstance(identity, str):
        info = np.finfo(data.dtype) if data.dtype.kind == "f" else np.iinfo(data.dtype)
        identity = info.min if identity == "lowest" else info.max
    out = np.full((n,) + data.shape[ids.ndim:], identity, data.dtype)
    keep = ids >= 0
    reduce(out, ids[keep], data[keep])
    return out


def data_of(rng, shape, dtype):
    return (rng.standard_normal(shape) * 3).astype(dtype)


@pytest.mark.parametrize("op", list(UNSORTED))
@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=["f32", "i32"])
@pytest.mark.parametrize("constant", [False, True])
def test_unsorted(rng, op, dtype, constant):
    data = data_of(rng, (9, 3), dtype)
    ids = np.array([4, 0, -1, 4, 2, 0, -3, 4, 1], np.int32)  # segment 3 and 5 empty
    n = np.array([6], np.int32)
    operands = [data, const(ids), const(n)] if constant else [data, ids, n]
    (out,) = check_op(op, operands, [((6, 3), dtype)])
    np.testing.assert_array_equal(out, expected(op, data, ids, 6))


@pytest.mark.parametrize("op", list(UNSORTED))
def test_unsorted_ids_over_leading_dims_and_scalar_count(rng, op):
    data = data_of(rng, (4, 2, 3), np.float32)
    ids = np.array([[1, 0], [2, 2], [1, -1], [0, 0]], np.int32)
    (out,) = check_op(op, [data, ids, np.array(3, np.int32)], [((3, 3), np.float32)])
    np.testing.assert_array_equal(out, expected(op, data, ids, 3))


@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=["f32", "i32"])
def test_segment_sum(rng, dtype):
    data = data_of(rng, (7, 2, 2), dtype)
    ids = np.array([0, 0, 1, 2, 2, 2, 3], np.int32)
    (out,) = check_op_default("SEGMENT_SUM", [data, ids], [((4, 2, 2), dtype)])
    want = np.zeros((4, 2, 2), dtype)
    np.add.at(want, ids, data)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("ids, match", [([1, 1, 2], "first segment id is 1"),
                                        ([0, 0, 2], "without gaps"),
                                        ([0, 1, 0], "without gaps")])
def test_segment_sum_refuses_what_litert_refuses(ids, match):
    data, ids = np.ones((3, 2), np.float32), np.array(ids, np.int32)
    with pytest.raises(ShapeError, match=match):
        run_op("SEGMENT_SUM", [data, ids], [((3, 2), np.float32)])


@pytest.mark.parametrize("n, ids, match", [
    (3, [0, 3], "segment id 3 is not below num_segments 3"),
    (-2, [-1, -1], "num_segments is -2"),
    (2**30, [0, 1], "over the limit"),   # LiteRT: "Output element count overflows int"
    (2**28, [0, 1], "over the limit"),   # fits an int, not the per-tensor byte limit
])
@pytest.mark.parametrize("constant", [False, True])
def test_hostile_counts_and_ids(n, ids, match, constant):
    data = np.ones((2, 4), np.float32)
    operands = [data, np.array(ids, np.int32), np.array([n], np.int32)]
    if constant:
        operands[2] = const(operands[2][0])
    with pytest.raises(ShapeError, match=match):
        run_op("UNSORTED_SEGMENT_SUM", operands, [((3, 4), np.float32)])
    if not constant and n != 2**28:  # LiteRT fails these too
        with pytest.raises(RuntimeError, match="unsorted_segment"):
            run_litert(*op_model("UNSORTED_SEGMENT_SUM", operands, [((3, 4), np.float32)]))


def test_type_refusals():
    with pytest.raises(UnsupportedOpError, match="int8"):
        run_op("UNSORTED_SEGMENT_MAX", [np.ones((2, 2), np.int8), np.zeros(2, np.int32),
                                        np.array([1], np.int32)], [((1, 2), np.int8)])
    with pytest.raises((DTypeError, UnsupportedOpError), match="int64"):
        run_op("UNSORTED_SEGMENT_SUM", [np.ones((2, 2), np.float32), np.zeros(2, np.int64),
                                        np.array([1], np.int32)], [((1, 2), np.float32)])
    with pytest.raises(ShapeError, match="leading dimension"):
        run_op("UNSORTED_SEGMENT_SUM", [np.ones((2, 2), np.float32), np.zeros(3, np.int32),
                                        np.array([1], np.int32)], [((1, 2), np.float32)])
    with pytest.raises(ShapeError, match="scalar or \\[1\\]"):
        run_op("UNSORTED_SEGMENT_SUM", [np.ones((2, 2), np.float32), np.zeros(2, np.int32),
                                        np.array([1, 2], np.int32)], [((1, 2), np.float32)])
