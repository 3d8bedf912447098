"""int8 / uint8 CONV_2D and DEPTHWISE_CONV_2D, bit-exact with both LiteRT kernel sets."""

import numpy as np
import pytest

from .quant_oracle import QuantModel, assert_bit_exact, full_range, random_qparams

ACTS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]


def out_size(size, k, stride, dilation, padding):
    eff = (k - 1) * dilation + 1
    return -(-size // stride) if padding == "SAME" else (size - eff + stride) // stride


def conv_model(rng, dtype, x_shape, w_shape, *, op="CONV_2D", per_channel=True,
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
    model, feeds = conv_model(rng, dtype, (2, 9, 8, 5), (6, 3, 3, 5), padding=padding,
                              stride=stride)
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("act", ACTS)
def test_conv_activation(rng, dtype, act):
    model, feeds = conv_model(rng, dtype, (1, 7, 7, 4), (8, 3, 3, 4), act=act,
                              out_scale=(0.02, 0 if dtype == np.int8 else 128))
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("per_channel", [True, False])
def test_conv_int8_weight_granularity(rng, per_channel):
    model, feeds = conv_model(rng, np.int8, (2, 6, 6, 8), (16, 3, 3, 8),
                              per_channel=per_channel)
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_conv_pointwise_dilated_rectangular(rng, dtype):
    for kwargs in (dict(w_shape=(12, 1, 1, 16)), dict(w_shape=(4, 3, 3, 16), dilation=(2, 2)),
                   dict(w_shape=(4, 2, 3, 16), stride=(1, 2))):
        w_shape = kwargs.pop("w_shape")
        model, feeds = conv_model(rng, dtype, (1, 8, 9, 16), w_shape, **kwargs)
        assert_bit_exact(model, feeds)


def test_conv_large_k(rng):
    # K = 3*3*64 = 576: a longer reduction, still one float32 product (partial sums
    # within 576 * 127 * 192 < 2^24; longer ones: test_quantized_accumulate.py).
    model, feeds = conv_model(rng, np.int8, (1, 6, 6, 64), (8, 3, 3, 64),
                              w_scale=(0.0005, 0.002))
    assert_bit_exact(model, feeds)


def test_conv_grouped(rng):
    # 8 input channels, filter depth 4: two groups of 3 output channels.
    model, feeds = conv_model(rng, np.int8, (1, 6, 6, 8), (6, 3, 3, 4))
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("multiplier", [1, 2])
@pytest.mark.parametrize("padding,stride", [("SAME", (1, 1)), ("VALID", (2, 2)),
                                            ("SAME", (2, 1))])
def test_depthwise(rng, dtype, multiplier, padding, stride):
    model, feeds = conv_model(rng, dtype, (2, 9, 8, 6), (1, 3, 3, 6 * multiplier),
                              op="DEPTHWISE_CONV_2D", padding=padding, stride=stride)
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("act", ACTS)
def test_depthwise_activation_dilation(rng, dtype, act):
    model, feeds = conv_model(rng, dtype, (1, 9, 9, 8), (1, 3, 3, 8), op="DEPTHWISE_CONV_2D",
                              act=act, dilation=(2, 2),
                              out_scale=(0.02, 0 if dtype == np.int8 else 128))
    assert_bit_exact(model, feeds)


def test_depthwise_int8_per_tensor(rng):
    model, feeds = conv_model(rng, np.int8, (1, 8, 8, 16), (1, 5, 5, 16),
                              op="DEPTHWISE_CONV_2D", per_channel=False)
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("axis", [0, 3])
def test_depthwise_uint8_filter_axis_decides_delegation(rng, axis):
    # LiteRT's XNNPACK delegate takes a uint8 depthwise conv only when its per-tensor
    # filter quantization names dimension 0; otherwise TFLite's kernel runs it.
    from .quant_oracle import litert_delegates
    model, feeds = conv_model(rng, np.uint8, (1, 8, 8, 16), (1, 3, 3, 16),
                              op="DEPTHWISE_CONV_2D", axis=axis)
    assert litert_delegates(model) == (axis == 0)
    assert_bit_exact(model, feeds)


def _accumulator_dtype(model: bytes) -> np.dtype:
    from edgelite.interpreter import Interpreter
    interp = Interpreter(model_content=model)
    interp.allocate_tensors()
    (_, record, _, _), = interp._steps
    return record.acc.dtype


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D"])
def test_accumulator_is_float32_when_exact(rng, op):
    # 3x3x16 int8 taps: 144 * 127 * 255 < 2^24, so float32 BLAS sums are exact.
    w_shape = (8, 3, 3, 16) if op == "CONV_2D" else (1, 3, 3, 16)
    model, feeds = conv_model(rng, np.int8, (1, 7, 7, 16), w_shape, op=op)
    assert _accumulator_dtype(model) == np.float32
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D"])
def test_bias_beyond_float32_accumulates_in_float64(rng, op):
    # Biases of about +-2^24 are not all exact in float32, so the accumulator the output
    # stage reads is float64 (CONV_2D's GEMM itself stays float32).
    w_shape = (8, 3, 3, 4) if op == "CONV_2D" else (1, 3, 3, 4)
    model, feeds = conv_model(rng, np.int8, (1, 6, 6, 4), w_shape, op=op,
                              w_scale=(0.01, 0.01), out_scale=(60.0, 0),
                              bias_range=(2**24, 2**24 + 2**22))
    assert _accumulator_dtype(model) == np.float64
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D"])
def test_acc_plus_bias_is_rounded_to_float32_once(op):
    # acc = 1, bias = 2^24 + 65537: XNNPACK converts the exact int32 sum 2^24 + 65538
    # (exact in float32) and scales it by M = 2^-5 * 2^-6 / 2^6 = 2^-17: 128.5 + 2^-16,
    # which rounds to 129. Adding a float32 bias (2^24 + 65536 after rounding) to the
    # float32 acc would round twice and land on the tie 128.5 -> 128.
    m = QuantModel()
    x = m.input("x", (1, 1, 1, 1), np.int8, 2.0**-5, 0)
    w = m.const("w", np.ones((1, 1, 1, 1)), np.int8, np.float32([2.0**-6]), np.zeros(1, np.int64),
                axis=0 if op == "CONV_2D" else 3)
    b = m.const("b", [2**24 + 65537], np.int32, np.float32([2.0**-11]), np.zeros(1, np.int64))
    y = m.output("y", (1, 1, 1, 1), np.int8, 64.0, -100)
    m.op(op, [x, w, b], [y], version=3, padding="VALID", stride_h=1, stride_w=1,
         dilation_h_factor=1, dilation_w_factor=1, fused_activation_function="NONE",
         **({"depth_multiplier": 1} if op == "DEPTHWISE_CONV_2D" else {}))
    model = m.build()
    results = assert_bit_exact(model, [np.ones((1, 1, 1, 1), np.int8)], kernels=["default"])
    assert results["default"][0].item() == 129 - 100
