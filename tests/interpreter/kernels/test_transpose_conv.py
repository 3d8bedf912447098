"""TRANSPOSE_CONV against LiteRT's reference kernels (and its default kernels)."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError

from ..op_models import check_op, check_op_default, const, run_op
from ..oracle import rand

I32, F32 = np.int32, np.float32


def tconv_reference(x, w, bias, out_shape, stride, pad):
    """Scatter form of reference_ops::TransposeConv, in float64."""
    n, h, wd, c = x.shape
    o, kh, kw, _ = w.shape
    out = np.zeros(out_shape)
    for y in range(h):
        for xx in range(wd):
            for ky in range(kh):
                for kx in range(kw):
                    oy, ox = y * stride[0] + ky - pad[0], xx * stride[1] + kx - pad[1]
                    if 0 <= oy < out_shape[1] and 0 <= ox < out_shape[2]:
                        out[:, oy, ox, :] += x[:, y, xx, :] @ w[:, ky, kx, :].T
    return out + (0 if bias is None else bias)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("stride", [(1, 1), (2, 2), (2, 1), (3, 2)])
@pytest.mark.parametrize("kernel", [(3, 3), (2, 2), (1, 1), (4, 3)])
@pytest.mark.parametrize("with_bias", [True, False])
def test_transpose_conv(rng, padding, stride, kernel, with_bias):
    x = rand(rng, (2, 4, 5, 3))
    w = rand(rng, (6,) + kernel + (3,))
    h, wd = x.shape[1:3]
    if padding == "SAME":
        oh, ow = h * stride[0], wd * stride[1]
    else:
        oh, ow = (h - 1) * stride[0] + kernel[0], (wd - 1) * stride[1] + kernel[1]
    out_shape = (2, oh, ow, 6)
    bias = const(rand(rng, (6,))) if with_bias else None
    operands = [const(out_shape, I32), const(w), x] + ([bias] if with_bias else [])
    (out,) = check_op("TRANSPOSE_CONV", operands, [(out_shape, F32)], padding=padding,
                      stride_h=stride[0], stride_w=stride[1])
    check_op_default("TRANSPOSE_CONV", operands, [(out_shape, F32)], padding=padding,
                     stride_h=stride[0], stride_w=stride[1])


@pytest.mark.parametrize("padding,out_hw", [("SAME", (7, 8)), ("SAME", (8, 7)),
                                            ("SAME", (7, 7)), ("VALID", (9, 10)),
                                            ("VALID", (10, 9))])
def test_transpose_conv_odd_output_shapes(rng, padding, out_hw):
    # Every output size that a stride-2 conv maps back to 4x4: the padding comes from
    # output_shape alone.
    x = rand(rng, (1, 4, 4, 2))
    w = rand(rng, (3, 3, 3, 2))
    bias = rand(rng, (3,))
    out_shape = (1,) + out_hw + (3,)
    (out,) = check_op("TRANSPOSE_CONV", [const(out_shape, I32), const(w), x, const(bias)],
                      [(out_shape, F32)], padding=padding, stride_h=2, stride_w=2)
    if padding == "SAME":
        pad = [max(0, (-(-d // 2) - 1) * 2 + 3 - d) // 2 for d in out_hw]
    else:
        pad = [0, 0]
    np.testing.assert_allclose(out, tconv_reference(x, w, bias, out_shape, (2, 2), pad),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("act", ["RELU", "RELU6", "RELU_N1_TO_1"])
def test_transpose_conv_activation(rng, act):
    x = rand(rng, (1, 3, 3, 4), low=-2, high=2)
    w = rand(rng, (5, 3, 3, 4))
    check_op("TRANSPOSE_CONV", [const((1, 6, 6, 5), I32), const(w), x, const(rand(rng, (5,)))],
             [((1, 6, 6, 5), F32)], padding="SAME", stride_h=2, stride_w=2,
             fused_activation_function=act, version=4)


def test_transpose_conv_errors(rng):
    x = rand(rng, (1, 3, 3, 4))
    w = rand(rng, (5, 3, 3, 4))
    # a computed output_shape: the output is dynamic, prepared at invoke (dynamic.py)
    (out,) = check_op("TRANSPOSE_CONV", [np.array([1, 6, 6, 5], I32), const(w), x],
                      [((1, 6, 6, 5), F32)], padding="SAME", stride_h=2, stride_w=2)
    assert out.shape == (1, 6, 6, 5)
    with pytest.raises(ShapeError, match="output height of 9 .* input height of 5, the "
                                         "input has 3"):
        run_op("TRANSPOSE_CONV", [const([1, 9, 6, 5], I32), const(w), x],
               [((1, 9, 6, 5), F32)], padding="SAME", stride_h=2, stride_w=2)
    with pytest.raises(ShapeError, match="disagree"):
        run_op("TRANSPOSE_CONV", [const([1, 6, 6, 4], I32), const(w), x],
               [((1, 6, 6, 4), F32)], padding="SAME", stride_h=2, stride_w=2)
