"""ARG_MAX / ARG_MIN against LiteRT's reference kernels."""

import numpy as np
import pytest

from tests.support import rand

from ..op_models import check_op, const

I32, I64 = np.int32, np.int64


@pytest.mark.parametrize("op", ["ARG_MAX", "ARG_MIN"])
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("out_type", [I32, I64])
def test_arg_minmax(rng, op, axis, out_type):
    x = rand(rng, (3, 4, 5))
    x[1, 2, :] = 0.5  # ties: the first index wins
    x[:, 1, 2] = -0.5
    find = np.argmax if op == "ARG_MAX" else np.argmin
    expected = find(x, axis=axis).astype(out_type)
    (out,) = check_op(op, [x, const([axis], I32)], [(expected.shape, out_type)],
                      output_type=np.dtype(out_type).name.upper())
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype", [I32, np.uint8, np.int8])
def test_arg_max_integer(rng, dtype):
    x = rand(rng, (4, 6), dtype, low=0, high=9)
    check_op("ARG_MAX", [x, const(1, I64)], [((4,), I64)], output_type="INT64")


def test_arg_max_runtime_axis_runs_at_invoke(rng):
    # a computed axis: the output is dynamic, prepared at invoke (interpreter/dynamic.py)
    x = rand(rng, (2, 3))
    (out,) = check_op("ARG_MAX", [x, np.array([1], I32)], [((2,), I64)], output_type="INT64")
    np.testing.assert_array_equal(out, np.argmax(x, 1))
