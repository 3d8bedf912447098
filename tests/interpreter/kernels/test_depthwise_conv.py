"""DEPTHWISE_CONV_2D: float against LiteRT's reference kernels, int8 / uint8 bit-exact with
both LiteRT kernel sets."""

import numpy as np
import pytest

from tests.support import assert_bit_exact, assert_matches_litert, rand

from .test_conv import ACTIVATIONS, conv_model, quant_conv_model


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


# --------------------------------------------------------------------------- int8 / uint8


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("multiplier", [1, 2])
@pytest.mark.parametrize("padding,stride", [("SAME", (1, 1)), ("VALID", (2, 2)),
                                            ("SAME", (2, 1))])
def test_quantized_depthwise(rng, dtype, multiplier, padding, stride):
    model, feeds = quant_conv_model(rng, dtype, (2, 9, 8, 6), (1, 3, 3, 6 * multiplier),
                              op="DEPTHWISE_CONV_2D", padding=padding, stride=stride)
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("act", ACTIVATIONS)
def test_depthwise_activation_dilation(rng, dtype, act):
    model, feeds = quant_conv_model(rng, dtype, (1, 9, 9, 8), (1, 3, 3, 8), op="DEPTHWISE_CONV_2D",
                              act=act, dilation=(2, 2),
                              out_scale=(0.02, 0 if dtype == np.int8 else 128))
    assert_bit_exact(model, feeds)


def test_depthwise_int8_per_tensor(rng):
    model, feeds = quant_conv_model(rng, np.int8, (1, 8, 8, 16), (1, 5, 5, 16),
                              op="DEPTHWISE_CONV_2D", per_channel=False)
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("axis", [0, 3])
def test_depthwise_uint8_filter_axis_decides_delegation(rng, axis):
    # LiteRT's XNNPACK delegate takes a uint8 depthwise conv only when its per-tensor
    # filter quantization names dimension 0; otherwise TFLite's kernel runs it.
    from tests.support import litert_delegates
    model, feeds = quant_conv_model(rng, np.uint8, (1, 8, 8, 16), (1, 3, 3, 16),
                              op="DEPTHWISE_CONV_2D", axis=axis)
    assert litert_delegates(model) == (axis == 0)
    assert_bit_exact(model, feeds)
