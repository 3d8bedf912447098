"""SHAPE, RANK, FILL, RANGE and ZEROS_LIKE against LiteRT's reference kernels."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError
from tests.support import rand

from ..op_models import check_op, const, run_op

I32, I64, F32 = np.int32, np.int64, np.float32


@pytest.mark.parametrize("out_type", [I32, I64])
@pytest.mark.parametrize("shape,dtype", [((2, 3, 4), F32), ((7,), I32),
                                         ((1, 5, 1, 2, 3), np.bool_)])
def test_shape(rng, out_type, shape, dtype):
    x = rand(rng, shape).astype(dtype)
    (out,) = check_op("SHAPE", [x], [((len(shape),), out_type)],
                      out_type=np.dtype(out_type).name.upper())
    np.testing.assert_array_equal(out, np.array(shape, out_type))


def test_shape_of_scalar():
    # LiteRT's Python API cannot read the empty result; declared as [1] because edgelite's
    # loader reads a declared zero-element tensor as an empty constant.
    (out,) = run_op("SHAPE", [np.float32(1.0)], [((1,), I32)])
    assert out.shape == (0,) and out.dtype == I32


def test_rank(rng):
    (out,) = check_op("RANK", [rand(rng, (2, 1, 3))], [((), I32)])
    assert out == 3


@pytest.mark.parametrize("dims_dtype", [I32, I64])
@pytest.mark.parametrize("value", [np.float32(2.5), np.int32(-7), np.int64(1 << 40),
                                   np.bool_(True)])
def test_fill(dims_dtype, value):
    dims = [2, 3, 1]
    (out,) = check_op("FILL", [const(dims, dims_dtype), const(value)],
                      [(dims, value.dtype)])
    np.testing.assert_array_equal(out, np.full(dims, value))


def test_fill_runtime_value():
    (out,) = check_op("FILL", [const([4], I32), np.array(3.25, F32)], [((4,), F32)])
    np.testing.assert_array_equal(out, [3.25] * 4)


def test_fill_runtime_dims_runs_at_invoke():
    # computed dims: the output is dynamic, prepared at invoke (interpreter/dynamic.py)
    (out,) = check_op("FILL", [np.array([2, 3], I32), const(1.5, F32)], [((2, 2), F32)])
    np.testing.assert_array_equal(out, np.full((2, 3), 1.5, F32))


@pytest.mark.parametrize("start,limit,delta", [(0, 10, 1), (3, 18, 4), (10, -3, -3),
                                               (-5, 5, 7), (0, 1, 5)])
@pytest.mark.parametrize("dtype", [I32, I64])
def test_range_int(start, limit, delta, dtype):
    expected = np.arange(start, limit, delta, dtype=dtype)
    (out,) = check_op("RANGE", [const(start, dtype), const(limit, dtype), const(delta, dtype)],
                      [(expected.shape, dtype)])
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("start,limit,delta", [(0.0, 1.0, 0.1), (0.3, 100.7, 0.37),
                                               (5.0, -2.5, -0.7), (1e6, 1e6 + 5.0, 0.1)])
def test_range_float_accumulates(start, limit, delta):
    # The reference adds delta repeatedly; compare bit for bit.
    args = [const(v, F32) for v in (start, limit, delta)]
    (out,) = check_op("RANGE", args, [((1,), F32)], rtol=0, atol_factor=0)
    assert out.size > 0


def test_range_empty():
    # TensorFlow's empty range; LiteRT refuses start == limit.
    (out,) = run_op("RANGE", [const(3, I32), const(3, I32), const(1, I32)], [((1,), I32)])
    assert out.shape == (0,)


@pytest.mark.parametrize("start,limit,delta", [(0, 5, 0), (0, 5, -1), (5, 0, 1)])
def test_range_bad_delta(start, limit, delta):
    with pytest.raises(ShapeError, match="delta must be non-zero"):
        run_op("RANGE", [const(start, I32), const(limit, I32), const(delta, I32)],
               [((1,), I32)])


@pytest.mark.parametrize("dtype", [F32, I32, I64, np.bool_])
def test_zeros_like(rng, dtype):
    x = (rand(rng, (3, 4)) * 10).astype(dtype)
    # LiteRT's ZEROS_LIKE refuses bool; edgelite accepts it.
    run = run_op if dtype == np.bool_ else check_op
    (out,) = run("ZEROS_LIKE", [x], [((3, 4), dtype)])
    assert out.dtype == dtype and out.shape == (3, 4) and not out.any()
