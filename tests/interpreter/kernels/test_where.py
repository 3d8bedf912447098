"""WHERE (interpreter/kernels/where.py) against LiteRT's reference kernels: the int64
coordinates of the non-zero elements in row-major order, for every condition type LiteRT
takes and ranks 1 to 4, none or all true; a dynamic output read by a following op."""

import numpy as np
import pytest

from edgelite.interpreter import DTypeError, Interpreter, ShapeError, UnsupportedOpError
from edgelite.interpreter.kernels.versions import T, TensorSig
from tests.support import run_litert

from ..op_models import check_op, run_op
from ..tflite_builder import ModelBuilder

CONDITIONS = [np.bool_, np.float32, np.int32, np.int64, np.int8, np.uint8]

# op_version.cc, WHERE (test_versions.py runs them)
VERSION_CASES = [("WHERE", [TensorSig(T.BOOL)], 1), ("WHERE", [TensorSig(T.FLOAT32)], 2),
                 ("WHERE", [TensorSig(T.INT8)], 2)]


@pytest.mark.parametrize("dtype", CONDITIONS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 4), (2, 1, 3, 2)])
def test_coordinates_in_row_major_order(rng, dtype, shape):
    cond = (rng.integers(0, 3, shape) * rng.integers(-1, 2, shape)).astype(dtype)
    want = np.argwhere(cond)
    (out,) = check_op("WHERE", [cond], [((len(want), len(shape)), np.int64)])
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("fill", [False, True])
def test_none_or_all_true(fill):
    cond = np.full((3, 2), fill)  # (LiteRT's Python API cannot read an empty output)
    (out,) = (check_op if fill else run_op)("WHERE", [cond], [((6, 2), np.int64)])
    assert out.shape == ((6, 2) if fill else (0, 2))


def test_dynamic_output_feeds_the_next_op(rng):
    """WHERE then GATHER_ND (tf.sparse.from_dense's pattern): the reader is prepared at
    invoke for the row count it gets, on every invoke."""
    b = ModelBuilder()
    x = b.tensor("x", (2, 5), np.int32)
    zero = b.const("zero", np.zeros((), np.int32))
    mask = b.tensor("mask", (2, 5), np.bool_)
    coords = b.tensor("coords", (1, 2), np.int64)
    values = b.tensor("values", (1,), np.int32)
    b.op("NOT_EQUAL", [x, zero], [mask])
    b.op("WHERE", [mask], [coords])
    b.op("GATHER_ND", [x, coords], [values])
    model = b.build([x], [coords, values])
    interp = Interpreter(model_content=model)
    interp.allocate_tensors()
    # before an invoke the rows are unknown: -1 (the converter's shape inference reads it)
    assert interp.get_output_details()[0]["shape"].tolist() == [-1, 2]
    for _ in range(2):
        feed = rng.integers(0, 3, (2, 5)).astype(np.int32)
        interp.set_tensor(interp.get_input_details()[0]["index"], feed)
        interp.invoke()
        got = [interp.get_tensor(d["index"]) for d in interp.get_output_details()]
        for a, b_ in zip(got, run_litert(model, [feed])):
            np.testing.assert_array_equal(a, b_)
        np.testing.assert_array_equal(got[1], feed[feed != 0])


def test_refusals():
    with pytest.raises(ShapeError, match="scalar; WHERE needs rank > 0"):
        run_op("WHERE", [np.array(True)], [((1, 0), np.int64)])
    with pytest.raises(UnsupportedOpError, match="has type int16"):
        run_op("WHERE", [np.ones(3, np.int16)], [((3, 1), np.int64)])
    with pytest.raises(DTypeError, match="must be int64"):
        run_op("WHERE", [np.ones(3, bool)], [((3, 1), np.int32)])
