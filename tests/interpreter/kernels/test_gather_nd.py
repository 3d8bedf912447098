"""GATHER_ND (interpreter/kernels/gather_nd.py) against LiteRT's reference kernels: every
params type LiteRT takes, int16 / int32 / int64 indices, full and partial index tuples,
quantized params kept unchanged, and LiteRT's invoke errors (negative coordinates, a
coordinate past its dimension -- checked per coordinate, not on the flat offset)."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError
from edgelite.interpreter.kernels.versions import T, TensorSig

from ..op_models import check_op, const, op_model, run_op
from tests.interpreter.tflite_builder import QuantModel
from tests.support import assert_bit_exact, full_range, random_qparams, run_litert

PARAMS = [np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_]

# op_version.cc, GATHER_ND (test_versions.py runs them)
_F32, _I32, _I16 = TensorSig(T.FLOAT32), TensorSig(T.INT32), TensorSig(T.INT16)
VERSION_CASES = [("GATHER_ND", [TensorSig(T.BOOL), _I32], 5), ("GATHER_ND", [_F32, _I16], 4),
                 ("GATHER_ND", [_I16, _I32], 3), ("GATHER_ND", [TensorSig(T.INT8), _I32], 1),
                 ("GATHER_ND", [_F32, _I32], 1)]


def expected(params, idx):
    return params[tuple(np.moveaxis(idx, -1, 0))]


@pytest.mark.parametrize("dtype", PARAMS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_types_and_tuple_lengths(rng, dtype, nd):
    params = (rng.standard_normal((3, 4, 5)) * 50).astype(dtype)
    idx = np.stack([rng.integers(0, d, (2, 3)) for d in params.shape[:nd]], -1).astype(np.int32)
    want = expected(params, idx)
    (out,) = check_op("GATHER_ND", [params, idx], [(want.shape, params.dtype)])
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("idx_dtype", [np.int16, np.int64])
@pytest.mark.parametrize("constant", [False, True])
def test_index_types_and_constant_indices(rng, idx_dtype, constant):
    params = rng.standard_normal((6, 2)).astype(np.float32)
    idx = np.array([[5, 1], [0, 0], [5, 1]], idx_dtype)
    (out,) = check_op("GATHER_ND", [params, const(idx) if constant else idx], [((3,), np.float32)])
    np.testing.assert_array_equal(out, expected(params, idx))


def test_empty_indices(rng):
    params = rng.standard_normal((3, 4)).astype(np.float32)
    (out,) = check_op("GATHER_ND", [params, np.zeros((0, 1), np.int64)], [((0, 4), np.float32)])
    assert out.shape == (0, 4)


def test_quantized_params_keep_their_codes(rng):
    q = random_qparams(rng, np.int8)
    m = QuantModel()
    x = m.input("x", (4, 6), np.int8, *q)
    idx = m.input("idx", (3, 1), np.int32)
    y = m.output("y", (3, 6), np.int8, *q)
    m.op("GATHER_ND", [x, idx], [y])
    feeds = [full_range(rng, (4, 6), np.int8), np.array([[3], [0], [3]], np.int32)]
    out = assert_bit_exact(m.build(), feeds)["reference"][0]
    np.testing.assert_array_equal(out, feeds[0][[3, 0, 3]])


@pytest.mark.parametrize("idx, match", [
    ([[1, -1]], r"negative coordinate \(-1\)"),
    ([[3, 0]], r"coordinate 3 in dimension 0 of size 3"),
    ([[0, 5]], r"coordinate 5 in dimension 1 of size 4"),  # flat offset 5 < 12: still out
])
@pytest.mark.parametrize("constant", [False, True])
def test_out_of_bounds_fails_like_litert(litert, idx, match, constant):
    params = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array(idx, np.int32)
    operand = const(idx) if constant else idx
    with pytest.raises(ShapeError, match=match):
        run_op("GATHER_ND", [params, operand], [((1,), np.float32)])
    if not constant:
        with pytest.raises(RuntimeError, match="gather_nd|positive"):
            run_litert(*op_model("GATHER_ND", [params, idx], [((1,), np.float32)]))


def test_refusals():
    params = np.zeros((3, 4), np.float32)
    with pytest.raises(ShapeError, match="length 3 .* rank-2 params"):
        run_op("GATHER_ND", [params, np.zeros((1, 3), np.int32)], [((1,), np.float32)])
    with pytest.raises(ShapeError, match="no coordinates"):
        run_op("GATHER_ND", [params, np.zeros((2, 0), np.int32)], [((2, 3, 4), np.float32)])
    with pytest.raises(ShapeError, match="params .* are empty"):
        run_op("GATHER_ND", [np.zeros((0, 4), np.float32), np.zeros((1, 1), np.int32)],
               [((1, 4), np.float32)])
