"""FULLY_CONNECTED against LiteRT's reference kernels."""

import pytest

from edgelite.interpreter import ShapeError

from .oracle import assert_close, assert_matches_litert, rand, run_edgelite
from .tflite_builder import ModelBuilder


def fc_model(x_shape, w, bias, out_shape, *, const_weights=True, **options):
    b = ModelBuilder()
    x = b.tensor("x", x_shape)
    graph_inputs = [x]
    if const_weights:
        wt = b.tensor("w", w.shape, data=w)
    else:
        wt = b.tensor("w", w.shape)
        graph_inputs.append(wt)
    inputs = [x, wt]
    if bias is not None:
        inputs.append(b.tensor("b", bias.shape, data=bias))
    else:
        inputs.append(-1)
    y = b.tensor("y", out_shape)
    b.op("FULLY_CONNECTED", inputs, [y], **options)
    return b.build(graph_inputs, [y])


@pytest.mark.parametrize("act", ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"])
def test_fc_activation(rng, act):
    x = rand(rng, (3, 10), low=-2, high=2)
    w = rand(rng, (7, 10))
    bias = rand(rng, (7,))
    model = fc_model(x.shape, w, bias, (3, 7), fused_activation_function=act)
    assert_matches_litert(model, [x])


def test_fc_without_bias(rng):
    x = rand(rng, (2, 6))
    w = rand(rng, (4, 6))
    assert_matches_litert(fc_model(x.shape, w, None, (2, 4)), [x])


def test_fc_flattens_input(rng):
    # [2, 3, 4] with input depth 12 -> batch = 24 / 12 = 2 rows.
    x = rand(rng, (2, 3, 4))
    w = rand(rng, (5, 12))
    bias = rand(rng, (5,))
    (out,) = assert_matches_litert(fc_model(x.shape, w, bias, (2, 5)), [x])
    assert out.shape == (2, 5)


def test_fc_keep_num_dims(rng):
    x = rand(rng, (2, 3, 4))
    w = rand(rng, (5, 4))
    bias = rand(rng, (5,))
    model = fc_model(x.shape, w, bias, (2, 3, 5), keep_num_dims=True)
    (out,) = assert_matches_litert(model, [x])
    assert out.shape == (2, 3, 5)


def test_fc_runtime_weights(rng):
    x = rand(rng, (3, 8))
    w = rand(rng, (4, 8))
    bias = rand(rng, (4,))
    model = fc_model(x.shape, w, bias, (3, 4), const_weights=False)
    (out,) = run_edgelite(model, [x, w])
    assert_close(out, x @ w.T + bias)


def test_fc_bad_input_depth(rng):
    model = fc_model((2, 7), rand(rng, (3, 4)), None, (2, 3))
    with pytest.raises(ShapeError, match="FULLY_CONNECTED.*input depth 4"):
        run_edgelite(model, [rand(rng, (2, 7))])
