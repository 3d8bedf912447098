"""int8 / uint8 AVERAGE_POOL_2D, MAX_POOL_2D and MEAN, bit-exact with both LiteRT kernel
sets."""

import numpy as np
import pytest

from .quant_oracle import QuantModel, assert_bit_exact, full_range, random_qparams


def out_size(size, k, stride, padding):
    return -(-size // stride) if padding == "SAME" else (size - k + stride) // stride


def pool_model(rng, op, dtype, x_shape, k, stride, padding, act="NONE", q=None):
    n, h, w, c = x_shape
    s, z = q or random_qparams(rng, dtype, 0.01, 0.1)
    m = QuantModel()
    x = m.input("x", x_shape, dtype, s, z)
    y = m.output("y", (n, out_size(h, k[0], stride[0], padding),
                       out_size(w, k[1], stride[1], padding), c), dtype, s, z)
    m.op(op, [x], [y], version=2, padding=padding, stride_h=stride[0], stride_w=stride[1],
         filter_height=k[0], filter_width=k[1], fused_activation_function=act)
    return m.build(), [full_range(rng, x_shape, dtype)]


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("k,stride,padding", [((2, 2), (2, 2), "VALID"), ((3, 3), (2, 2), "SAME"),
                                              ((3, 2), (1, 1), "SAME"), ((4, 4), (3, 2), "VALID")])
def test_pool(rng, op, dtype, k, stride, padding):
    model, feeds = pool_model(rng, op, dtype, (2, 9, 10, 8), k, stride, padding)
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("act", ["RELU", "RELU6", "RELU_N1_TO_1"])
def test_pool_activation(rng, op, dtype, act):
    q = (0.05, 0 if dtype == np.int8 else 128)
    model, feeds = pool_model(rng, op, dtype, (1, 8, 8, 4), (2, 2), (2, 2), "VALID", act, q)
    assert_bit_exact(model, feeds)


def mean_model(rng, dtype, x_shape, axes, keep_dims, q_in=None, q_out=None):
    s, z = q_in or random_qparams(rng, dtype, 0.01, 0.1)
    so, zo = q_out or random_qparams(rng, dtype, 0.005, 0.05)
    out_shape = tuple(1 if i in axes else d for i, d in enumerate(x_shape)) if keep_dims \
        else tuple(d for i, d in enumerate(x_shape) if i not in axes)
    m = QuantModel()
    x = m.input("x", x_shape, dtype, s, z)
    ax = m.const("axis", np.array(axes, np.int32), np.int32)
    y = m.output("y", out_shape, dtype, so, zo)
    m.op("MEAN", [x, ax], [y], version=2, keep_dims=keep_dims)
    return m.build(), [full_range(rng, x_shape, dtype)]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("x_shape,axes,keep_dims", [
    ((2, 7, 7, 16), (1, 2), True), ((2, 7, 7, 16), (1, 2), False), ((3, 5, 6), (2,), False),
    ((4, 10), (0,), True), ((2, 3, 4, 5), (1, 3), False), ((2, 8, 8, 3), (1, 2, 3), True),
])
def test_mean(rng, dtype, x_shape, axes, keep_dims):
    model, feeds = mean_model(rng, dtype, x_shape, axes, keep_dims)
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_mean_same_scale_ties(rng, dtype):
    # Equal input / output scale and 4 elements per mean: every quarter value appears.
    z = 0 if dtype == np.int8 else 128
    model, feeds = mean_model(rng, dtype, (64, 2, 2, 8), (1, 2), True, (0.1, z), (0.1, z))
    assert_bit_exact(model, feeds)
