"""ONE_HOT (interpreter/kernels/one_hot.py) bit-exact with both LiteRT kernel sets: int32 /
int64 indices (out of range ones too), every value type LiteRT computes (quantized int8 /
uint8 included), every axis, depth 0 and 1, constant and computed on / off values."""

import numpy as np
import pytest

from edgelite.interpreter import DTypeError, ShapeError, UnsupportedOpError

from ..op_models import const, op_model, run_op
from tests.interpreter.tflite_builder import QuantModel
from tests.support import assert_bit_exact

# -1 and 5 lie outside [0, depth) for every depth used: rows of off values.
INDICES = np.array([[0, 3, -1], [5, 1, 2]], np.int32)
VALUE_TYPES = [np.float32, np.int32, np.int64, np.int8, np.uint8, np.bool_]


def expected(indices, depth, on, off, axis):
    """TF's definition: position j of the new axis is on where index == j, else off."""
    out = np.where(indices[..., None] == np.arange(depth), on, off)
    return out if axis == -1 else np.moveaxis(out, -1, axis)


def one_hot(indices, depth, on, off, axis=-1, constant_values=True) -> np.ndarray:
    """Both kernel sets against LiteRT's; returns edgelite's output."""
    wrap = const if constant_values else np.asarray
    shape = list(indices.shape)
    shape.insert(len(shape) if axis == -1 else axis, depth)
    model, feeds = op_model("ONE_HOT", [indices, const(np.int32(depth)), wrap(on), wrap(off)],
                            [(shape, on.dtype)], axis=axis)
    return assert_bit_exact(model, feeds)["reference"][0]


@pytest.mark.parametrize("axis", [-1, 0, 1, 2])
@pytest.mark.parametrize("index_type", [np.int32, np.int64])
def test_axes_and_index_types(axis, index_type):
    idx = INDICES.astype(index_type)
    on, off = np.float32(2.5), np.float32(-1.0)
    out = one_hot(idx, 4, on, off, axis)
    np.testing.assert_array_equal(out, expected(idx, 4, on, off, axis))


@pytest.mark.parametrize("dtype", VALUE_TYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("depth", [0, 1, 3])
def test_value_types_and_depths(dtype, depth):
    on, off = np.array(1, dtype), np.array(0 if dtype == np.bool_ else 7, dtype)
    out = one_hot(INDICES, depth, on, off)
    assert out.dtype == dtype and out.shape == (2, 3, depth)
    np.testing.assert_array_equal(out, expected(INDICES, depth, on, off, -1))


def test_computed_on_and_off_values():
    on, off = np.float32(0.75), np.float32(0.25)
    out = one_hot(INDICES, 4, on, off, axis=0, constant_values=False)
    np.testing.assert_array_equal(out, expected(INDICES, 4, on, off, 0))


def test_int64_indices_are_truncated_to_int32():
    """LiteRT compares static_cast<int>(index) == j: 2**32 + 1 selects position 1."""
    idx = np.array([2**32 + 1, -2**32 + 2, 2**31 + 3, 3], np.int64)
    out = one_hot(idx, 4, np.float32(1), np.float32(0))
    np.testing.assert_array_equal(out.argmax(axis=1), [1, 2, 0, 3])
    np.testing.assert_array_equal(out.sum(axis=1), [1, 1, 0, 1])  # 2**31 + 3 wraps negative


@pytest.mark.parametrize("dtype, q", [(np.int8, (0.05, -128)), (np.uint8, (0.02, 10))])
def test_quantized_on_and_off_values_are_copied(dtype, q):
    m = QuantModel()
    idx = m.input("indices", (2, 3), np.int32)
    depth = m.const("depth", np.int32(3), np.int32)
    on, off = m.const("on", 107, dtype, *q), m.const("off", q[1], dtype, *q)
    m.op("ONE_HOT", [idx, depth, on, off], [m.output("y", (2, 3, 3), dtype, *q)], axis=-1)
    (out,) = assert_bit_exact(m.build(), [INDICES])["reference"]
    np.testing.assert_array_equal(out, expected(INDICES, 3, dtype(107), dtype(q[1]), -1))


def test_refusals():
    def model(on=np.float32(1), off=np.float32(0), depth=np.int32(3), **options):
        return run_op("ONE_HOT", [INDICES, const(depth), const(on), const(off)],
                      [((2, 3, 3), np.asarray(on).dtype)], **options)

    with pytest.raises(UnsupportedOpError, match=r"ONE_HOT.*on_value tensor 'const2' has type "
                       "int16"):  # LiteRT's Prepare takes it, its Eval fails
        model(np.int16(1), np.int16(0))
    with pytest.raises(DTypeError, match=r"off_value 'const3' is int32 but on_value 'const2' is "
                       "float32"):
        model(off=np.int32(0))
    with pytest.raises(ShapeError, match=r"depth must be >= 0, is -2"):
        model(depth=np.int32(-2))
    with pytest.raises(UnsupportedOpError, match=r"depth tensor 'const1' has type int64"):
        model(depth=np.int64(3))
    for axis in (3, -2):
        with pytest.raises(ShapeError, match=rf"axis {axis} must be -1 or lie in \[0, 2\]"):
            model(axis=axis)
    # a computed depth: the output is dynamic, prepared at invoke (interpreter/dynamic.py)
    (out,) = run_op("ONE_HOT", [INDICES, np.int32(3), const(np.float32(1)),
                                const(np.float32(0))], [((2, 3, 3), np.float32)])
    (want,) = model()
    np.testing.assert_array_equal(out, want)
