"""converter/lower/nn.py: BiasAdd, FusedBatchNorm (inference), MaxPool / AvgPool, LRN,
TopKV2.

References from TF's docs: tf.nn.bias_add, tf.compat.v1.nn.fused_batch_norm (inference:
y = (x - mean) / sqrt(variance + epsilon) * scale + offset), tf.nn.max_pool / avg_pool with
SAME padding as in conv (kernel_shape_util.cc; padded cells never win a max and are not
counted in an average: AvgPool divides by the number of in-bounds cells), and
tf.nn.local_response_normalization.
"""

import math

import numpy as np
import pytest

from edgelite.errors import DTypeError, ShapeError, UnsupportedOpError

from .lowering import F32, NONE, check, floats, graph, rng, run
from .test_conv import same_padding

COVERED = {"BiasAdd", "FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3", "MaxPool",
           "AvgPool", "LRN", "TopKV2"}


@pytest.mark.parametrize("shape", [(1, 3, 4, 5), (2, 5), (2, 3, 5)])
def test_bias_add(shape):
    """BiasAdd adds the 1-D bias along the last dimension (data_format NHWC)."""
    r = rng()
    x, b = floats(r, *shape), floats(r, 5)
    g = graph(x=x.shape)
    g.const("b", b)
    g.node("y", "BiasAdd", ["x", "b"], T=F32, data_format="NHWC")
    check(g, {"x": x}, x + b, ["ADD"])


def batch_norm_graph(op, x_shape, params, **attrs):
    g = graph(x=x_shape)
    for name, p in zip(("scale", "offset", "mean", "variance"), params):
        g.const(name, p)
    types = dict(T=F32) if op == "FusedBatchNorm" else dict(T=F32, U=F32)
    g.node("y", op, ["x", "scale", "offset", "mean", "variance"], **types, **attrs)
    return g


def bn_params(r, c=4):
    # Small variances, so that epsilon (1e-4 by default, 1e-3 below) visibly matters.
    return [floats(r, c, lo=0.5, hi=2.0), floats(r, c), floats(r, c),
            floats(r, c, lo=1e-4, hi=4e-3)]


@pytest.mark.parametrize("epsilon", [None, 0.001])
@pytest.mark.parametrize("passes", [frozenset(), NONE], ids=["passes", "no-passes"])
@pytest.mark.parametrize("op", ["FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"])
def test_fused_batch_norm_inference(op, passes, epsilon):
    """is_training=false: normalise with the given mean and variance; epsilon defaults to
    0.0001 (nn_ops.cc). Without a conv to fold into it stays one MUL and one ADD."""
    r = rng()
    x = floats(r, 1, 3, 3, 4)
    scale, offset, mean, var = params = bn_params(r)
    attrs = dict(is_training=False, data_format="NHWC")
    if epsilon is not None:
        attrs["epsilon"] = epsilon
    g = batch_norm_graph(op, x.shape, params, **attrs)
    eps = 1e-4 if epsilon is None else epsilon
    want = (x.astype(np.float64) - mean) / np.sqrt(var.astype(np.float64) + eps) * scale + offset
    check(g, {"x": x}, want.astype(np.float32), ["MUL", "ADD"], passes=passes, rtol=1e-5,
          atol=1e-5, lowered={"MUL": 1, "ADD": 1})


def _batch_moments_reference(x, gamma, beta, eps, channel):
    """y = (x - m) * gamma / sqrt(v + eps) + beta, m and v (biased) over all axes but the
    channel's (nn_ops.cc FusedBatchNorm, is_training=true; fused_batch_norm_op.cc)."""
    axes = tuple(a for a in range(4) if a != channel)
    x = x.astype(np.float64)
    m, v = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
    shape = [-1 if a == channel else 1 for a in range(4)]
    return ((x - m) / np.sqrt(v + eps) * gamma.reshape(shape) + beta.reshape(shape)
            ).astype(np.float32)


TRAINING_OPS = ["MEAN", "SQUARED_DIFFERENCE", "MEAN", "ADD", "RSQRT", "SUB", "MUL"]


@pytest.mark.parametrize("attrs", [{"is_training": True}, {}], ids=["true", "absent"])
@pytest.mark.parametrize("fmt, affine", [("NHWC", True), ("NCHW", True), ("NCHW", False)])
def test_fused_batch_norm_in_training_mode_uses_the_batch_moments(attrs, fmt, affine):
    """Training mode normalises with the batch's own statistics (Keras' LayerNormalization
    freezes to one: [1, rows, features, 1] NCHW, scale 1, offset 0). is_training defaults to
    true in TF's op definition (nn_ops.cc: "is_training: bool = true"), so a node without the
    attribute is in training mode too. Scale 1 / offset 0 add no MUL / ADD."""
    r = rng()
    shape = (1, 3, 5, 1) if fmt == "NCHW" else (2, 2, 3, 4)
    channel = 1 if fmt == "NCHW" else 3
    c = shape[channel]
    gamma, beta = (floats(r, c, lo=0.5, hi=2.0), floats(r, c)) if affine else (
        np.ones(c, np.float32), np.zeros(c, np.float32))
    params = [gamma, beta, np.zeros(0, np.float32), np.zeros(0, np.float32)]
    g = batch_norm_graph("FusedBatchNormV3", shape, params, data_format=fmt, epsilon=1e-3,
                         **attrs)
    x = floats(r, *shape, lo=-3, hi=3)
    # (an NCHW scale / offset is reshaped to [C, 1, 1]: folded at once when constant)
    r_ = check(g, {"x": x}, _batch_moments_reference(x, gamma, beta, 1e-3, channel),
               TRAINING_OPS + (["MUL", "ADD"] if affine else []), rtol=1e-5, atol=2e-6,
               passes=NONE)
    assert r_.lowered["MEAN"] == 2


def pool_reference(x, ksize, strides, padding, kind):
    """Window max / mean over in-bounds cells, windows placed as in a conv."""
    (kh, kw), (sh, sw) = ksize, strides
    n, h, w, c = x.shape
    if padding == "SAME":
        (top, _), (left, _) = same_padding(h, kh, sh), same_padding(w, kw, sw)
        oh, ow = math.ceil(h / sh), math.ceil(w / sw)
    else:
        top = left = 0
        oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    out = np.zeros((n, oh, ow, c), np.float64)
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * sh - top, j * sw - left
            win = x[:, max(r0, 0):r0 + kh, max(c0, 0):c0 + kw, :].astype(np.float64)
            out[:, i, j] = win.max(axis=(1, 2)) if kind == "max" else win.mean(axis=(1, 2))
    return out.astype(np.float32)


POOLS = [((2, 2), (2, 2), "VALID"), ((3, 3), (1, 1), "SAME"), ((3, 2), (2, 1), "SAME"),
         ((2, 3), (2, 2), "SAME"), ((3, 3), (2, 2), "VALID"), ((1, 1), (2, 2), "SAME")]


@pytest.mark.parametrize("ksize, strides, padding", POOLS, ids=str)
@pytest.mark.parametrize("op, tfl, kind", [("MaxPool", "MAX_POOL_2D", "max"),
                                           ("AvgPool", "AVERAGE_POOL_2D", "mean")])
def test_pool(op, tfl, kind, ksize, strides, padding):
    x = floats(rng(), 1, 7, 6, 2)
    g = graph(x=x.shape)
    g.node("y", op, ["x"], T=F32, ksize=[1, *ksize, 1], strides=[1, *strides, 1],
           padding=padding, data_format="NHWC")
    check(g, {"x": x}, pool_reference(x, ksize, strides, padding, kind), [tfl], rtol=1e-6)


@pytest.mark.parametrize("op", ["BiasAdd", "FusedBatchNormV3", "MaxPool", "AvgPool"])
def test_nchw_is_refused(op):
    g = graph(x=(1, 4, 3, 3))
    if op == "BiasAdd":
        g.const("b", np.zeros(4, np.float32))
        g.node("y", op, ["x", "b"], T=F32, data_format="NCHW")
    elif op == "FusedBatchNormV3":
        g = batch_norm_graph(op, (1, 4, 3, 3), bn_params(rng()), is_training=False,
                             data_format="NCHW")
    else:
        g.node("y", op, ["x"], T=F32, ksize=[1, 1, 2, 2], strides=[1, 1, 1, 1],
               padding="VALID", data_format="NCHW")
    with pytest.raises(UnsupportedOpError, match=rf"^node 'y' \({op}\): uses data_format "
                       "'NCHW'; TFLite kernels are NHWC"):
        run(g, {"x": np.zeros((1, 4, 3, 3), np.float32)}, ["y"])


# -- TopKV2 -------------------------------------------------------------------------------------
def tf_top_k(x: np.ndarray, k: int):
    """tf.math.top_k: per row of the last axis, the k largest values, largest first; "if two
    elements are equal, the lower-index element appears first"."""
    rows = x.reshape(-1, x.shape[-1])
    # .item(): Python numbers, so negating the smallest integer does not wrap.
    idx = np.array([sorted(range(len(row)), key=lambda i: (-row[i].item(), i))[:k]
                    for row in rows], np.int32).reshape(x.shape[:-1] + (k,))
    return np.take_along_axis(x, idx, axis=-1), idx


TIES = np.array([[3, 1, 3, 2, 3, 1], [0, 5, 0, 5, 0, 0]], np.float32)  # equal values


@pytest.mark.parametrize("k", [0, 1, 4, 6])
@pytest.mark.parametrize("sorted_", [True, False])
def test_top_k_v2(k, sorted_):
    """TOPK_V2 always sorts, which sorted=false (any order) allows too."""
    g = graph(x=TIES.shape)
    g.const("k", np.int32(k))
    g.node("y", "TopKV2", ["x", "k"], T=F32, sorted=sorted_)
    check(g, {"x": TIES}, list(tf_top_k(TIES, k)), ["TOPK_V2"], outputs=["y", "y:1"])


@pytest.mark.parametrize("dtype", [np.dtype(np.int8), np.dtype(np.int32), np.dtype(np.int64)])
def test_top_k_v2_of_integers(dtype):
    x = rng().integers(-100, 100, (2, 3, 7)).astype(dtype)
    x[0, 0, :] = np.iinfo(dtype).min  # a row of ties at the extreme
    g = graph(x=(x.shape, dtype))
    g.const("k", np.int32(3))
    g.node("y", "TopKV2", ["x", "k"], T=dtype)
    check(g, {"x": x}, list(tf_top_k(x, 3)), ["TOPK_V2"], outputs=["y", "y:1"])


def test_top_k_v2_int64_indices_come_from_a_cast():
    x = floats(rng(), 3, 5)
    g = graph(x=x.shape)
    g.const("k", np.int64(2))
    g.node("y", "TopKV2", ["x", "k"], T=F32, Tk=np.dtype(np.int64),
           index_type=np.dtype(np.int64))
    values, idx = tf_top_k(x, 2)
    check(g, {"x": x}, [values, idx.astype(np.int64)], ["TOPK_V2", "CAST"],
          outputs=["y", "y:1"])


@pytest.mark.parametrize("k, message", [(6, r"k = 6 must lie in \[0, 5\]"),
                                        (-1, r"k = -1 must lie in \[0, 5\]")])
def test_top_k_v2_refuses_k_outside_the_row(k, message):
    g = graph(x=(3, 5))
    g.const("k", np.int32(k))
    g.node("y", "TopKV2", ["x", "k"], T=F32)
    with pytest.raises(ShapeError, match=r"^node 'y' \(TopKV2\): " + message):
        run(g, {"x": floats(rng(), 3, 5)}, ["y"])


def lrn_reference(x, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5):
    """tf.nn.local_response_normalization (nn_ops.cc "LRN"): sqr_sum[a, b, c, d] =
    sum(input[a, b, c, d - depth_radius : d + depth_radius + 1] ** 2);
    output = input / (bias + alpha * sqr_sum) ** beta. Defaults as in the op definition."""
    x64 = x.astype(np.float64)
    sq = np.stack([np.sum(x64[..., max(0, d - depth_radius):d + depth_radius + 1] ** 2, -1)
                   for d in range(x.shape[-1])], axis=-1)
    return (x64 / (bias + alpha * sq) ** beta).astype(np.float32)


@pytest.mark.parametrize("attrs", [{}, dict(depth_radius=2, bias=2.0, alpha=1e-4, beta=0.75),
                                   dict(depth_radius=1, bias=0.5, alpha=0.3, beta=1.0)],
                         ids=["defaults", "alexnet", "beta1"])
def test_lrn(attrs):
    x = floats(rng(), 2, 3, 2, 9, lo=-3.0, hi=3.0)
    g = graph(x=x.shape)
    g.node("y", "LRN", ["x"], T=F32, **attrs)
    check(g, {"x": x}, lrn_reference(x, **attrs), ["LOCAL_RESPONSE_NORMALIZATION"],
          rtol=2e-6)


@pytest.mark.parametrize("shape, dtype, error, message", [
    ((2, 9), F32, ShapeError, r"input 0 \('x', the input\) has shape \[2, 9\]; its rank must "
     "be 4"),
    ((1, 2, 2, 9), np.dtype(np.float64), DTypeError, r"input 0 \('x', the input\) is float64; "
     "LRN takes float32 there"),
])
def test_lrn_refuses_what_tflite_cannot_run(shape, dtype, error, message):
    g = graph(x=(shape, dtype))
    g.node("y", "LRN", ["x"], T=dtype)
    with pytest.raises(error, match=rf"^node 'y' \(LRN\): {message}"):
        run(g, {"x": np.zeros(shape, dtype)}, ["y"])
