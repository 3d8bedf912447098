"""SCATTER_ND (interpreter/kernels/scatter_nd.py) against LiteRT, both kernel sets, bit for
bit: every updates type LiteRT takes, full and partial index tuples, duplicates (summed in
the element type: wrapping integers, OR for bool), constant and computed shapes, nd = 0,
empty updates, and LiteRT's refusals (int16 updates, int64 indices, out-of-range
coordinates checked per coordinate, updates that do not fit the shape)."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError
from edgelite.errors import DTypeError, UnsupportedOpError

from ..op_models import const, op_model, run_op
from tests.interpreter.tflite_builder import QuantModel
from tests.support import assert_bit_exact, random_qparams, run_litert

UPDATES = [np.float32, np.int8, np.uint8, np.int32, np.int64, np.bool_]


def scatter(indices, updates, shape):
    """TF's ScatterNd: zeros, then each slice added at its index tuple, in order."""
    out = np.zeros(shape, updates.dtype)
    nd = indices.shape[-1]
    flat = updates.reshape((-1,) + tuple(shape[nd:]))
    with np.errstate(over="ignore"):  # integers wrap, as in C++
        for k, tup in enumerate(indices.reshape(-1, nd)):
            out[tuple(tup)] += flat[k]
    return out


def exact(operands, shape, dtype):
    return assert_bit_exact(*op_model("SCATTER_ND", operands, [(shape, dtype)]))["reference"][0]


@pytest.mark.parametrize("dtype", UPDATES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_types_and_tuple_lengths_with_duplicates(rng, dtype, nd):
    shape = (4, 3, 5)
    idx = np.stack([rng.integers(0, d, (6,)) for d in shape[:nd]], -1).astype(np.int32)
    idx[3] = idx[0]  # a duplicate: summed
    upd = (rng.standard_normal((6,) + shape[nd:]) * 60).astype(dtype)
    out = exact([idx, upd, const(np.array(shape, np.int32))], shape, dtype)
    np.testing.assert_array_equal(out, scatter(idx, upd, shape))


def test_integer_sums_wrap(rng):
    idx = np.array([[1], [1]], np.int32)
    upd = np.full((2, 2), 100, np.int8)
    out = exact([const(idx), upd, const(np.array([3, 2], np.int32))], (3, 2), np.int8)
    np.testing.assert_array_equal(out[1], [-56, -56])


def test_computed_shape_and_batched_indices(rng):
    idx = rng.integers(0, 5, (2, 3, 1)).astype(np.int32)
    upd = rng.standard_normal((2, 3, 4)).astype(np.float32)
    shape = np.array([5, 4], np.int32)
    out = exact([idx, upd, shape], (5, 4), np.float32)
    np.testing.assert_array_equal(out, scatter(idx, upd, (5, 4)))


def test_no_coordinates_adds_to_everything(rng):
    upd = rng.standard_normal((3, 2, 2)).astype(np.float32)
    out = exact([const(np.zeros((3, 0), np.int32)), upd, const(np.array([2, 2], np.int32))],
                (2, 2), np.float32)
    np.testing.assert_array_equal(out, upd[0] + upd[1] + upd[2])


def test_empty_updates():
    out = exact([const(np.zeros((0, 1), np.int32)), np.zeros((0, 2), np.float32),
                 const(np.array([3, 2], np.int32))], (3, 2), np.float32)
    np.testing.assert_array_equal(out, np.zeros((3, 2), np.float32))


@pytest.mark.parametrize("idx", [[[1, 3]], [[-1, 0]], [[2, 0]]],
                         ids=["inner", "negative", "outer"])
@pytest.mark.parametrize("shape_const", [True, False])
def test_out_of_range_fails_like_litert(idx, shape_const):
    """[1, 3] in a 2 x 3 output has flat offset 5 < 6, yet LiteRT fails it: the check is per
    coordinate."""
    idx = np.array(idx, np.int32)
    shape = np.array([2, 3], np.int32)
    operands = [idx, np.ones(1, np.float32), const(shape) if shape_const else shape]
    with pytest.raises(ShapeError, match="scatter_nd index out of bounds"):
        run_op("SCATTER_ND", operands, [((2, 3), np.float32)])
    with pytest.raises(RuntimeError, match="scatter_nd index out of bounds"):
        run_litert(*op_model("SCATTER_ND", operands, [((2, 3), np.float32)]))


def test_refusals_match_litert():
    shape = const(np.array([5, 2], np.int32))
    cases = [
        ([const(np.array([[1]], np.int32)), np.ones((1, 2), np.int16), shape], np.int16,
         UnsupportedOpError, "updates tensor .* type int16"),
        ([const(np.array([[1]], np.int64)), np.ones((1, 2), np.float32),
          const(np.array([5, 2], np.int64))], np.float32, UnsupportedOpError,
         "indices tensor .* type int64"),
        ([const(np.array([[1]], np.int32)), np.ones((1, 3), np.float32), shape], np.float32,
         ShapeError, r"updates \[1, 3\] and shape \[5, 2\] do not fit"),
    ]
    for operands, dtype, error, match in cases:
        with pytest.raises(error, match=match):
            run_op("SCATTER_ND", operands, [((5, 2), dtype)])
        with pytest.raises(RuntimeError):
            run_litert(*op_model("SCATTER_ND", operands, [((5, 2), dtype)]))
    with pytest.raises(DTypeError, match="indices' type"):
        run_op("SCATTER_ND", [np.array([[1]], np.int32), np.ones((1, 2), np.float32),
                              const(np.array([5, 2], np.int64))], [((5, 2), np.float32)])


def test_quantized_updates_move_as_codes(rng):
    """A quantized file (TF's quantizer gives updates and output one set of parameters):
    the cleared output holds code 0 and duplicates add codes -- as in LiteRT, both kernel
    sets. (edgelite's own quantizer keeps SCATTER_ND float: code 0 is 0.0 only for a zero
    point of 0.)"""
    q = random_qparams(rng, np.int8)
    m = QuantModel()
    idx = m.const("idx", np.array([[2], [0], [2]]), np.int32)
    upd = m.input("u", (3, 4), np.int8, *q)
    shape = m.const("shape", np.array([4, 4]), np.int32)
    m.op("SCATTER_ND", [idx, upd, shape], [m.output("y", (4, 4), np.int8, *q)])
    feeds = [rng.integers(-40, 40, (3, 4)).astype(np.int8)]
    out = assert_bit_exact(m.build(), feeds)["reference"][0]
    np.testing.assert_array_equal(out, scatter(np.array([[2], [0], [2]]), feeds[0], (4, 4)))
