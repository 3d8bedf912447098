"""common/fc_geometry.py: FULLY_CONNECTED's rows, depth, units and output shape, as
fully_connected.cc's Prepare gives them, and one clear line for shapes it refuses."""

import numpy as np
import pytest

from edgelite.errors import ShapeError, UnsupportedOpError
from edgelite.interpreter.kernels.base import OpContext, TensorInfo
from edgelite.interpreter.kernels.common.fc_geometry import fc_geometry


def _ctx(x_shape, w_shape, **options):
    x = TensorInfo(0, "x", tuple(x_shape), np.dtype(np.float32), None)
    w = TensorInfo(1, "w", tuple(w_shape), np.dtype(np.float32), np.zeros(w_shape, np.float32))
    out = TensorInfo(2, "y", (), np.dtype(np.float32), None)
    return OpContext(0, "FULLY_CONNECTED", options, (x, w), (out,)), x, w


@pytest.mark.parametrize("x_shape, w_shape, options, expected", [
    ((1, 8), (3, 8), {}, (1, 8, 3, (1, 3))),
    ((2, 5, 8), (4, 8), {}, (10, 8, 4, (10, 4))),                 # flattened into rows
    ((2, 5, 8), (4, 8), {"keep_num_dims": True}, (10, 8, 4, (2, 5, 4))),
    ((6, 4), (2, 8), {}, (3, 8, 2, (3, 2))),                      # rows of the weights' depth
])
def test_shapes(x_shape, w_shape, options, expected):
    ctx, x, w = _ctx(x_shape, w_shape, **options)
    assert fc_geometry(ctx, x, w) == expected


@pytest.mark.parametrize("x_shape, w_shape, options, error, message", [
    ((1, 7), (3, 8), {}, ShapeError, "cannot be flattened into rows"),
    ((1, 8), (3, 8, 1), {}, ShapeError, "must be 2-D"),
    ((4, 2), (3, 8), {"keep_num_dims": True}, ShapeError, "keep_num_dims needs"),
    ((1, 8), (3, 8), {"weights_format": 1}, UnsupportedOpError, "weights_format"),
])
def test_refusals(x_shape, w_shape, options, error, message):
    ctx, x, w = _ctx(x_shape, w_shape, **options)
    with pytest.raises(error, match=message):
        fc_geometry(ctx, x, w)
