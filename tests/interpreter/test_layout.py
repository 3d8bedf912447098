"""TRANSPOSE, EXPAND_DIMS, PACK, UNPACK, SPLIT, SPLIT_V, TILE, BROADCAST_TO, GATHER
against LiteRT's reference kernels."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError, UnsupportedOpError

from .oracle import rand
from .op_models import check_op, const, run_op

I32, I64, F32 = np.int32, np.int64, np.float32


@pytest.mark.parametrize("perm", [[1, 0], [0, 2, 1], [2, 0, 1], [3, 1, 0, 2], [0, 1, 2, 3, 4],
                                  [4, 2, 0, 3, 1]])
@pytest.mark.parametrize("dtype", [F32, I32])
def test_transpose(rng, perm, dtype):
    x = rand(rng, (2, 3, 4, 5, 6)[:len(perm)], low=-50, high=50).astype(dtype)
    expected = x.transpose(perm)
    (out,) = check_op("TRANSPOSE", [x, const(perm, I32)], [(expected.shape, dtype)])
    np.testing.assert_array_equal(out, expected)


def test_transpose_bad_perm(rng):
    with pytest.raises(ShapeError, match="not a permutation"):
        run_op("TRANSPOSE", [rand(rng, (2, 3)), const([0, 0], I32)], [((2, 3), F32)])
    with pytest.raises(UnsupportedOpError, match="perm .*must be a constant"):
        run_op("TRANSPOSE", [rand(rng, (2, 3)), np.array([1, 0], I32)], [((3, 2), F32)])


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


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("count", [1, 3])
def test_pack(rng, axis, count):
    xs = [rand(rng, (2, 4)) for _ in range(count)]
    expected = np.stack(xs, axis=axis)
    (out,) = check_op("PACK", xs, [(expected.shape, F32)], axis=axis, values_count=count)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype", [I32, I64])
def test_pack_int_scalars(dtype):
    # The usual shape plumbing: Pack(batch, -1, 4) of scalars.
    parts = [np.array(7, dtype), const(-1, dtype), const(4, dtype)]
    (out,) = check_op("PACK", parts, [((3,), dtype)], values_count=3)
    np.testing.assert_array_equal(out, [7, -1, 4])


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unpack(rng, axis):
    x = rand(rng, (3, 4, 2))
    parts = [np.take(x, i, axis=axis) for i in range(x.shape[axis])]
    outs = check_op("UNPACK", [x], [(p.shape, F32) for p in parts], axis=axis, num=len(parts))
    for out, part in zip(outs, parts):
        np.testing.assert_array_equal(out, part)


@pytest.mark.parametrize("axis,num", [(0, 2), (1, 3), (-1, 4), (2, 1)])
@pytest.mark.parametrize("dtype", [F32, I32])
def test_split(rng, axis, num, dtype):
    x = rand(rng, (4, 6, 8), low=-9, high=9).astype(dtype)
    parts = np.split(x, num, axis=axis)
    outs = check_op("SPLIT", [const(axis, I32), x], [(p.shape, dtype) for p in parts],
                    num_splits=num)
    for out, part in zip(outs, parts):
        np.testing.assert_array_equal(out, part)


@pytest.mark.parametrize("sizes,axis", [([1, 2, 3], 1), ([2, -1], 0), ([5, 0, 3], -1),
                                        ([-1], 2)])
@pytest.mark.parametrize("size_dtype", [I32, I64])
def test_split_v(rng, sizes, axis, size_dtype):
    x = rand(rng, (4, 6, 8))
    dim = x.shape[axis]
    full = [dim - (sum(sizes) + 1) if s == -1 else s for s in sizes]
    parts = np.split(x, np.cumsum(full)[:-1], axis=axis)
    # (A zero-size part is declared as 1 there: edgelite reads declared empties as constants.)
    declared = [tuple(max(d, 1) for d in p.shape) for p in parts]
    run = run_op if 0 in full else check_op  # LiteRT's Python API cannot read empty outputs
    outs = run("SPLIT_V", [x, const(sizes, size_dtype), const(axis, I32)],
               [(d, F32) for d in declared], num_splits=len(sizes))
    for out, part in zip(outs, parts):
        np.testing.assert_array_equal(out, part)


def test_split_uneven(rng):
    with pytest.raises(ShapeError, match="into 4 equal parts"):
        run_op("SPLIT", [const(1, I32), rand(rng, (2, 6))], [((2, 1), F32)] * 4, num_splits=4)


@pytest.mark.parametrize("multiples", [[1, 1], [2, 3], [1, 4], [3, 1]])
@pytest.mark.parametrize("dtype", [F32, I32, I64, np.bool_])
def test_tile(rng, multiples, dtype):
    x = (rand(rng, (2, 3)) > 0).astype(dtype) * 3 if dtype != np.bool_ else rand(rng, (2, 3)) > 0
    expected = np.tile(x, multiples)
    (out,) = check_op("TILE", [x, const(multiples, I32)], [(expected.shape, x.dtype)])
    np.testing.assert_array_equal(out, expected)


def test_tile_rank4_int64_multiples(rng):
    x = rand(rng, (1, 2, 1, 3))
    check_op("TILE", [x, const([2, 1, 3, 2], I64)], [((2, 2, 3, 6), F32)])


@pytest.mark.parametrize("x_shape,shape", [((3,), (2, 3)), ((1, 3), (4, 3)), ((2, 1, 1), (2, 3, 4)),
                                           ((), (2, 2)), ((1,), (1, 1, 5))])
def test_broadcast_to(rng, x_shape, shape):
    x = rand(rng, x_shape)
    # LiteRT registers BROADCAST_TO from version 2 (version 1 was a placeholder).
    (out,) = check_op("BROADCAST_TO", [x, const(shape, I32)], [(shape, F32)], version=2)
    np.testing.assert_array_equal(out, np.broadcast_to(x, shape))


def test_broadcast_to_incompatible(rng):
    with pytest.raises(ShapeError, match="cannot broadcast"):
        run_op("BROADCAST_TO", [rand(rng, (2, 3)), const([2, 4], I32)], [((2, 4), F32)])


@pytest.mark.parametrize("axis,idx_shape", [(0, (5,)), (1, (2, 3)), (2, ()), (-1, (4,)),
                                            (0, (2, 2, 2))])
@pytest.mark.parametrize("idx_dtype", [I32, I64])
@pytest.mark.parametrize("constant", [False, True])
def test_gather(rng, axis, idx_shape, idx_dtype, constant):
    x = rand(rng, (4, 5, 6))
    idx = rng.integers(0, x.shape[axis], size=idx_shape).astype(idx_dtype)
    expected = np.take(x, idx, axis=axis)
    (out,) = check_op("GATHER", [x, const(idx) if constant else idx],
                      [(expected.shape, F32)], axis=axis)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("axis,batch_dims,negative", [(1, 1, False), (2, 1, False),
                                                      (2, 2, False), (2, 1, True),
                                                      (3, 2, False), (3, 2, True)])
def test_gather_batch_dims(rng, axis, batch_dims, negative):
    x = rand(rng, (2, 3, 4, 5))
    idx = rng.integers(0, x.shape[axis], size=x.shape[:batch_dims] + (2, 3)).astype(I32)
    expected = np.empty(x.shape[:axis] + idx.shape[batch_dims:] + x.shape[axis + 1:], F32)
    for b in np.ndindex(*x.shape[:batch_dims]):
        expected[b] = np.take(x[b], idx[b], axis=axis - batch_dims)
    option = batch_dims - idx.ndim if negative else batch_dims
    (out,) = check_op("GATHER", [x, idx], [(expected.shape, F32)], axis=axis,
                      batch_dims=option)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype", [I32, I64, np.bool_])
def test_gather_integer_params(rng, dtype):
    x = np.array([5, 6, 7, 8], dtype) if dtype != np.bool_ else np.array([1, 0, 1, 1], bool)
    idx = np.array([3, 0, 0], I32)
    (out,) = check_op("GATHER", [x, idx], [((3,), x.dtype)])
    np.testing.assert_array_equal(out, x[idx])


def test_gather_out_of_range(rng):
    x = rand(rng, (4, 3))
    with pytest.raises(ShapeError, match=r"GATHER.*\[0, 4\); got values from 0 to 4"):
        run_op("GATHER", [x, np.array([0, 4], I32)], [((2, 3), F32)])
    with pytest.raises(ShapeError, match=r"\[0, 4\); got values from -1"):
        run_op("GATHER", [x, const([-1, 2], I32)], [((2, 3), F32)])
