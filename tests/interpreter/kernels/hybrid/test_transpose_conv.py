"""Dynamic-range (hybrid) TRANSPOSE_CONV: float32 input, int8 weights (per tensor or per
output channel), against LiteRT's two kernel sets: bit-identical float32 outputs with
BUILTIN_REF (reference_ops::HybridTransposeConv) and with the default resolver (XNNPACK's
qd8 deconvolution, or the builtin hybrid kernel where XNNPACK declines the node)."""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.errors import UnsupportedOpError

from tests.interpreter.tflite_builder import QuantModel
from tests.support import KERNEL_SETS, run_edgelite

from ...hybrid_models import check, feed, weights

SAME, VALID = 0, 1
RELU, RELU6 = 1, 3


def tconv_model(rng, n, h, w, c, o, kh, kw, stride, pad, per_channel, bias, act,
                wdtype=np.int8):
    sh, sw = stride
    oh = h * sh if pad == SAME else (h - 1) * sh + kh
    ow = w * sw if pad == SAME else (w - 1) * sw + kw
    m = QuantModel()
    shape = m.const("shape", np.array([n, oh, ow, o]), np.int32)
    wt, scale, q = weights(rng, (o, kh, kw, c), o, per_channel)
    operands = [shape, m.const("w", wt.astype(wdtype), wdtype, scale=scale, **q),
                m.input("x", (n, h, w, c), np.float32)]
    if bias:
        operands.append(m.const("b", rng.standard_normal(o), np.float32))
    y = m.output("y", (n, oh, ow, o), np.float32)
    m.op("TRANSPOSE_CONV", operands, [y], version=3 if bias else 2, padding=pad,
         stride_h=sh, stride_w=sw, fused_activation_function=act)
    return m.build(), (n, h, w, c)


def _case(rng):
    return dict(n=int(rng.integers(1, 3)), h=int(rng.integers(1, 5)), w=int(rng.integers(1, 5)),
                c=int(rng.integers(1, 7)), o=int(rng.integers(1, 7)),
                kh=int(rng.integers(1, 4)), kw=int(rng.integers(1, 4)),
                stride=(int(rng.integers(1, 3)), int(rng.integers(1, 3))),
                pad=int(rng.integers(0, 2)), per_channel=bool(rng.integers(0, 2)),
                bias=bool(rng.integers(0, 2)), act=int(rng.choice([0, RELU, RELU6])))


@pytest.mark.parametrize("seed", range(16))
def test_random(seed):
    """Random shapes, strides, paddings, per-tensor / per-channel weights, bias or none
    (measured with 320 random cases per kernel set: all bit-identical)."""
    rng = np.random.default_rng(seed)
    model, shape = tconv_model(rng, **_case(rng))
    for kind in ("normal", "positive", "zeros"):
        check(model, [feed(rng, shape, kind)])


@pytest.mark.parametrize("stride, pad, xnnpack", [
    ((2, 2), SAME, True),    # stride <= kernel (3x3)
    ((2, 4), SAME, False),   # SAME with a stride wider than the kernel: XNNPACK declines
    ((4, 4), VALID, True),   # VALID output sizes always fit XNNPACK
])
def test_default_kernel_choice(stride, pad, xnnpack):
    """Where XNNPACK takes the node, the default outputs round differently from the
    reference ones (its qd8 / FMA arithmetic); where it declines, they are the reference
    ones. Both bit-identical with LiteRT."""
    rng = np.random.default_rng(3)
    model, shape = tconv_model(rng, 2, 3, 4, 5, 6, 3, 3, stride, pad, True, True, 0)
    feeds = [feed(rng, shape)]
    check(model, feeds)
    ours = {k: run_edgelite(model, feeds, k)[0] for k in KERNEL_SETS}
    assert np.array_equal(ours["reference"], ours["default"]) is not xnnpack


def test_zero_input_is_bias():
    rng = np.random.default_rng(9)
    model, shape = tconv_model(rng, 1, 2, 3, 4, 3, 2, 2, (2, 2), SAME, False, True, 0)
    check(model, [np.zeros(shape, np.float32)])


def test_uint8_weights_refused():
    rng = np.random.default_rng(1)
    model, shape = tconv_model(rng, 1, 2, 2, 2, 2, 2, 2, (1, 1), SAME, False, False, 0,
                               wdtype=np.uint8)
    for kernels in KERNEL_SETS:
        with pytest.raises(UnsupportedOpError, match=r"dynamic-range \(hybrid\) kernels "
                                                     "support int8 weights only"):
            run_edgelite(model, [np.zeros(shape, np.float32)], kernels)
