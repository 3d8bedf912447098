"""DEQUANTIZE of float16, int8 / uint8 / int16 and per-channel int8 constants against
LiteRT's reference kernels; int8 / uint8 bit-exact with both LiteRT kernel sets."""

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from tests.support import (assert_bit_exact, assert_close, assert_matches_litert, full_range, rand,
                          random_qparams)

from ..tflite_builder import ModelBuilder
from .test_quantize import DTYPES, quantize_model


def test_dequantize_float16(rng):
    w = rand(rng, (4, 5)).astype(np.float16)
    b = ModelBuilder()
    x = b.tensor("x", (4, 5))
    wt = b.tensor("w16", w.shape, np.float16, data=w)
    wf = b.tensor("w32", w.shape)
    y = b.tensor("y", (4, 5))
    b.op("DEQUANTIZE", [wt], [wf])
    b.op("ADD", [x, wf], [y])
    model = b.build([x], [y])
    xv = rand(rng, (4, 5))
    (out,) = assert_matches_litert(model, [xv])
    assert_close(out, xv + w.astype(np.float32))
    # The all-constant DEQUANTIZE is evaluated once in allocate_tensors().
    interp = Interpreter(model_content=model)
    interp.allocate_tensors()
    assert len(interp._steps) == 1


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16])
def test_dequantize_per_tensor(rng, dtype):
    b = ModelBuilder()
    info = np.iinfo(dtype)
    zp = 0 if dtype == np.int16 else 5
    x = b.tensor("x", (3, 7), dtype, scale=0.037, zero_point=zp)
    y = b.tensor("y", (3, 7))
    b.op("DEQUANTIZE", [x], [y])
    xv = rng.integers(info.min, info.max, size=(3, 7), endpoint=True).astype(dtype)
    assert_matches_litert(b.build([x], [y]), [xv], rtol=0, atol_factor=0)


def test_dequantize_per_channel_constant(rng):
    scales = np.array([0.1, 0.02, 0.5], np.float32)
    q = rng.integers(-127, 128, size=(3, 4)).astype(np.int8)
    b = ModelBuilder()
    x = b.tensor("x", (3, 4))
    wq = b.tensor("wq", q.shape, np.int8, data=q, scale=scales, zero_point=[0, 0, 0],
                  quantized_dimension=0)
    wf = b.tensor("wf", q.shape)
    y = b.tensor("y", q.shape)
    b.op("DEQUANTIZE", [wq], [wf])
    b.op("ADD", [x, wf], [y])
    xv = np.zeros((3, 4), np.float32)
    (out,) = assert_matches_litert(b.build([x], [y]), [xv], rtol=0, atol_factor=0)
    assert_close(out, q.astype(np.float32) * scales[:, None])


# --------------------------------------------------------------------------- int8 / uint8


@pytest.mark.parametrize("dtype", DTYPES)
def test_dequantize(rng, dtype):
    q = random_qparams(rng, dtype)
    x = full_range(rng, (300,), dtype)
    assert_bit_exact(quantize_model(dtype, np.float32, x.shape, q, ()), [x])
