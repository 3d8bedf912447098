"""SPLIT, SPLIT_V and UNPACK against LiteRT's reference kernels."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError
from tests.support import rand

from ..op_models import check_op, const, run_op

I32, I64, F32 = np.int32, np.int64, np.float32


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
