"""MIRROR_PAD, RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR, DEPTH_TO_SPACE, SPACE_TO_DEPTH
against LiteRT's reference kernels (and its default kernels where they compute
differently)."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError, UnsupportedOpError

from .oracle import rand
from .op_models import check_op, check_op_default, const, run_op

I32, F32 = np.int32, np.float32


@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC"])
@pytest.mark.parametrize("paddings", [[[0, 0], [1, 2], [2, 1], [0, 0]],
                                      [[1, 0], [2, 2], [0, 3], [1, 1]],
                                      [[0, 0], [0, 0], [0, 0], [0, 0]]])
@pytest.mark.parametrize("dtype", [F32, I32])
def test_mirror_pad(rng, mode, paddings, dtype):
    x = rand(rng, (2, 4, 5, 3), low=-50, high=50).astype(dtype)
    expected = np.pad(x, paddings, mode=mode.lower())
    (out,) = check_op("MIRROR_PAD", [x, const(paddings, I32)], [(expected.shape, dtype)],
                      mode=mode)
    np.testing.assert_array_equal(out, expected)


def test_mirror_pad_limits(rng):
    x = rand(rng, (3, 4))
    check_op("MIRROR_PAD", [x, const([[3, 3], [4, 4]], np.int64)], [((9, 12), F32)],
             mode="SYMMETRIC")
    with pytest.raises(ShapeError, match="exceeds 2, the most REFLECT"):
        run_op("MIRROR_PAD", [x, const([[3, 0], [0, 0]], I32)], [((6, 4), F32)],
               mode="REFLECT")


RESIZES = [((4, 4), (8, 8)), ((5, 7), (3, 4)), ((3, 3), (7, 5)), ((6, 4), (6, 4)),
           ((1, 5), (4, 1)), ((4, 6), (9, 13))]
MODES = [dict(), dict(align_corners=True), dict(half_pixel_centers=True)]


@pytest.mark.parametrize("in_hw,out_hw", RESIZES)
@pytest.mark.parametrize("mode", MODES, ids=["plain", "align", "half"])
def test_resize_bilinear(rng, in_hw, out_hw, mode):
    x = rand(rng, (2,) + in_hw + (3,), low=-10, high=10)
    operands = [x, const(out_hw, I32)]
    outputs = [((2,) + out_hw + (3,), F32)]
    # Same float32 operations in the same order: bit for bit.
    check_op("RESIZE_BILINEAR", operands, outputs, rtol=0, atol_factor=0, **mode)
    check_op_default("RESIZE_BILINEAR", operands, outputs, **mode)


@pytest.mark.parametrize("in_hw,out_hw", RESIZES)
@pytest.mark.parametrize("mode", MODES, ids=["plain", "align", "half"])
@pytest.mark.parametrize("dtype", [F32, I32])
def test_resize_nearest(rng, in_hw, out_hw, mode, dtype):
    x = rand(rng, (2,) + in_hw + (3,), low=-100, high=100).astype(dtype)
    operands = [x, const(out_hw, I32)]
    outputs = [((2,) + out_hw + (3,), dtype)]
    check_op("RESIZE_NEAREST_NEIGHBOR", operands, outputs, **mode)
    if dtype == F32:
        check_op_default("RESIZE_NEAREST_NEIGHBOR", operands, outputs, **mode)


def test_resize_errors(rng):
    x = rand(rng, (1, 4, 4, 1))
    with pytest.raises(UnsupportedOpError, match="cannot both be set"):
        run_op("RESIZE_BILINEAR", [x, const([8, 8], I32)], [((1, 8, 8, 1), F32)],
               align_corners=True, half_pixel_centers=True)
    with pytest.raises(UnsupportedOpError, match="size .*must be a constant"):
        run_op("RESIZE_NEAREST_NEIGHBOR", [x, np.array([8, 8], I32)], [((1, 8, 8, 1), F32)])


@pytest.mark.parametrize("block,shape", [(2, (1, 3, 4, 8)), (3, (2, 2, 2, 18)),
                                         (1, (1, 2, 3, 4)), (2, (2, 1, 1, 4))])
@pytest.mark.parametrize("dtype", [F32, I32])
def test_depth_to_space(rng, block, shape, dtype):
    x = rand(rng, shape, low=-50, high=50).astype(dtype)
    n, h, w, c = shape
    out_shape = (n, h * block, w * block, c // block // block)
    (out,) = check_op("DEPTH_TO_SPACE", [x], [(out_shape, dtype)], block_size=block)
    # Round trip through SPACE_TO_DEPTH restores the input.
    (back,) = check_op("SPACE_TO_DEPTH", [out], [(shape, dtype)], block_size=block)
    np.testing.assert_array_equal(back, x)


@pytest.mark.parametrize("block,shape", [(2, (1, 4, 6, 3)), (3, (2, 6, 3, 2))])
def test_space_to_depth(rng, block, shape):
    x = rand(rng, shape)
    n, h, w, c = shape
    check_op("SPACE_TO_DEPTH", [x], [((n, h // block, w // block, c * block * block), F32)],
             block_size=block)
    with pytest.raises(ShapeError, match="multiples of block_size"):
        run_op("SPACE_TO_DEPTH", [x], [((1, 1, 1, 1), F32)], block_size=5)
