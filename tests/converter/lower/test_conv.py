"""converter/lower/conv.py: Conv2D, DepthwiseConv2dNative, Conv2DBackpropInput.

References from TF's documented semantics (tf.nn.conv2d, tf.nn.depthwise_conv2d,
tf.nn.conv2d_transpose docs; tensorflow/core/framework/kernel_shape_util.cc for padding):
    output[b, i, j, k] = sum_{di, dj, q} padded[b, s_h*i + d_h*di, s_w*j + d_w*dj, q]
                                         * filter[di, dj, q, k]
SAME: out = ceil(in / s), pad_total = max((out - 1) * s + (k - 1) * d + 1 - in, 0), the
smaller half before (pad_before = pad_total // 2). VALID: no padding. EXPLICIT: the
node's explicit_paddings, [before, after] per NHWC dimension.
"""

import math

import numpy as np
import pytest

from edgelite.errors import UnsupportedOpError

from .lowering import F32, I32, NONE, check, floats, graph, rng, run

COVERED = {"Conv2D", "DepthwiseConv2dNative", "Conv2DBackpropInput"}


def same_padding(size: int, k: int, s: int, d: int = 1) -> tuple[int, int]:
    out = math.ceil(size / s)
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    return total // 2, total - total // 2


def paddings(padding, x_shape, k_hw, strides, dilations, explicit=None):
    """((top, bottom), (left, right)) for the TF padding attribute."""
    if padding == "VALID":
        return (0, 0), (0, 0)
    if padding == "EXPLICIT":
        return tuple(explicit[2:4]), tuple(explicit[4:6])
    return tuple(same_padding(x_shape[a], k_hw[a - 1], strides[a - 1], dilations[a - 1])
                 for a in (1, 2))


def taps(x, pads, k_hw, strides, dilations):
    """Yield (di, dj, window) with window[b, i, j, :] = padded[b, s*i + d*di, s*j + d*dj, :]."""
    xp = np.pad(x.astype(np.float64), ((0, 0), pads[0], pads[1], (0, 0)))
    (kh, kw), (sh, sw), (dh, dw) = k_hw, strides, dilations
    oh = (xp.shape[1] - (kh - 1) * dh - 1) // sh + 1
    ow = (xp.shape[2] - (kw - 1) * dw - 1) // sw + 1
    for di in range(kh):
        for dj in range(kw):
            yield di, dj, xp[:, di * dh:di * dh + (oh - 1) * sh + 1:sh,
                             dj * dw:dj * dw + (ow - 1) * sw + 1:sw, :]


def conv2d_reference(x, w, pads, strides, dilations):
    return sum(win @ w[di, dj] for di, dj, win in taps(x, pads, w.shape[:2], strides,
                                                        dilations)).astype(np.float32)


def depthwise_reference(x, w, pads, strides, dilations):
    """tf.nn.depthwise_conv2d: output[b, i, j, k * M + q] = sum_{di, dj}
    padded[b, s*i + d*di, s*j + d*dj, k] * filter[di, dj, k, q]."""
    kh, kw, c, m = w.shape
    out = sum(win[..., :, None] * w[di, dj] for di, dj, win in
              taps(x, pads, (kh, kw), strides, dilations))
    return out.reshape(*out.shape[:3], c * m).astype(np.float32)


def conv_node(g, op, strides, dilations, padding, explicit=None, **extra):
    attrs = dict(T=F32, strides=[1, *strides, 1], dilations=[1, *dilations, 1],
                 padding=padding, **extra)
    if explicit is not None:
        attrs["explicit_paddings"] = explicit
    g.node("y", op, ["x", "w"], **attrs)


EXPLICIT = [0, 0, 1, 2, 0, 1, 0, 0]
CASES = [  # (padding, strides, dilations)
    ("SAME", (1, 1), (1, 1)), ("SAME", (2, 2), (1, 1)), ("SAME", (2, 1), (1, 1)),
    ("SAME", (1, 1), (2, 2)), ("VALID", (1, 1), (1, 1)), ("VALID", (2, 2), (1, 1)),
    ("VALID", (1, 1), (1, 2)), ("EXPLICIT", (1, 1), (1, 1)), ("EXPLICIT", (2, 2), (1, 1)),
]


@pytest.mark.parametrize("kernel", [(3, 3), (2, 1)], ids=["3x3", "2x1"])
@pytest.mark.parametrize("padding, strides, dilations", CASES, ids=str)
def test_conv2d(padding, strides, dilations, kernel):
    r = rng()
    x, w = floats(r, 1, 7, 6, 3), floats(r, *kernel, 3, 4)
    g = graph(x=x.shape)
    g.const("w", w)
    explicit = EXPLICIT if padding == "EXPLICIT" else None
    conv_node(g, "Conv2D", strides, dilations, padding, explicit)
    pads = paddings(padding, x.shape, kernel, strides, dilations, explicit)
    # EXPLICIT padding is a PAD before a VALID conv (fold_pad folds it only when it equals
    # what SAME would pad).
    ops = (["PAD"] if padding == "EXPLICIT" else []) + ["CONV_2D"]
    check(g, {"x": x}, conv2d_reference(x, w, pads, strides, dilations), ops, rtol=1e-5,
          atol=1e-5)


@pytest.mark.parametrize("multiplier", [1, 2])
@pytest.mark.parametrize("padding, strides, dilations", CASES, ids=str)
def test_depthwise_conv2d(padding, strides, dilations, multiplier):
    r = rng()
    x, w = floats(r, 1, 7, 6, 3), floats(r, 3, 2, 3, multiplier)
    g = graph(x=x.shape)
    g.const("w", w)
    explicit = EXPLICIT if padding == "EXPLICIT" else None
    conv_node(g, "DepthwiseConv2dNative", strides, dilations, padding, explicit)
    pads = paddings(padding, x.shape, (3, 2), strides, dilations, explicit)
    ops = (["PAD"] if padding == "EXPLICIT" else []) + ["DEPTHWISE_CONV_2D"]
    check(g, {"x": x}, depthwise_reference(x, w, pads, strides, dilations), ops, rtol=1e-5,
          atol=1e-5)


def test_explicit_padding_equal_to_same_folds_into_the_conv():
    """With the passes, a PAD equal to SAME's padding becomes the conv's SAME padding; with
    them off the rule's PAD + VALID conv is exported as is."""
    r = rng()
    x, w = floats(r, 1, 6, 6, 2), floats(r, 3, 3, 2, 2)
    explicit = [0, 0, 1, 1, 1, 1, 0, 0]
    want = conv2d_reference(x, w, ((1, 1), (1, 1)), (1, 1), (1, 1))
    for passes, ops in ((frozenset(), ["CONV_2D"]), (NONE, ["PAD", "CONV_2D"])):
        g = graph(x=x.shape)
        g.const("w", w)
        conv_node(g, "Conv2D", (1, 1), (1, 1), "EXPLICIT", explicit)
        check(g, {"x": x}, want, ops, passes=passes, rtol=1e-5, atol=1e-5,
              lowered={"PAD": 1, "CONV_2D": 1})


def conv2d_transpose_reference(dy, w, out_shape, padding, strides):
    """Conv2DBackpropInput(input_sizes, filter, out_backprop): the gradient of Conv2D with
    respect to its input (nn_ops.cc), i.e. every out_backprop pixel scattered back through
    the filter: result[b, s*i + di - pad_top, s*j + dj - pad_left, q] +=
    out_backprop[b, i, j, k] * filter[di, dj, q, k], padding as the forward conv's."""
    kh, kw, cin, _ = w.shape
    n, oh, ow, _ = dy.shape
    _, h, wd, _ = out_shape
    pads = paddings(padding, out_shape, (kh, kw), strides, (1, 1))
    (sh, sw), (top, left) = strides, (pads[0][0], pads[1][0])
    buf = np.zeros((n, max((oh - 1) * sh + kh, top + h), max((ow - 1) * sw + kw, left + wd),
                    cin))
    for i in range(oh):
        for j in range(ow):
            for di in range(kh):
                for dj in range(kw):
                    buf[:, i * sh + di, j * sw + dj] += dy[:, i, j] @ w[di, dj].T
    return buf[:, top:top + h, left:left + wd].astype(np.float32)


@pytest.mark.parametrize("padding, strides, out_hw", [
    ("SAME", (1, 1), (5, 4)), ("SAME", (2, 2), (6, 8)), ("SAME", (2, 2), (5, 7)),
    ("VALID", (1, 1), (7, 6)), ("VALID", (2, 2), (11, 9)), ("VALID", (2, 1), (12, 6)),
])
def test_conv2d_backprop_input(padding, strides, out_hw):
    r = rng()
    kh, kw = 3, 2
    # out_backprop has the forward conv's output size for an input of out_hw.
    fwd = [math.ceil(out_hw[a] / strides[a]) if padding == "SAME" else
           math.ceil((out_hw[a] - (kh, kw)[a] + 1) / strides[a]) for a in (0, 1)]
    dy, w = floats(r, 1, *fwd, 4), floats(r, kh, kw, 3, 4)
    out_shape = (1, *out_hw, 3)
    g = graph(x=dy.shape)
    g.const("sizes", np.array(out_shape, np.int32))
    g.const("w", w)
    g.node("y", "Conv2DBackpropInput", ["sizes", "w", "x"], T=F32,
           strides=[1, *strides, 1], padding=padding)
    check(g, {"x": dy}, conv2d_transpose_reference(dy, w, out_shape, padding, strides),
          ["TRANSPOSE_CONV"], rtol=1e-5, atol=1e-5)


def test_conv2d_backprop_input_with_a_computed_output_shape():
    """input_sizes computed from constants (a Pack, as Keras' Conv2DTranspose builds it)."""
    r = rng()
    dy, w = floats(r, 1, 3, 3, 2), floats(r, 3, 3, 2, 2)
    g = graph(x=dy.shape)
    dims = [f"dim_{c}" for c in "nhwc"]
    for name, v in zip(dims, (1, 6, 6, 2)):
        g.const(name, np.int32(v))
    g.node("sizes", "Pack", dims, T=I32, N=4, axis=0)
    g.const("w", w)
    g.node("y", "Conv2DBackpropInput", ["sizes", "w", "x"], T=F32, strides=[1, 2, 2, 1],
           padding="SAME")
    check(g, {"x": dy}, conv2d_transpose_reference(dy, w, (1, 6, 6, 2), "SAME", (2, 2)),
          ["TRANSPOSE_CONV"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", sorted(COVERED))
def test_nchw_is_refused(op):
    """TFLite's kernels are NHWC; an NCHW conv is refused with a way out, not mis-run."""
    g = graph(x=(1, 3, 6, 6))
    g.const("w", np.ones((3, 3, 3, 3), np.float32))
    g.const("sizes", np.array([1, 3, 6, 6], np.int32))
    inputs = ["sizes", "w", "x"] if op == "Conv2DBackpropInput" else ["x", "w"]
    g.node("y", op, inputs, T=F32, strides=[1, 1, 1, 1], padding="SAME", data_format="NCHW")
    with pytest.raises(UnsupportedOpError, match=rf"^node 'y' \({op}\): uses data_format "
                       "'NCHW'; TFLite kernels are NHWC. Re-export the model with NHWC"):
        run(g, {"x": np.zeros((1, 3, 6, 6), np.float32)}, ["y"])
