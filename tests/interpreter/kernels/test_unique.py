"""UNIQUE (interpreter/kernels/unique.py) against LiteRT's reference kernels: distinct
values in order of first appearance and each element's position among them, for every
value type, int32 and int64 positions; quantized codes compared as they are."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError

from ..op_models import check_op, run_op
from tests.interpreter.tflite_builder import QuantModel
from tests.support import assert_bit_exact, random_qparams

VALUES = [np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64]


def expected(x):
    seen = {}
    idx = [seen.setdefault(v.item(), len(seen)) for v in x]
    return np.array(list(seen), x.dtype), np.array(idx)


@pytest.mark.parametrize("dtype", VALUES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("idx_type", [np.int32, np.int64], ids=["i32", "i64"])
def test_order_of_first_appearance(rng, dtype, idx_type):
    x = rng.integers(0, 6, 20).astype(dtype)[::-1].copy()
    values, idx = check_op("UNIQUE", [x], [((6,), x.dtype), ((20,), idx_type)],
                           idx_out_type={np.int32: 2, np.int64: 4}[idx_type])  # TensorType
    want_values, want_idx = expected(x)
    np.testing.assert_array_equal(values, want_values)
    assert idx.dtype == idx_type
    np.testing.assert_array_equal(idx, want_idx)


def test_signed_zeros_are_one_value_and_empty_input():
    x = np.array([0.0, -0.0, 2.5, 0.0], np.float32)
    values, idx = check_op("UNIQUE", [x], [((2,), np.float32), ((4,), np.int32)])
    np.testing.assert_array_equal(idx, [0, 0, 1, 0])
    values, idx = run_op("UNIQUE", [np.zeros(0, np.int32)], [((0,), np.int32),
                                                              ((0,), np.int32)])
    assert values.shape == idx.shape == (0,)


def test_quantized_input(rng):
    q = random_qparams(rng, np.int8)
    m = QuantModel()
    x = m.input("x", (12,), np.int8, *q)
    y = m.output("y", (12,), np.int8, *q)
    i = m.output("i", (12,), np.int32)
    m.op("UNIQUE", [x], [y, i])
    feed = rng.integers(-3, 3, 12).astype(np.int8)
    values, idx = assert_bit_exact(m.build(), [feed])["reference"]
    np.testing.assert_array_equal(values, expected(feed)[0])


def test_refusals():
    with pytest.raises(ShapeError, match="must be a vector"):
        run_op("UNIQUE", [np.zeros((2, 2), np.int32)], [((4,), np.int32), ((4,), np.int32)])
    with pytest.raises(ShapeError, match="NaN"):
        run_op("UNIQUE", [np.array([np.nan, 1], np.float32)], [((2,), np.float32),
                                                              ((2,), np.int32)])
