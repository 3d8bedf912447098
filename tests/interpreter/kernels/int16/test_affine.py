"""16x8 CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED (int16 activations, int8 weights, int64
or int32 bias): bit-exact with both LiteRT kernel sets on random cases."""

import numpy as np
import pytest

from edgelite.errors import ShapeError, UnsupportedOpError

from tests.interpreter.tflite_builder import QuantModel
from tests.support import KERNEL_SETS, assert_bit_exact, full_range, run_edgelite

ACTS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]


def _scale(rng, low, high):
    return float(np.float32(rng.uniform(low, high)))


def _affine_model(rng, op, x_shape, w, out_shape, *, per_channel, axis, bias_dtype,
                  out_channels, **options):
    m = QuantModel()
    sx = _scale(rng, 1e-4, 1e-3)
    x = m.input("x", x_shape, np.int16, sx, 0)
    if per_channel:
        sw = np.float32(rng.uniform(0.002, 0.02, out_channels))
    else:
        sw = np.float32([rng.uniform(0.002, 0.02)])
    zps = np.zeros(len(sw), np.int64)
    wt = m.const("w", w, np.int8, [float(s) for s in sw], zps, axis=axis)
    inputs = [x, wt]
    if bias_dtype is not None:
        bscale = [float(np.float32(sx) * s) for s in np.broadcast_to(sw, (out_channels,))]
        bias = rng.integers(-40000, 40000, out_channels)
        inputs.append(m.const("b", bias, bias_dtype, bscale if per_channel else bscale[:1],
                              np.zeros(len(bscale) if per_channel else 1, np.int64)))
    else:
        inputs.append(-1)
    # An output scale leaving room for the sums (the outputs use most of int16).
    depth = w.size // out_channels
    so = float(np.float32(sx * float(np.max(sw)) * 127 * 8000 * np.sqrt(depth) / 32768 / 4))
    y = m.output("y", out_shape, np.int16, so, 0)
    m.op(op, inputs, [y], **options)
    return m.build()


def _out(size, k, stride, dilation, padding):
    eff = (k - 1) * dilation + 1
    return -(-size // stride) if padding == "SAME" else (size - eff + stride) // stride


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("per_channel", [False, True])
def test_conv16(seed, per_channel, bias_dtype=np.int64):
    rng = np.random.default_rng(seed)
    n, h, w, c, o = 1 + seed % 2, 5 + seed, 7 - seed % 3, 1 + seed % 4, 2 + seed % 5
    kh, kw = (1 + seed % 3, 3 - seed % 2)
    stride = (1 + seed % 2, 1 + (seed // 2) % 2)
    padding = ["SAME", "VALID"][seed % 2]
    dil = (1 + (seed // 3) % 2, 1 + (seed // 4) % 2)
    filt = full_range(rng, (o, kh, kw, c), np.int8)
    oh, ow = _out(h, kh, stride[0], dil[0], padding), _out(w, kw, stride[1], dil[1], padding)
    model = _affine_model(rng, "CONV_2D", (n, h, w, c), filt, (n, oh, ow, o),
                          per_channel=per_channel, axis=0, bias_dtype=bias_dtype,
                          out_channels=o, padding=padding, stride_h=stride[0],
                          stride_w=stride[1], dilation_h_factor=dil[0],
                          dilation_w_factor=dil[1], fused_activation_function=ACTS[seed % 4])
    for _ in range(2):
        assert_bit_exact(model, [full_range(rng, (n, h, w, c), np.int16)])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("groups", [2, 3, 4])
@pytest.mark.parametrize("per_channel", [False, True])
def test_grouped_conv16(seed, groups, per_channel):
    """Input channels = groups x filter input channels (reference_integer_ops::
    ConvPerChannel's groups): output channel o reads group o // (O / groups). Always with
    a bias: LiteRT's conv.cc Prepare requires one."""
    rng = np.random.default_rng(300 + 10 * seed + groups)
    cf, og = 1 + seed % 3, 1 + (seed + groups) % 3
    c, o = groups * cf, groups * og
    n, h, w = 1 + seed % 2, 4 + seed, 6 - seed % 3
    kh, kw = 1 + seed % 3, 3 - seed % 2
    stride = (1 + seed % 2, 1 + (seed // 2) % 2)
    padding = ["SAME", "VALID"][(seed // 2) % 2]
    dil = 1 + (seed // 3) % 2
    filt = full_range(rng, (o, kh, kw, cf), np.int8)
    oh, ow = _out(h, kh, stride[0], dil, padding), _out(w, kw, stride[1], 1, padding)
    model = _affine_model(rng, "CONV_2D", (n, h, w, c), filt, (n, oh, ow, o),
                          per_channel=per_channel, axis=0,
                          bias_dtype=np.int64, out_channels=o,
                          padding=padding, stride_h=stride[0], stride_w=stride[1],
                          dilation_h_factor=dil, dilation_w_factor=1,
                          fused_activation_function=ACTS[seed % 4])
    for _ in range(2):
        assert_bit_exact(model, [full_range(rng, (n, h, w, c), np.int16)])


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("per_channel", [False, True])
def test_depthwise16(seed, per_channel, bias_dtype=np.int64):
    rng = np.random.default_rng(100 + seed)
    n, h, w, c, mult = 1 + seed % 2, 4 + seed, 6 - seed % 3, 1 + seed % 3, 1 + seed % 2
    kh, kw = 1 + seed % 3, 3 - seed % 2
    stride = 1 + seed % 2
    padding = ["SAME", "VALID"][(seed // 2) % 2]
    o = c * mult
    dil = 1 + (seed // 4) % 2
    filt = full_range(rng, (1, kh, kw, o), np.int8)
    oh, ow = _out(h, kh, stride, dil, padding), _out(w, kw, stride, 1, padding)
    model = _affine_model(rng, "DEPTHWISE_CONV_2D", (n, h, w, c), filt, (n, oh, ow, o),
                          per_channel=per_channel, axis=3, bias_dtype=bias_dtype,
                          out_channels=o, padding=padding, stride_h=stride, stride_w=stride,
                          depth_multiplier=mult, dilation_h_factor=dil, dilation_w_factor=1,
                          fused_activation_function=ACTS[seed % 4])
    for _ in range(2):
        assert_bit_exact(model, [full_range(rng, (n, h, w, c), np.int16)])


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("bias_dtype", [np.int64, np.int32, None])
def test_fully_connected16(seed, per_channel, bias_dtype):
    rng = np.random.default_rng(200 + seed)
    batch, depth, units = 1 + seed % 3, 3 + 7 * seed, 1 + seed % 5 * 3
    filt = full_range(rng, (units, depth), np.int8)
    model = _affine_model(rng, "FULLY_CONNECTED", (batch, depth), filt, (batch, units),
                          per_channel=per_channel, axis=0, bias_dtype=bias_dtype,
                          out_channels=units, fused_activation_function=ACTS[seed % 4])
    # An int32 bias: the default kernels run it (optimized_integer_ops); LiteRT's
    # reference kernel would read it as int64, and edgelite refuses it there.
    kernels = ("default",) if bias_dtype == np.int32 else KERNEL_SETS
    for _ in range(2):
        assert_bit_exact(model, [full_range(rng, (batch, depth), np.int16)], kernels)
    if bias_dtype == np.int32:
        with pytest.raises(UnsupportedOpError, match="reads it as int64"):
            run_edgelite(model, [np.zeros((batch, depth), np.int16)], "reference")


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D"])
def test_conv16_int32_bias_refused(op):
    rng = np.random.default_rng(7)
    filt = full_range(rng, (2, 3, 3, 2) if op == "CONV_2D" else (1, 3, 3, 2), np.int8)
    model = _affine_model(rng, op, (1, 4, 4, 2), filt, (1, 4, 4, 2), per_channel=True,
                          axis=0 if op == "CONV_2D" else 3, bias_dtype=np.int32,
                          out_channels=2, padding="SAME", stride_h=1, stride_w=1,
                          dilation_h_factor=1, dilation_w_factor=1)
    for kernels in KERNEL_SETS:
        with pytest.raises(UnsupportedOpError, match="needs an int64 bias"):
            run_edgelite(model, [np.zeros((1, 4, 4, 2), np.int16)], kernels)


def test_grouped_conv16_huge_weights_refused():
    """65536 groups of one channel: the (C, O) matrix of the grouped product would take
    32 GiB; refused in prepare() with one line, nothing allocated."""
    rng = np.random.default_rng(5)
    c = 1 << 16
    model = _affine_model(rng, "CONV_2D", (1, 1, 1, c), np.ones((c, 1, 1, 1), np.int8),
                          (1, 1, 1, c), per_channel=False, axis=0, bias_dtype=np.int64,
                          out_channels=c, padding="VALID", stride_h=1, stride_w=1,
                          dilation_h_factor=1, dilation_w_factor=1)
    with pytest.raises(ShapeError, match=r"work buffer of shape \[1, 65536, 1, 65536, 1\], "
                                         "over the 2147483648-byte limit"):
        run_edgelite(model, [np.zeros((1, 1, 1, c), np.int16)], "reference")
