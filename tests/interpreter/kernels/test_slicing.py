"""SLICE and STRIDED_SLICE against LiteRT's reference kernels."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError
from tests.support import rand

from ..op_models import check_op, const, run_op

I32 = np.int32


def strided(x, begin, end, strides, **masks):
    return check_op("STRIDED_SLICE", [x, const(begin, I32), const(end, I32),
                                      const(strides, I32)], [((1,), x.dtype)], **masks)[0]


@pytest.mark.parametrize("begin,end,strides,expected", [
    ([1, 0, 2], [3, 5, 6], [1, 2, 1], np.s_[1:3, 0:5:2, 2:6]),
    ([-3, -4, 0], [-1, 5, -2], [1, 1, 3], np.s_[-3:-1, -4:5, 0:-2:3]),
    ([3, 4, 5], [0, 0, 0], [-1, -2, -3], np.s_[3:0:-1, 4:0:-2, 5:0:-3]),
    ([-1, -1, -1], [-5, -6, -7], [-1, -1, -2], np.s_[::-1, ::-1, ::-2]),
    ([9, -9, 2], [12, 10, 100], [1, 1, 1], np.s_[9:12, -9:10, 2:100]),
    ([0, 3, 2], [4, 1, 3], [1, 1, 1], np.s_[0:4, 3:1, 2:3]),  # empty dimension
])
def test_strided_slice(rng, begin, end, strides, expected):
    x = rand(rng, (4, 5, 6))
    out = strided(x, begin, end, strides)
    np.testing.assert_array_equal(out, x[expected])


@pytest.mark.parametrize("masks,expected", [
    (dict(begin_mask=0b101), np.s_[:3, 1:4, :5]),
    (dict(end_mask=0b110), np.s_[1:3, 1:, 2:]),
    (dict(begin_mask=0b111, end_mask=0b111), np.s_[:, :, :]),
    (dict(shrink_axis_mask=0b001), np.s_[1, 1:4, 2:5]),
    (dict(shrink_axis_mask=0b101), np.s_[1, 1:4, 2]),
    (dict(shrink_axis_mask=0b010, begin_mask=0b010), np.s_[1:3, 0, 2:5]),
])
def test_strided_slice_masks(rng, masks, expected):
    x = rand(rng, (4, 5, 6))
    out = strided(x, [1, 1, 2], [3, 4, 5], [1, 1, 1], **masks)
    np.testing.assert_array_equal(out, x[expected])


def test_strided_slice_shrink_negative_index(rng):
    x = rand(rng, (4, 5))
    out = strided(x, [-1, 0], [0, 5], [1, 1], shrink_axis_mask=1)
    np.testing.assert_array_equal(out, x[-1])


@pytest.mark.parametrize("begin,end,strides,masks,expected", [
    ([0, 1], [0, 3], [1, 1], dict(ellipsis_mask=1), np.s_[..., 1:3]),
    ([1, 0], [3, 0], [1, 1], dict(ellipsis_mask=2), np.s_[1:3, ...]),
    ([0, 1, 0], [0, 2, 0], [1, 1, 1], dict(ellipsis_mask=1, new_axis_mask=4),
     np.s_[..., 1:2, None]),
    ([0, 1], [0, 4], [1, 2], dict(new_axis_mask=1), np.s_[None, 1:4:2]),
    ([0, 2, 0], [0, 3, 0], [1, 1, 1], dict(new_axis_mask=0b101, shrink_axis_mask=0b010),
     np.s_[None, 2, None]),
])
def test_strided_slice_ellipsis_new_axis(rng, begin, end, strides, masks, expected):
    x = rand(rng, (4, 5, 6))
    out = strided(x, begin, end, strides, **masks)
    np.testing.assert_array_equal(out, x[expected])


def test_strided_slice_offset(rng):
    x = rand(rng, (4, 5, 6))
    out = strided(x, [1, 0, 2], [2, 5, 3], [1, 2, 1], offset=True)
    np.testing.assert_array_equal(out, x[1:3, 0:5:2, 2:5])


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_])
def test_strided_slice_integer_shape_vector(rng, dtype):
    # Keras's shape plumbing: Shape -> StridedSlice(shrink) -> Pack.
    x = np.array([2, 28, 28, 3], dtype)
    assert strided(x, [0], [1], [1], shrink_axis_mask=1).shape == ()
    out = strided(x, [1], [0], [1], end_mask=1)
    np.testing.assert_array_equal(out, x[1:])


def test_strided_slice_runtime_begin_runs_at_invoke(rng):
    x = rand(rng, (4, 5))  # a computed begin: prepared at invoke (interpreter/dynamic.py)
    (out,) = check_op("STRIDED_SLICE", [x, np.array([1, 0], I32), const([3, 2], I32),
                                        const([1, 1], I32)], [((2, 2), np.float32)])
    np.testing.assert_array_equal(out, x[1:3, 0:2])


def test_strided_slice_zero_stride(rng):
    x = rand(rng, (4, 5))
    with pytest.raises(ShapeError, match="has a 0"):
        run_op("STRIDED_SLICE", [x, const([0, 0], I32), const([2, 2], I32),
                                 const([1, 0], I32)], [((2, 2), np.float32)])


@pytest.mark.parametrize("begin,size", [([1, 0, 2], [2, 5, 3]), ([0, 2, 1], [-1, -1, 4]),
                                        ([3, 4, 5], [1, 1, 1])])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_slice(rng, begin, size, index_dtype):
    x = rand(rng, (4, 5, 6))
    expected = x[tuple(slice(b, None if s == -1 else b + s) for b, s in zip(begin, size))]
    (out,) = check_op("SLICE", [x, const(begin, index_dtype), const(size, index_dtype)],
                      [(expected.shape, np.float32)])
    np.testing.assert_array_equal(out, expected)


def test_slice_empty(rng):
    # LiteRT's SLICE insists the declared output shape is exact, and edgelite's loader
    # reads a declared zero-element tensor as an empty constant: check against numpy.
    x = rand(rng, (4, 5, 6))
    (out,) = run_op("SLICE", [x, const([0, 2, 0], I32), const([4, 0, -1], I32)],
                    [((4, 1, 6), np.float32)])
    assert out.shape == (4, 0, 6)


def test_slice_int32_data():
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    check_op("SLICE", [x, const([1, 1, 0], I32), const([1, -1, 2], I32)], [((1, 2, 2), I32)])


def test_slice_runtime_begin(rng):
    x = rand(rng, (4, 5, 6))
    begin = np.array([2, 1, 3], I32)
    (out,) = check_op("SLICE", [x, begin, const([2, 3, 3], I32)], [((2, 3, 3), np.float32)])
    np.testing.assert_array_equal(out, x[2:4, 1:4, 3:6])
    with pytest.raises(ShapeError, match="outside the input shape"):
        run_op("SLICE", [x, np.array([3, 1, 3], I32), const([2, 3, 3], I32)],
               [((2, 3, 3), np.float32)])


def test_slice_out_of_range(rng):
    x = rand(rng, (4, 5))
    with pytest.raises(ShapeError, match="do not fit"):
        run_op("SLICE", [x, const([3, 0], I32), const([2, 5], I32)], [((2, 5), np.float32)])


def test_strided_slice_shrink_clamps_like_litert(rng):
    # TFLite clamps a shrunk begin like any start: -10 on a size-4 axis reads element 0.
    x = rand(rng, (4, 5))
    out = strided(x, [-10, 0], [0, 5], [1, 1], shrink_axis_mask=1)
    np.testing.assert_array_equal(out, x[0])


def test_strided_slice_shrink_past_the_end(rng):
    # TFLite would write nothing (begin clamps to the size); edgelite refuses.
    x = rand(rng, (4, 5))
    with pytest.raises(ShapeError, match="begin 7 of shrunk entry 0 is outside dimension 0"):
        run_op("STRIDED_SLICE", [x, const([7, 0], I32), const([8, 5], I32),
                                 const([1, 1], I32)], [((5,), np.float32)], shrink_axis_mask=1)


def test_strided_slice_offset_past_the_end(rng):
    x = rand(rng, (4, 5))
    with pytest.raises(ShapeError, match="runs past dimension 0"):
        run_op("STRIDED_SLICE", [x, const([2, 0], I32), const([3, 5], I32),
                                 const([1, 1], I32)], [((3, 5), np.float32)], offset=True)


def test_slice_with_a_computed_size_has_a_dynamic_output():
    # TensorFlow's TensorListSetItem in a loop body lowers to slices of computed length;
    # the output is a dynamic tensor (slice.cc SetTensorToDynamic), the RELU after it is
    # prepared at invoke for each shape.
    from tests.support import assert_sequence_matches_litert
    from tests.interpreter.tflite_builder import ModelBuilder
    b = ModelBuilder()
    x, given, size = b.tensor("x", [4, 5]), b.tensor("given", [2], I32), b.tensor("size", [2], I32)
    y = b.tensor("y", [1, 1], shape_signature=[-1, -1])
    z = b.tensor("z", [1, 1], shape_signature=[-1, -1])
    # (computed by an op, and an output of unknown shape: otherwise LiteRT takes the
    # declared shape, or reads a graph input's value at prepare time)
    b.op("ADD", [given, b.const("zero", np.array([0, 0], I32))], [size])
    b.op("SLICE", [x, b.const("begin", np.array([1, 0], I32)), size], [y])
    b.op("RELU", [y], [z])
    model = b.build([x, given], [z])
    data = np.arange(-10, 10, dtype=np.float32).reshape(4, 5)
    feeds = [[data, np.array(s, I32)] for s in ([2, 3], [3, -1], [0, 5], [1, 1])]
    runs = assert_sequence_matches_litert(model, feeds)
    assert [r[0].shape for r in runs] == [(2, 3), (3, 5), (0, 5), (1, 1)]
    np.testing.assert_array_equal(runs[0][0], np.maximum(data[1:3, 0:3], 0))
