"""ADD / SUB / MUL, activations and SOFTMAX against LiteRT's reference kernels."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError, UnsupportedOpError

from .oracle import assert_matches_litert, rand, run_edgelite
from .tflite_builder import single_op_model

BROADCASTS = [
    ((2, 3, 4), (2, 3, 4)),
    ((2, 3, 4), (4,)),
    ((2, 1, 4), (1, 3, 1)),
    ((1, 5, 5, 3), (3,)),
    ((3,), ()),
    ((2, 1, 3, 1, 2), (1, 4, 1, 5, 1)),
]


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("a_shape,b_shape", BROADCASTS)
def test_binary_broadcast(rng, op, a_shape, b_shape):
    a, b = rand(rng, a_shape), rand(rng, b_shape)
    out_shape = np.broadcast_shapes(a_shape, b_shape)
    assert_matches_litert(single_op_model(op, [a_shape, b_shape], out_shape), [a, b])


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("act", ["RELU", "RELU6", "RELU_N1_TO_1"])
def test_binary_activation(rng, op, act):
    a, b = rand(rng, (4, 5), low=-4, high=4), rand(rng, (5,), low=-4, high=4)
    model = single_op_model(op, [a.shape, b.shape], (4, 5), fused_activation_function=act)
    assert_matches_litert(model, [a, b])


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_binary_integers(rng, op, dtype):
    a = rand(rng, (3, 4), dtype, low=-1000, high=1000)
    b = rand(rng, (4,), dtype, low=-1000, high=1000)
    model = single_op_model(op, [a.shape, b.shape], (3, 4), dtype=dtype)
    assert_matches_litert(model, [a, b])


def test_binary_constant_operand(rng):
    a = rand(rng, (2, 3))
    model = single_op_model("ADD", [a.shape, 1], (2, 3), consts={1: rand(rng, (3,))})
    assert_matches_litert(model, [a])


def test_binary_incompatible_shapes(rng):
    model = single_op_model("ADD", [(2, 3), (4,)], (2, 3))
    with pytest.raises(ShapeError, match=r"operator 0 \(ADD.*\[2, 3\] and \[4\]"):
        run_edgelite(model, [rand(rng, (2, 3)), rand(rng, (4,))])


@pytest.mark.parametrize("act", ["TANH", "SIGN_BIT"])
def test_unsupported_fused_activation(rng, act):
    model = single_op_model("ADD", [(2,), (2,)], (2,), fused_activation_function=act)
    with pytest.raises(UnsupportedOpError, match=f"fused activation {act}"):
        run_edgelite(model, [rand(rng, (2,)), rand(rng, (2,))])


@pytest.mark.parametrize("op", ["RELU", "RELU6", "RELU_N1_TO_1", "TANH", "LOGISTIC"])
def test_activation(rng, op):
    x = rand(rng, (2, 3, 50), low=-10, high=10)
    assert_matches_litert(single_op_model(op, [x.shape], x.shape), [x])


def test_logistic_tails(rng):
    # Both reference cut-offs: e^x below -9, exactly 1 above 16.619...
    x = np.concatenate([np.linspace(-120, 120, 481), [-9.0, -9.0001, 16.619047, 16.62, 0.0],
                        rand(rng, (100,), low=-20, high=20)]).astype(np.float32)
    (out,) = assert_matches_litert(single_op_model("LOGISTIC", [x.shape], x.shape), [x],
                                   rtol=1e-6, atol_factor=0)
    assert out[x > 16.62].min() == 1.0


@pytest.mark.parametrize("beta", [1.0, 0.5, 2.7])
@pytest.mark.parametrize("shape", [(1, 10), (3, 4, 7), (5,)])
def test_softmax(rng, beta, shape):
    x = rand(rng, shape, low=-5, high=5)
    assert_matches_litert(single_op_model("SOFTMAX", [shape], shape, beta=beta), [x])
