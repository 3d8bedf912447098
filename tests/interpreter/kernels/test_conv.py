"""CONV_2D: float against LiteRT's reference kernels, int8 / uint8 bit-exact with both
LiteRT kernel sets. The model builders serve DEPTHWISE_CONV_2D too (test_depthwise_conv.py,
test_accumulator.py)."""

import numpy as np
import pytest

from tests.interpreter.tflite_builder import QuantModel
from tests.support import (assert_bit_exact, assert_close, assert_matches_litert, full_range, rand,
                          random_qparams, run_edgelite)
from ..tflite_builder import ModelBuilder

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


# --------------------------------------------------------------------------- int8 / uint8


def quant_conv_model(rng, dtype, x_shape, w_shape, *, op="CONV_2D", per_channel=True,
               padding="SAME", stride=(1, 1), dilation=(1, 1), act="NONE", bias=True,
               w_scale=(0.002, 0.02), out_scale=None, axis=None, bias_range=(-5000, 5000)):
    n, h, w, c = x_shape
    kh, kw = w_shape[1:3]
    o = w_shape[0] if op == "CONV_2D" else w_shape[3]
    if axis is None:
        axis = 0 if op == "CONV_2D" else 3
    s_x, z_x = random_qparams(rng, dtype, 0.01, 0.05)
    if out_scale is None:
        s_out, z_out = random_qparams(rng, dtype, 0.05, 0.3)
    else:
        s_out, z_out = out_scale
    if dtype == np.int8:
        weights = rng.integers(-127, 128, size=w_shape).astype(np.int8)
        n_scales = o if per_channel else 1
        w_scales = rng.uniform(*w_scale, size=n_scales).astype(np.float32)
        w_zp = np.zeros(n_scales, np.int64)
    else:
        weights = full_range(rng, w_shape, np.uint8)
        w_scales = np.float32([rng.uniform(*w_scale)])
        w_zp = np.array([int(rng.integers(100, 156))])
    m = QuantModel()
    x = m.input("x", x_shape, dtype, s_x, z_x)
    wt = m.const("w", weights, dtype, w_scales, w_zp, axis=axis)
    inputs = [x, wt]
    if bias:
        b_scales = np.float32(s_x) * w_scales
        b = rng.integers(*bias_range, size=o) * rng.choice([-1, 1], size=o)
        inputs.append(m.const("b", b, np.int32, b_scales,
                              np.zeros(len(b_scales), np.int64)))
    oh = out_size(h, kh, stride[0], dilation[0], padding)
    ow = out_size(w, kw, stride[1], dilation[1], padding)
    y = m.output("y", (n, oh, ow, o), dtype, s_out, z_out)
    options = dict(padding=padding, stride_h=stride[0], stride_w=stride[1],
                   dilation_h_factor=dilation[0], dilation_w_factor=dilation[1],
                   fused_activation_function=act)
    if op == "DEPTHWISE_CONV_2D":
        options["depth_multiplier"] = o // c
    m.op(op, inputs, [y], version=3 if dtype == np.int8 else 1, **options)
    return m.build(), [full_range(rng, x_shape, dtype)]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("stride", [(1, 1), (2, 2), (2, 1)])
def test_conv_geometry(rng, dtype, padding, stride):
    model, feeds = quant_conv_model(rng, dtype, (2, 9, 8, 5), (6, 3, 3, 5), padding=padding,
                              stride=stride)
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("act", ACTIVATIONS)
def test_conv_activation(rng, dtype, act):
    model, feeds = quant_conv_model(rng, dtype, (1, 7, 7, 4), (8, 3, 3, 4), act=act,
                              out_scale=(0.02, 0 if dtype == np.int8 else 128))
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("per_channel", [True, False])
def test_conv_int8_weight_granularity(rng, per_channel):
    model, feeds = quant_conv_model(rng, np.int8, (2, 6, 6, 8), (16, 3, 3, 8),
                              per_channel=per_channel)
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_conv_pointwise_dilated_rectangular(rng, dtype):
    for kwargs in (dict(w_shape=(12, 1, 1, 16)), dict(w_shape=(4, 3, 3, 16), dilation=(2, 2)),
                   dict(w_shape=(4, 2, 3, 16), stride=(1, 2))):
        w_shape = kwargs.pop("w_shape")
        model, feeds = quant_conv_model(rng, dtype, (1, 8, 9, 16), w_shape, **kwargs)
        assert_bit_exact(model, feeds)


def test_conv_large_k(rng):
    # K = 3*3*64 = 576: a longer reduction, still one float32 product (partial sums
    # within 576 * 127 * 192 < 2^24; longer ones: test_accumulator.py).
    model, feeds = quant_conv_model(rng, np.int8, (1, 6, 6, 64), (8, 3, 3, 64),
                              w_scale=(0.0005, 0.002))
    assert_bit_exact(model, feeds)


def test_quantized_conv_grouped(rng):
    # 8 input channels, filter depth 4: two groups of 3 output channels.
    model, feeds = quant_conv_model(rng, np.int8, (1, 6, 6, 8), (6, 3, 3, 4))
    assert_bit_exact(model, feeds)
