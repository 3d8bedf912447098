"""SOFTMAX and LOG_SOFTMAX against LiteRT's reference kernels (and its default kernels), a
beta that is not finite refused; int8 / uint8 SOFTMAX bit-exact with both LiteRT kernel
sets (they differ: fixed point in the reference kernels, a float table in the optimized
ones)."""

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, ModelFormatError

from ..op_models import check_op, check_op_default
from tests.interpreter.tflite_builder import QuantModel
from tests.support import (assert_bit_exact, assert_matches_litert, assert_native_steps, full_range,
                           rand, random_qparams)
from ..loader.test_model import _one_line
from ..tflite_builder import ModelBuilder, single_op_model

F32 = np.float32


@pytest.mark.parametrize("beta", [1.0, 0.5, 2.7])
@pytest.mark.parametrize("shape", [(1, 10), (3, 4, 7), (5,)])
def test_softmax(rng, beta, shape):
    x = rand(rng, shape, low=-5, high=5)
    assert_matches_litert(single_op_model("SOFTMAX", [shape], shape, beta=beta), [x])


@pytest.mark.parametrize("shape", [(1, 10), (3, 4, 7), (5,)])
def test_log_softmax(rng, shape):
    x = rand(rng, shape, low=-10, high=10)
    check_op("LOG_SOFTMAX", [x], [(shape, F32)])


@pytest.mark.parametrize("op,options,low,high", [
    ("LOG_SOFTMAX", {}, -10, 10),
])
def test_against_default_kernels(rng, op, options, low, high):
    # LiteRT's optimized kernels (Eigen / XNNPACK) round differently from its reference
    # kernels: still within rtol 1e-5 relative to the tensor's magnitude.
    x = rand(rng, (4, 64), low=low, high=high)
    check_op_default(op, [x], [(x.shape, F32)], **options)


@pytest.mark.parametrize("beta", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("dtype", [np.float32, np.int8])
def test_softmax_beta_must_be_finite(beta, dtype):
    b = ModelBuilder()
    q = {} if dtype == np.float32 else {"scale": 0.1, "zero_point": 0}
    x = b.tensor("x", (1, 5), dtype, **q)
    q = {} if dtype == np.float32 else {"scale": 1 / 256, "zero_point": -128}
    y = b.tensor("probs", (1, 5), dtype, **q)
    b.op("SOFTMAX", [x], [y], beta=beta)
    interp = Interpreter(model_content=b.build([x], [y]))
    with pytest.raises(ModelFormatError) as info:
        interp.allocate_tensors()
    assert _one_line(info) == (f"operator 0 (SOFTMAX, output 'probs'): beta is {beta}; "
                               "SOFTMAX needs a finite beta")


# --------------------------------------------------------------------------- int8 / uint8


def softmax_model(dtype, shape, q_in, beta):
    m = QuantModel()
    x = m.input("x", shape, dtype, *q_in)
    y = m.output("y", shape, dtype, 1 / 256, -128 if dtype == np.int8 else 0)
    m.op("SOFTMAX", [x], [y], version=2, beta=beta)
    return m.build()


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("shape", [(64, 10), (4, 3, 100), (7, 1), (2, 1001)])
@pytest.mark.parametrize("beta", [1.0, 0.5])
def test_quantized_softmax(rng, dtype, shape, beta):
    q_in = random_qparams(rng, dtype, 0.02, 0.2)
    assert_bit_exact(softmax_model(dtype, shape, q_in, beta), [full_range(rng, shape, dtype)])


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("shape", [(4, 3, 100), (1, 1001)])
def test_quantized_softmax_is_a_native_step(rng, dtype, shape):
    # one SOFTMAX of the default set's float table (the reference set's gemmlowp kernel
    # has no C kernel), run by the C loop (native/steps.c) at 1 and 2 threads (too small
    # to split): the same bytes as the numpy backend and LiteRT
    q_in = random_qparams(rng, dtype, 0.02, 0.2)
    assert_native_steps(softmax_model(dtype, shape, q_in, 1.0),
                        [full_range(rng, shape, dtype)], steps=1, kernels=("default",))


def test_softmax_step_refuses_short_buffers():
    from edgelite.interpreter import native
    if not native.built():
        pytest.skip("native kernels not built")
    bind = native.module.softmax_step
    x, out, table = np.zeros((3, 10), np.int8), np.zeros((3, 10), np.int8), np.ones(256, np.float32)
    args = (x, out, 0, 10, table, 1 / 256, -128, 0, 3)
    assert bind(*args, np.zeros(10, np.float32)) is not None
    with pytest.raises(ValueError, match="softmax_step: the scratch holds 36 bytes, needs 40"):
        bind(*args, np.zeros(9, np.float32))
    with pytest.raises(ValueError, match="softmax_step: the table holds 1020 bytes, needs 1024"):
        bind(x, out, 0, 10, table[1:].copy(), *args[5:], np.zeros(10, np.float32))
    with pytest.raises(ValueError, match="softmax_step: the input holds 30 bytes, needs 40"):
        bind(*args[:7], 0, 4, np.zeros(10, np.float32))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_softmax_small_and_large_input_scale(rng, dtype):
    for scale in (0.001, 0.5):
        q_in = (scale, 0 if dtype == np.int8 else 128)
        x = full_range(rng, (50, 12), dtype)
        assert_bit_exact(softmax_model(dtype, x.shape, q_in, 1.0), [x])
