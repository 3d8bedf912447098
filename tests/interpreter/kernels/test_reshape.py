"""RESHAPE, SQUEEZE and EXPAND_DIMS against LiteRT's reference kernels; int8 / uint8
RESHAPE and SQUEEZE bit-exact with both LiteRT kernel sets."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError

from ..op_models import check_op, const
from tests.interpreter.tflite_builder import QuantModel
from tests.support import (assert_bit_exact, assert_matches_litert, full_range, rand,
                          random_qparams, run_edgelite)
from ..tflite_builder import ModelBuilder, single_op_model

I32, I64, F32 = np.int32, np.int64, np.float32


def reshape_model(x_shape, out_shape, *, shape_tensor=None, new_shape=None):
    b = ModelBuilder()
    x = b.tensor("x", x_shape)
    inputs = [x]
    if shape_tensor is not None:
        inputs.append(b.const("shape", np.array(shape_tensor, np.int32)))
    y = b.tensor("y", out_shape)
    options = {} if new_shape is None else {"new_shape": new_shape}
    b.op("RESHAPE", inputs, [y], **options)
    return b.build([x], [y])


@pytest.mark.parametrize("requested,expected", [([6, 4], (6, 4)), ([-1, 8], (3, 8)),
                                                ([2, -1, 2], (2, 6, 2)), ([24], (24,))])
def test_reshape_from_shape_tensor(rng, requested, expected):
    x = rand(rng, (2, 3, 4))
    (out,) = assert_matches_litert(reshape_model(x.shape, expected, shape_tensor=requested), [x])
    assert out.shape == expected


def test_reshape_from_options(rng):
    x = rand(rng, (2, 3, 4))
    (out,) = assert_matches_litert(reshape_model(x.shape, (4, 6), new_shape=[4, -1]), [x])
    assert out.shape == (4, 6)


def test_reshape_shape_tensor_wins_over_options(rng):
    x = rand(rng, (2, 6))
    model = reshape_model(x.shape, (3, 4), shape_tensor=[3, 4], new_shape=[12])
    (out,) = assert_matches_litert(model, [x])
    assert out.shape == (3, 4)


def test_reshape_bad_count(rng):
    with pytest.raises(ShapeError, match="cannot reshape 6 elements into \\[4, 2\\]"):
        run_edgelite(reshape_model((2, 3), (4, 2), shape_tensor=[4, 2]), [rand(rng, (2, 3))])
    with pytest.raises(ShapeError, match="more than one -1"):
        run_edgelite(reshape_model((2, 3), (6,), shape_tensor=[-1, -1]), [rand(rng, (2, 3))])


@pytest.mark.parametrize("dims,expected", [([], (3, 4)), ([0], (3, 1, 4)), ([-2, 0], (3, 4))])
def test_squeeze(rng, dims, expected):
    x = rand(rng, (1, 3, 1, 4))
    model = single_op_model("SQUEEZE", [x.shape], expected, squeeze_dims=dims)
    (out,) = assert_matches_litert(model, [x])
    assert out.shape == expected


def test_squeeze_non_unit_dimension(rng):
    model = single_op_model("SQUEEZE", [(1, 3)], (1,), squeeze_dims=[1])
    with pytest.raises(ShapeError, match="cannot squeeze dimension 1 of size 3"):
        run_edgelite(model, [rand(rng, (1, 3))])


@pytest.mark.parametrize("axis", [0, 1, 3, -1, -4, -2])
@pytest.mark.parametrize("axis_dtype", [I32, I64])
def test_expand_dims(rng, axis, axis_dtype):
    x = rand(rng, (2, 3, 4))
    expected = np.expand_dims(x, axis)
    (out,) = check_op("EXPAND_DIMS", [x, const([axis], axis_dtype)], [(expected.shape, F32)])
    np.testing.assert_array_equal(out, expected)


def test_expand_dims_int_scalar_axis():
    x = np.array([3, 5], I32)
    (out,) = check_op("EXPAND_DIMS", [x, const(0, I32)], [((1, 2), I32)])
    assert out.shape == (1, 2)


# --------------------------------------------------------------------------- int8 / uint8

DTYPES = [np.int8, np.uint8]


@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape_squeeze(rng, dtype):
    q = random_qparams(rng, dtype)
    m = QuantModel()
    x = m.input("x", (2, 1, 6, 1), dtype, *q)
    r = m.b.tensor("r", (3, 4), dtype, scale=q[0], zero_point=q[1])
    shape = m.const("shape", np.array([3, 4], np.int32), np.int32)
    m.op("RESHAPE", [x, shape], [r])
    s = m.output("s", (2, 6), dtype, *q)
    x2 = m.input("x2", (2, 1, 6, 1), dtype, *q)
    m.op("SQUEEZE", [x2], [s], squeeze_dims=[1, 3])
    m.outputs.insert(0, r)
    feeds = [full_range(rng, (2, 1, 6, 1), dtype) for _ in range(2)]
    assert_bit_exact(m.build(), feeds)
