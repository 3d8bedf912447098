"""TRANSPOSE_CONV against LiteRT's reference kernels (and its default kernels); int8 and
16x8 bit-exact with both LiteRT kernel sets."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError, UnsupportedOpError

from ..op_models import check_op, check_op_default, const, run_op
from tests.interpreter.tflite_builder import QuantModel
from tests.support import assert_bit_exact, full_range, litert_delegates, rand, run_edgelite

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


# --------------------------------------------------------------------------- int8, 16x8
# (XNNPACK takes int8 in the default set; 16x8 with an int64 bias is the reference kernel
# in both)

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
    legacy = dtype == np.uint8  # uint8 weights per tensor, with a zero point
    mid = 128 if legacy else 0
    z_in = 0 if sixteen else mid + int(rng.integers(-60, 60))
    s_out = float(np.float32(rng.uniform(0.002, 0.01) if sixteen else rng.uniform(0.05, 0.3)))
    z_out = 0 if sixteen else mid + int(rng.integers(-60, 60))
    wscale = rng.uniform(0.002, 0.02, size=o if per_channel else 1).astype(np.float32)
    m = QuantModel()
    shape = m.const("output_shape", np.array([n, oh, ow, o]), np.int32)
    if legacy:
        weights = m.const("w", rng.integers(0, 256, size=(o, kh, kw, c)), np.uint8,
                          scale=wscale.tolist(), zp=[int(rng.integers(100, 156))], axis=0)
    else:
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


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("seed", range(2))
def test_uint8(case, seed):
    rng = np.random.default_rng(seed * 10 + case)
    model, x = transpose_conv_q(rng, np.uint8, *CASES[case], per_channel=False,
                                activation=seed)  # NONE, RELU
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


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("seed", range(3))
def test_16x8_int32_bias(case, seed):
    # quantized_bias_type INT32 (2) selects the int32 accumulator; the default set's
    # optimized kernel requantizes 8 channels at a time its own way, the rest as the
    # reference does
    rng = np.random.default_rng(seed * 10 + case)
    model, x = transpose_conv_q(rng, np.int16, *CASES[case], bias_dtype=np.int32,
                                quantized_bias_type=2)
    assert_bit_exact(model, [x])


def test_16x8_int32_bias_without_the_option_is_refused(rng):
    model, x = transpose_conv_q(rng, np.int16, *CASES[0], bias_dtype=np.int32)
    with pytest.raises(UnsupportedOpError, match="LiteRT would read it as int64"):
        run_edgelite(model, [x], "reference")
