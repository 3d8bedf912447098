"""Dynamic-range (hybrid) CONV_2D and DEPTHWISE_CONV_2D (interpreter/kernels/hybrid/conv.py):
float32 input, int8 filters, against LiteRT's two kernel sets -- bit-identical everywhere
but DEPTHWISE_CONV_2D's default kernel, which stays within LiteRT's own spread."""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.errors import UnsupportedOpError
from tests.interpreter.tflite_builder import QuantModel
from tests.support import run_edgelite

from ...hybrid_models import RELU, RELU6, RELU_N1_TO_1, SAME, SEEDS, VALID, check, feed, weights


CONV_CASES = [  # (N, H, W, C, O, KH, KW, stride, dilation, padding, per_channel, act)
    (1, 6, 7, 3, 5, 3, 3, 1, 1, SAME, False, 0),
    (2, 9, 8, 4, 6, 3, 3, 2, 1, SAME, True, RELU),
    (2, 9, 9, 2, 3, 3, 2, 1, 2, VALID, True, 0),
    (1, 5, 5, 8, 4, 1, 1, 1, 1, VALID, False, RELU6),
    (3, 7, 6, 5, 8, 2, 3, 2, 1, VALID, False, 0),
    (1, 8, 8, 16, 12, 3, 3, 1, 1, SAME, True, RELU6),
]


def _out_size(size, k, stride, dilation, padding):
    ek = (k - 1) * dilation + 1
    return -(-size // stride) if padding == SAME else (size - ek) // stride + 1


def conv_model(rng, case, depthwise=False, multiplier=1, groups=1):
    n, h, w_, c, o, kh, kw, stride, dil, pad, per_channel, act = case
    if depthwise:
        o = c * multiplier
    m = QuantModel()
    x = m.input("x", (n, h, w_, c), np.float32)
    shape = (1, kh, kw, o) if depthwise else (o, kh, kw, c // groups)
    w, scale, q = weights(rng, shape, o, per_channel, axis=3 if depthwise else 0)
    operands = [x, m.const("w", w, np.int8, scale=scale, **q),
                m.const("b", rng.standard_normal(o), np.float32)]
    out = (n, _out_size(h, kh, stride, dil, pad), _out_size(w_, kw, stride, dil, pad), o)
    y = m.output("y", out, np.float32)
    opts = dict(padding=pad, stride_h=stride, stride_w=stride, dilation_h_factor=dil,
                dilation_w_factor=dil, fused_activation_function=act)
    if depthwise:
        m.op("DEPTHWISE_CONV_2D", operands, [y], version=6, depth_multiplier=multiplier,
             **opts)
    else:
        m.op("CONV_2D", operands, [y], version=5 if per_channel else 2, **opts)
    return m.build(), (n, h, w_, c)


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_conv(case, seed):
    rng = np.random.default_rng(seed)
    model, shape = conv_model(rng, case)
    for kind in ("normal", "positive", "zeros"):
        check(model, [feed(rng, shape, kind)])


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("multiplier", [1, 2])
def test_depthwise(case, multiplier):
    rng = np.random.default_rng(multiplier)
    case = case[:10] + (True,) + case[11:]  # depthwise_conv.cc: per-channel filters only
    model, shape = conv_model(rng, case, depthwise=True, multiplier=multiplier)
    for kind in ("normal", "positive", "zeros"):
        check(model, [feed(rng, shape, kind)], exact=("reference",))


def test_depthwise_per_tensor_filter_is_refused():
    rng = np.random.default_rng(0)
    model, shape = conv_model(rng, CONV_CASES[0], depthwise=True)
    with pytest.raises(UnsupportedOpError, match=r"dynamic-range \(hybrid\) depthwise"):
        run_edgelite(model, [feed(rng, shape)], "reference")


def test_conv_uint8_weights_refused():
    """uint8 hybrid weights (legacy files) are refused: LiteRT's CONV_2D reads them in a
    way none of the obvious readings reproduces, and its FULLY_CONNECTED reads the bytes
    as int8 except, measured, for some rows with zero point 0."""
    m = QuantModel()
    x = m.input("x", (1, 4, 4, 3), np.float32)
    w = m.const("w", np.ones((2, 3, 3, 3), np.uint8), np.uint8, scale=0.1, zp=128)
    m.op("CONV_2D", [x, w, -1], [m.output("y", (1, 4, 4, 2), np.float32)], padding=SAME,
         stride_h=1, stride_w=1)
    with pytest.raises(UnsupportedOpError, match=r"type uint8: dynamic-range \(hybrid\) "
                                                 r"kernels support int8 weights only"):
        run_edgelite(m.build(), [np.ones((1, 4, 4, 3), np.float32)], "reference")


GROUPED_CASES = [  # (case, groups): RegNet / ResNeXt-style grouped convolutions
    ((1, 6, 6, 4, 4, 3, 3, 1, 1, SAME, True, RELU), 2),
    ((2, 7, 5, 6, 9, 3, 3, 2, 1, VALID, True, 0), 3),
    ((1, 5, 5, 8, 8, 1, 1, 1, 1, VALID, True, RELU6), 4),
    ((1, 6, 6, 24, 24, 3, 3, 1, 1, SAME, True, RELU), 3),
]


@pytest.mark.parametrize("case, groups", GROUPED_CASES)
def test_grouped_conv(case, groups):
    """Filter input channels C / G: each group's channels with its O / G filters (LiteRT's
    HybridConvPerChannel `groups`), bit-identical with both LiteRT kernel sets."""
    rng = np.random.default_rng(groups)
    model, shape = conv_model(rng, case, groups=groups)
    for kind in ("normal", "positive"):
        check(model, [feed(rng, shape, kind)])


def test_grouped_per_tensor_filter_is_refused():
    """LiteRT's conv.cc refuses a grouped hybrid filter with one scale (measured)."""
    rng = np.random.default_rng(0)
    model, shape = conv_model(rng, (1, 5, 5, 8, 8, 1, 1, 1, 1, VALID, False, 0), groups=4)
    with pytest.raises(UnsupportedOpError, match=r"grouped dynamic-range \(hybrid\) "
                                                  r"convolution needs one filter scale per "
                                                  r"output channel \(8\)"):
        run_edgelite(model, [feed(rng, shape)], "reference")


def test_filter_channels_not_dividing_the_input_are_refused():
    from edgelite.errors import ShapeError
    m = QuantModel()
    x = m.input("x", (1, 4, 4, 4), np.float32)
    w = m.const("w", np.ones((4, 3, 3, 3), np.int8), np.int8, scale=0.1, zp=0)
    m.op("CONV_2D", [x, w, -1], [m.output("y", (1, 4, 4, 4), np.float32)], padding=SAME,
         stride_h=1, stride_w=1)
    with pytest.raises(ShapeError, match=r"filter input channels 3 must divide the input "
                                         r"channels 4"):
        run_edgelite(m.build(), [np.ones((1, 4, 4, 4), np.float32)], "reference")


@pytest.mark.parametrize("seed", range(SEEDS))
def test_random_conv_and_depthwise(seed):
    """Random geometry, per-tensor / per-channel filters, activations, batches."""
    rng = np.random.default_rng(100 + seed)
    k = int(rng.integers(1, 5))
    stride, dil = int(rng.integers(1, 4)), int(rng.integers(1, 3))
    size = (k - 1) * dil + 1 + int(rng.integers(0, 6))
    case = (int(rng.integers(1, 4)), size, size + int(rng.integers(0, 3)),
            int(rng.integers(1, 9)), int(rng.integers(1, 17)), k, k, stride, dil,
            int(rng.integers(0, 2)), bool(rng.integers(0, 2)),
            int(rng.choice([0, RELU, RELU6, RELU_N1_TO_1])))
    model, shape = conv_model(rng, case)
    check(model, [feed(rng, shape)])
    dw_case = case[:10] + (True,) + case[11:]
    model, shape = conv_model(rng, dw_case, depthwise=True, multiplier=int(rng.integers(1, 4)))
    check(model, [feed(rng, shape)], exact=("reference",))
