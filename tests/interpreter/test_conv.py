"""CONV_2D and DEPTHWISE_CONV_2D against LiteRT's reference kernels."""

import numpy as np
import pytest

from .oracle import assert_close, assert_matches_litert, rand, run_edgelite
from .tflite_builder import ModelBuilder

ACTIVATIONS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]


def out_size(size, k, stride, dilation, padding):
    eff = (k - 1) * dilation + 1
    return -(-size // stride) if padding == "SAME" else (size - eff + stride) // stride


def conv_model(x_shape, w, bias, *, op="CONV_2D", padding="SAME", stride=(1, 1),
               dilation=(1, 1), act="NONE", **extra):
    n, h, wd, _ = x_shape
    kh, kw = w.shape[1:3]
    out_c = w.shape[0] if op == "CONV_2D" else w.shape[3]
    oh = out_size(h, kh, stride[0], dilation[0], padding)
    ow = out_size(wd, kw, stride[1], dilation[1], padding)
    b = ModelBuilder()
    x = b.tensor("x", x_shape)
    wt = b.tensor("w", w.shape, data=w)
    inputs = [x, wt]
    if bias is not None:
        inputs.append(b.tensor("b", bias.shape, data=bias))
    y = b.tensor("y", [n, oh, ow, out_c])
    b.op(op, inputs, [y], padding=padding, stride_h=stride[0], stride_w=stride[1],
         dilation_h_factor=dilation[0], dilation_w_factor=dilation[1],
         fused_activation_function=act, **extra)
    return b.build([x], [y])


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("stride", [(1, 1), (2, 2), (2, 1), (3, 2)])
@pytest.mark.parametrize("kernel", [(3, 3), (1, 1), (2, 3), (5, 4)])
def test_conv_padding_stride_kernel(rng, padding, stride, kernel):
    x = rand(rng, (2, 9, 8, 3))
    w = rand(rng, (5,) + kernel + (3,))
    bias = rand(rng, (5,))
    assert_matches_litert(conv_model(x.shape, w, bias, padding=padding, stride=stride), [x])


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("dilation", [(2, 2), (1, 3), (2, 1)])
@pytest.mark.parametrize("stride", [(1, 1), (2, 2)])
def test_conv_dilation(rng, padding, dilation, stride):
    x = rand(rng, (1, 11, 10, 4))
    w = rand(rng, (6, 3, 3, 4))
    bias = rand(rng, (6,))
    model = conv_model(x.shape, w, bias, padding=padding, dilation=dilation, stride=stride)
    assert_matches_litert(model, [x])


@pytest.mark.parametrize("act", ACTIVATIONS)
def test_conv_fused_activation(rng, act):
    x = rand(rng, (1, 6, 6, 2), low=-3, high=3)
    w = rand(rng, (4, 3, 3, 2))
    bias = rand(rng, (4,))
    assert_matches_litert(conv_model(x.shape, w, bias, act=act), [x])


def test_conv_pointwise_fast_path(rng):
    x = rand(rng, (2, 5, 7, 16))
    w = rand(rng, (8, 1, 1, 16))
    bias = rand(rng, (8,))
    assert_matches_litert(conv_model(x.shape, w, bias), [x])
    assert_matches_litert(conv_model(x.shape, w, bias, stride=(2, 2)), [x])


def test_conv_grouped(rng):
    x = rand(rng, (1, 6, 6, 6))
    w = rand(rng, (4, 3, 3, 3))  # 2 groups of 3 input channels
    bias = rand(rng, (4,))
    assert_matches_litert(conv_model(x.shape, w, bias), [x])


def test_conv_without_bias_equals_zero_bias(rng):
    # LiteRT's float CONV_2D insists on a bias input; edgelite also accepts two inputs.
    x = rand(rng, (1, 7, 7, 3))
    w = rand(rng, (4, 3, 3, 3))
    (with_zero_bias,) = run_edgelite(conv_model(x.shape, w, np.zeros(4, np.float32)), [x])
    (without,) = run_edgelite(conv_model(x.shape, w, None), [x])
    assert_close(without, with_zero_bias)


def test_conv_matches_direct_sum(rng):
    # An independent check of the padding rule: direct loops in numpy.
    x = rand(rng, (1, 6, 5, 2))
    w = rand(rng, (3, 3, 2, 2))
    bias = rand(rng, (3,))
    (ours,) = run_edgelite(conv_model(x.shape, w, bias, stride=(2, 2)), [x])
    oh, ow = 3, 3
    pad_t = ((oh - 1) * 2 + 3 - 6) // 2  # total 1 -> 0 before, 1 after
    pad_l = ((ow - 1) * 2 + 2 - 5) // 2  # total 1 -> 0 before, 1 after
    expected = np.zeros((1, oh, ow, 3), np.float64)
    for y in range(oh):
        for xx in range(ow):
            for ky in range(3):
                for kx in range(2):
                    iy, ix = y * 2 + ky - pad_t, xx * 2 + kx - pad_l
                    if 0 <= iy < 6 and 0 <= ix < 5:
                        expected[0, y, xx] += w[:, ky, kx, :] @ x[0, iy, ix]
    expected += bias
    assert_close(ours, expected.astype(np.float32))


# --------------------------------------------------------------------------- depthwise


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("stride", [(1, 1), (2, 2), (1, 2)])
@pytest.mark.parametrize("multiplier", [1, 2, 3])
def test_depthwise(rng, padding, stride, multiplier):
    c = 4
    x = rand(rng, (2, 8, 9, c))
    w = rand(rng, (1, 3, 3, c * multiplier))
    bias = rand(rng, (c * multiplier,))
    model = conv_model(x.shape, w, bias, op="DEPTHWISE_CONV_2D", padding=padding,
                       stride=stride, depth_multiplier=multiplier)
    assert_matches_litert(model, [x])


@pytest.mark.parametrize("dilation", [(2, 2), (3, 1)])
@pytest.mark.parametrize("act", ACTIVATIONS)
def test_depthwise_dilation_and_activation(rng, dilation, act):
    x = rand(rng, (1, 10, 10, 3), low=-2, high=2)
    w = rand(rng, (1, 3, 2, 6))
    bias = rand(rng, (6,))
    model = conv_model(x.shape, w, bias, op="DEPTHWISE_CONV_2D", dilation=dilation,
                       act=act, depth_multiplier=2)
    assert_matches_litert(model, [x])


def test_depthwise_kernel_larger_than_stride(rng):
    x = rand(rng, (1, 7, 7, 2))
    w = rand(rng, (1, 5, 5, 2))
    bias = rand(rng, (2,))
    model = conv_model(x.shape, w, bias, op="DEPTHWISE_CONV_2D", stride=(3, 3),
                       depth_multiplier=1)
    assert_matches_litert(model, [x])


@pytest.mark.parametrize("declared", [0, 1, 5])
def test_depthwise_multiplier_option_is_ignored_like_litert(rng, declared):
    x = rand(rng, (1, 5, 5, 2))
    w = rand(rng, (1, 3, 3, 4))  # multiplier 2 from the shapes
    bias = rand(rng, (4,))
    model = conv_model(x.shape, w, bias, op="DEPTHWISE_CONV_2D", depth_multiplier=declared)
    assert_matches_litert(model, [x])


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_conv_tap_strategy_matches_litert(rng, monkeypatch, padding):
    # Force the low-memory per-tap path that large convolutions use.
    from edgelite.interpreter.kernels import conv

    monkeypatch.setattr(conv, "IM2COL_MAX_BYTES", 0)
    x = rand(rng, (2, 9, 8, 3))
    w = rand(rng, (5, 3, 2, 3))
    bias = rand(rng, (5,))
    model = conv_model(x.shape, w, bias, padding=padding, stride=(2, 1), dilation=(1, 2),
                       act="RELU")
    assert_matches_litert(model, [x])
