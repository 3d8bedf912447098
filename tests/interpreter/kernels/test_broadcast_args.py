"""BROADCAST_ARGS (interpreter/kernels/broadcast_args.py) equal to both LiteRT kernel sets:
int32 and int64 shapes of different lengths, 1s on either side, constant and computed."""

import numpy as np
import pytest

from edgelite.interpreter import DTypeError, ShapeError
from tests.support import KERNEL_SETS, run_edgelite, run_litert

from ..op_models import const, op_model, run_op


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("a, b, want", [
    ([2, 1, 3], [4, 1], [2, 4, 3]),
    ([5], [3, 1, 5], [3, 1, 5]),
    ([1, 7], [6, 1], [6, 7]),
    ([], [2, 3], [2, 3]),
    ([0, 1], [1, 4], [0, 4]),
])
@pytest.mark.parametrize("constant", [False, True])
def test_matches_litert(dtype, a, b, want, constant):
    a, b = np.array(a, dtype), np.array(b, dtype)
    operands = [const(a), const(b)] if constant else [a, b]
    model, feeds = op_model("BROADCAST_ARGS", operands, [((len(want),), dtype)])
    for kernels in KERNEL_SETS:
        (ours,), (ref,) = run_edgelite(model, feeds, kernels), run_litert(model, feeds, kernels)
        assert ours.dtype == ref.dtype == dtype
        np.testing.assert_array_equal(ours, ref)
    np.testing.assert_array_equal(ours, want)


def test_refusals():
    a = np.array([2, 3], np.int32)
    with pytest.raises(ShapeError, match=r"BROADCAST_ARGS.*shapes \[2, 3\] and \[1, 4\] do not "
                       r"broadcast \(dimension 1: 3 vs 4\)"):
        run_op("BROADCAST_ARGS", [a, np.array([4], np.int32)], [((2,), np.int32)])
    with pytest.raises(DTypeError, match=r"shapes 'input0' \(int32\) and 'input1' \(int64\) "
                       "must have the same type"):
        run_op("BROADCAST_ARGS", [a, a.astype(np.int64)], [((2,), np.int32)])
    with pytest.raises(ShapeError, match=r"shape 'input1' has shape \[1, 2\]; it must be 1-D"):
        run_op("BROADCAST_ARGS", [a, a.reshape(1, 2)], [((2,), np.int32)])
