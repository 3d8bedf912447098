"""MATRIX_DIAG / MATRIX_SET_DIAG (interpreter/kernels/matrix_diag.py) against LiteRT, both
kernel sets, bit for bit: every element type LiteRT's switch handles, batches, rectangular
matrices, quantized tensors moved code for code, and the refusals (types LiteRT reads as
float, a scalar, a diagonal of the wrong size)."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError
from edgelite.errors import DTypeError, UnsupportedOpError

from ..op_models import const, op_model, run_op
from tests.interpreter.tflite_builder import QuantModel
from tests.support import assert_bit_exact, full_range, random_qparams

TYPES = [np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64]


def values(rng, shape, dtype):
    return (rng.standard_normal(shape) * 40).astype(dtype)


def exact(op, operands, outputs):
    """Both LiteRT kernel sets, bit for bit; returns edgelite's output."""
    return assert_bit_exact(*op_model(op, operands, outputs))["reference"][0]


@pytest.mark.parametrize("dtype", TYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(1,), (4,), (2, 3, 5)])
def test_matrix_diag(rng, dtype, shape):
    d = values(rng, shape, dtype)
    want = np.zeros(shape + shape[-1:], dtype)
    idx = np.arange(shape[-1])
    want[..., idx, idx] = d
    np.testing.assert_array_equal(exact("MATRIX_DIAG", [d], [(want.shape, dtype)]), want)


def test_matrix_diag_constant_input(rng):
    d = values(rng, (2, 3), np.float32)
    out = run_op("MATRIX_DIAG", [const(d)], [((2, 3, 3), np.float32)])[0]
    np.testing.assert_array_equal(out, np.stack([np.diag(r) for r in d]))


@pytest.mark.parametrize("dtype", TYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(3, 3), (3, 5), (5, 2), (2, 1, 4, 3)])
def test_matrix_set_diag(rng, dtype, shape):
    x = values(rng, shape, dtype)
    n = min(shape[-2:])
    d = values(rng, shape[:-2] + (n,), dtype)
    want = x.copy()
    want[..., np.arange(n), np.arange(n)] = d
    np.testing.assert_array_equal(exact("MATRIX_SET_DIAG", [x, d], [(shape, dtype)]), want)


def test_matrix_set_diag_empty_matrices(rng):
    x = np.zeros((2, 0, 3), np.float32)
    out = exact("MATRIX_SET_DIAG", [x, np.zeros((2, 0), np.float32)], [(x.shape, np.float32)])
    assert out.shape == (2, 0, 3)


def test_quantized_codes_move_unchanged(rng):
    """A quantized file: MATRIX_SET_DIAG moves codes; MATRIX_DIAG writes code 0 off the
    diagonal (not the zero point) -- as LiteRT does, both kernel sets."""
    q = random_qparams(rng, np.int8)
    for op, shapes, out_shape in (("MATRIX_SET_DIAG", [(3, 4), (3,)], (3, 4)),
                                  ("MATRIX_DIAG", [(2, 3)], (2, 3, 3))):
        m = QuantModel()
        ins = [m.input(f"x{i}", s, np.int8, *q) for i, s in enumerate(shapes)]
        m.op(op, ins, [m.output("y", out_shape, np.int8, *q)])
        feeds = [full_range(rng, s, np.int8) for s in shapes]
        out = assert_bit_exact(m.build(), feeds)["reference"][0]
        if op == "MATRIX_DIAG":
            assert out[0, 0, 1] == 0 and out[1, 2, 2] == feeds[0][1, 2]
        else:
            np.testing.assert_array_equal(out[[0, 1, 2], [0, 1, 2]], feeds[1])


@pytest.mark.parametrize("dtype", [np.bool_, np.float16])
def test_types_litert_reads_as_float_are_refused(dtype):
    with pytest.raises(UnsupportedOpError, match=f"type {np.dtype(dtype).name}"):
        run_op("MATRIX_DIAG", [np.ones(3, dtype)], [((3, 3), dtype)])
    with pytest.raises(UnsupportedOpError, match=f"type {np.dtype(dtype).name}"):
        run_op("MATRIX_SET_DIAG", [np.ones((3, 3), dtype), np.ones(3, dtype)],
               [((3, 3), dtype)])


def test_refusals():
    with pytest.raises(ShapeError, match="scalar; MATRIX_DIAG needs"):
        run_op("MATRIX_DIAG", [np.float32(1)], [((1,), np.float32)])
    with pytest.raises(ShapeError, match="at least two dimensions"):
        run_op("MATRIX_SET_DIAG", [np.ones(3, np.float32), np.ones(3, np.float32)],
               [((3,), np.float32)])
    with pytest.raises(ShapeError, match=r"takes 3 diagonal values \(\[3\]\)"):
        run_op("MATRIX_SET_DIAG", [np.ones((3, 4), np.float32), np.ones(2, np.float32)],
               [((3, 4), np.float32)])
    with pytest.raises(DTypeError, match="they must be equal"):
        run_op("MATRIX_SET_DIAG", [np.ones((3, 3), np.float32), np.ones(3, np.int32)],
               [((3, 3), np.float32)])
