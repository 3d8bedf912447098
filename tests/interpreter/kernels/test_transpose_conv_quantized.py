"""int8 (per-channel) and 16x8 TRANSPOSE_CONV bit-exact with both LiteRT kernel sets
(XNNPACK takes int8 in the default set; 16x8 with an int64 bias is the reference kernel
in both)."""

import numpy as np
import pytest

from edgelite.interpreter import UnsupportedOpError

from ..quant_oracle import QuantModel, assert_bit_exact, full_range, litert_delegates, run_ours

SAME, VALID = 0, 1


def transpose_conv_q(rng, dtype, x_shape, o, k, stride, padding, per_channel=True,
                     bias_dtype=np.int32, activation=0, bias=True, **extra):
    n, h, w, c = x_shape
    kh, kw = k
    sh, sw = stride
    if padding == SAME:
        oh, ow = h * sh, w * sw
    else:
        oh, ow = (h - 1) * sh + kh, (w - 1) * sw + kw
    sixteen = dtype == np.int16
    s_in = float(np.float32(rng.uniform(0.0005, 0.002) if sixteen else rng.uniform(0.01, 0.1)))
    z_in = 0 if sixteen else int(rng.integers(-60, 60))
    s_out = float(np.float32(rng.uniform(0.002, 0.01) if sixteen else rng.uniform(0.05, 0.3)))
    z_out = 0 if sixteen else int(rng.integers(-60, 60))
    wscale = rng.uniform(0.002, 0.02, size=o if per_channel else 1).astype(np.float32)
    m = QuantModel()
    shape = m.const("output_shape", np.array([n, oh, ow, o]), np.int32)
    weights = m.const("w", rng.integers(-127, 128, size=(o, kh, kw, c)), np.int8,
                      scale=wscale.tolist(), zp=[0] * len(wscale), axis=0)
    x = m.input("x", x_shape, dtype, s_in, z_in)
    ins = [shape, weights, x]
    if bias:
        bscale = (np.float32(s_in) * wscale).astype(np.float32)  # one per weight scale
        span = 2**20 if bias_dtype == np.int32 else 2**30
        ins.append(m.const("b", rng.integers(-span, span, size=o), bias_dtype,
                           scale=bscale.tolist(), zp=[0] * len(bscale), axis=0))
    y = m.output("y", (n, oh, ow, o), dtype, s_out, z_out)
    version = 3 if bias else 2
    options = dict(padding=padding, stride_h=sh, stride_w=sw, **extra)
    if activation:
        options["fused_activation_function"] = activation
        version = 4
    m.op("TRANSPOSE_CONV", ins, [y], version=version, **options)
    return m.build(), full_range(rng, x_shape, dtype)


CASES = [  # x_shape, O, kernel, stride, padding
    ((1, 3, 3, 2), 3, (3, 3), (2, 2), SAME),
    ((2, 4, 3, 5), 9, (2, 3), (1, 2), VALID),
    ((1, 5, 5, 8), 16, (3, 3), (2, 2), SAME),
    ((1, 2, 4, 3), 4, (4, 4), (3, 1), VALID),
]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("per_channel", [True, False])
@pytest.mark.parametrize("seed", range(2))
def test_int8(case, per_channel, seed):
    rng = np.random.default_rng(seed * 10 + case)
    model, x = transpose_conv_q(rng, np.int8, *CASES[case], per_channel=per_channel)
    assert_bit_exact(model, [x])


@pytest.mark.parametrize("activation", [1, 3])  # RELU, RELU6
def test_int8_fused_activation(activation, rng):
    model, x = transpose_conv_q(rng, np.int8, *CASES[2], activation=activation)
    assert_bit_exact(model, [x])


def test_int8_without_bias(rng):
    model, x = transpose_conv_q(rng, np.int8, *CASES[1], bias=False)
    assert_bit_exact(model, [x])


def test_int8_default_set_is_xnnpack(rng):
    model, _ = transpose_conv_q(rng, np.int8, *CASES[0])
    assert litert_delegates(model)


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("seed", range(2))
def test_16x8_int64_bias(case, seed):
    rng = np.random.default_rng(seed * 10 + case)
    model, x = transpose_conv_q(rng, np.int16, *CASES[case], bias_dtype=np.int64)
    assert_bit_exact(model, [x])


def test_16x8_int32_bias_reference(rng):
    # quantized_bias_type INT32 (2) selects the int32 accumulator
    model, x = transpose_conv_q(rng, np.int16, *CASES[2], bias_dtype=np.int32,
                                quantized_bias_type=2)
    assert_bit_exact(model, [x], kernels=("reference",))
    with pytest.raises(UnsupportedOpError, match="int32 bias on kernels='default'"):
        run_ours(model, [x], "default")


def test_16x8_int32_bias_without_the_option_is_refused(rng):
    model, x = transpose_conv_q(rng, np.int16, *CASES[0], bias_dtype=np.int32)
    with pytest.raises(UnsupportedOpError, match="LiteRT would read it as int64"):
        run_ours(model, [x], "reference")
