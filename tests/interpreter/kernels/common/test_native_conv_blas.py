"""kernels/common/native_conv_blas.py and native/conv_blas.c: a one-group float CONV_2D as
one native step whose blocks of output pixels (and, for few blocks, panels of output
channels) run on the C pool, each on numpy's sgemm -- the same bits at any thread count,
within float rounding of the numpy kernel and of LiteRT's reference kernel."""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, native
from edgelite.interpreter.kernels.common import native_conv_blas

from ..test_conv import conv_model
from .test_native_depthwise_f32 import _run, needs_native

CASES = [  # x shape, filter (O, KH, KW, C), padding, stride, dilation, activation
    ((1, 40, 40, 16), (24, 1, 1, 16), "VALID", (1, 1), (1, 1), "NONE"),    # pointwise
    ((2, 23, 17, 5), (7, 3, 3, 5), "SAME", (2, 1), (1, 1), "RELU6"),
    ((1, 9, 9, 64), (300, 3, 3, 64), "SAME", (1, 1), (1, 1), "RELU"),      # panels
    ((1, 30, 31, 3), (8, 5, 4, 3), "VALID", (1, 2), (2, 1), "RELU_N1_TO_1"),
    ((3, 7, 7, 12), (16, 7, 7, 12), "SAME", (1, 1), (1, 1), "NONE"),       # padding > input
    ((1, 60, 60, 8), (32, 1, 1, 8), "SAME", (2, 2), (1, 1), "NONE")]       # strided 1x1


@needs_native
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("with_bias", [True, False])
def test_step_same_bits_at_any_thread_count_and_close_to_numpy(case, with_bias):
    from tests.support.runtimes import run_litert
    assert native_conv_blas.available(), "numpy's sgemm was not found"
    x_shape, w_shape, padding, stride, dilation, act = CASES[case]
    rng = np.random.default_rng(case)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    bias = rng.standard_normal(w_shape[0]).astype(np.float32) if with_bias else None
    model = conv_model(x_shape, w, bias, padding=padding, stride=stride, dilation=dilation,
                       act=act)
    results = []
    for threads in (1, 2, 3):
        interp = Interpreter(model_content=model, native=True, num_threads=threads)
        interp.allocate_tensors()
        steps = [s for s in interp._steps if isinstance(s[1], native.module.NativeStep)]
        assert len(steps) == len(interp._steps) == 1
        results.append(_run(model, x, native=True, num_threads=threads))
    for got in results[1:]:
        np.testing.assert_array_equal(got.view(np.int32), results[0].view(np.int32))
    # |error| <= sqrt(K) * eps * sum |x * w| per output: the numpy kernel's single
    # product and LiteRT's reference sum in other orders
    k = w_shape[1] * w_shape[2] * w_shape[3]
    scale = np.sqrt(k) * np.finfo(np.float32).eps * 4 * k
    others = [_run(model, x, native=False)]
    if with_bias:  # LiteRT's reference CONV_2D requires a bias
        others.append(run_litert(model, [x], "reference")[0])
    for other in others:
        np.testing.assert_allclose(results[0], other, rtol=0, atol=scale)


@needs_native
def test_step_refuses_bad_arguments():
    assert native_conv_blas.available()
    bind = native.module.conv_blas_step
    block = native.module.conv_blas_block()
    x, w = np.zeros((1, 4, 4, 2), np.float32), np.zeros((18, 3), np.float32)
    out, scratch = np.zeros((1, 4, 4, 3), np.float32), np.zeros((1, block, 18), np.float32)
    window = (3, 3, 1, 1, 1, 1, 1, 1, 4, 4)
    assert bind(x, w, None, out, scratch, (1, 4, 4, 2, 3), window, False, 0.0, 0.0, 1)
    with pytest.raises(ValueError, match="bad geometry or threads"):
        bind(x, w, None, out, scratch, (1, 4, 4, 2, 3), window, False, 0.0, 0.0, 0)
    with pytest.raises(ValueError, match="bad geometry or threads"):
        bind(x, w, None, out, scratch, (1, 4, 4, 0, 3), window, False, 0.0, 0.0, 1)
    with pytest.raises(ValueError, match="the scratch holds"):
        bind(x, w, None, out, scratch, (1, 4, 4, 2, 3), window, False, 0.0, 0.0, 2)
    with pytest.raises(ValueError, match="only a 1x1, stride-1, unpadded filter"):
        bind(x, w, None, out, None, (1, 4, 4, 2, 3), window, False, 0.0, 0.0, 1)
    with pytest.raises(ValueError, match="the filter holds 216 bytes, needs 288"):
        bind(x, w, None, out, scratch, (1, 4, 4, 2, 4), window, False, 0.0, 0.0, 1)


@needs_native
def test_without_sgemm_the_numpy_kernel_runs(monkeypatch):
    monkeypatch.setattr(native_conv_blas, "_ready", False)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 8, 8, 4)).astype(np.float32)
    w = rng.standard_normal((6, 3, 3, 4)).astype(np.float32)
    model = conv_model(x.shape, w, None)
    interp = Interpreter(model_content=model, native=True)
    interp.allocate_tensors()
    assert not any(isinstance(s[1], native.module.NativeStep) for s in interp._steps)
    np.testing.assert_array_equal(_run(model, x, native=True), _run(model, x, native=False))
