"""kernels/common/native_conv_blas.py, native/conv_blas.c and native/gemm_f32.c: a one-group
float CONV_2D as one native step whose blocks of output pixels (and, for few blocks, panels
of output channels) run on the C pool, each on gemm_f32.c's packed-panel tiles (AVX2 + FMA)
or numpy's sgemm -- the same bits at any thread count, within float rounding of the numpy
kernel and of LiteRT's reference kernel."""

from __future__ import annotations

import platform

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


@pytest.fixture(params=["packed", "sgemm"])
def product(request, monkeypatch):
    """The blocks' products on gemm_f32.c's tiles (where the CPU has AVX2 + FMA: asserted
    on x86-64) or on numpy's sgemm."""
    if request.param == "sgemm":
        monkeypatch.setattr(native_conv_blas, "packed", lambda: False)
    elif platform.machine() in ("x86_64", "AMD64"):
        assert native_conv_blas.packed(), "gemm_f32.c's AVX2 + FMA tile is not available"
    return request.param


@needs_native
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("with_bias", [True, False])
def test_step_same_bits_at_any_thread_count_and_close_to_numpy(case, with_bias, product):
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
def test_without_sgemm_or_packed_tiles_the_numpy_kernel_runs(monkeypatch):
    monkeypatch.setattr(native_conv_blas, "_ready", False)
    monkeypatch.setattr(native_conv_blas, "packed", lambda: False)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 8, 8, 4)).astype(np.float32)
    w = rng.standard_normal((6, 3, 3, 4)).astype(np.float32)
    model = conv_model(x.shape, w, None)
    interp = Interpreter(model_content=model, native=True)
    interp.allocate_tensors()
    assert not any(isinstance(s[1], native.module.NativeStep) for s in interp._steps)
    np.testing.assert_array_equal(_run(model, x, native=True), _run(model, x, native=False))


@needs_native
def test_packed_panels_hold_the_filter_16_columns_at_a_time():
    rng = np.random.default_rng(3)
    for k, o in ((5, 16), (3, 37), (1, 1), (7, 48)):
        w = rng.standard_normal((k, o)).astype(np.float32)
        size = native.module.gemm_f32_packed_size(k, o)
        panels = -(-o // 16)
        assert size == panels * 16 * k
        out = np.full(size, np.nan, np.float32)
        native.module.pack_f32_panels(np.ascontiguousarray(w.T), k, o, out)  # (o, k) rows
        want = np.zeros((k, panels * 16), np.float32)
        want[:, :o] = w
        np.testing.assert_array_equal(out.reshape(panels, k, 16),
                                      want.reshape(k, panels, 16).transpose(1, 0, 2))
    with pytest.raises(ValueError, match="the panels"):
        native.module.pack_f32_panels(w, 7, 48, np.zeros(10, np.float32))


@needs_native
@pytest.mark.parametrize("fma", [True, False], ids=["fma", "baseline"])
def test_packed_tiles_every_tail_within_rounding_at_any_thread_count(fma, request):
    # rows not a multiple of 6 (the tile's), channels not of 16 (a panel's), 1 channel
    if fma and not native.module.gemm_f32_fma():
        if platform.machine() in ("x86_64", "AMD64"):
            pytest.fail("gemm_f32.c's AVX2 + FMA tile is not available")
        pytest.skip("not an x86-64 CPU: only the plain C tile exists")
    before = native.module.allow_avx2(fma)
    request.addfinalizer(lambda: native.module.allow_avx2(before))
    assert native.module.gemm_f32_fma() == fma
    rng = np.random.default_rng(5)
    for n, h, w, c, o in ((1, 1, 7, 3, 1), (1, 13, 11, 9, 37), (2, 17, 10, 24, 300),
                          (1, 5, 5, 70, 16)):
        x = rng.standard_normal((n, h, w, c)).astype(np.float32)
        filt = rng.standard_normal((c, o)).astype(np.float32)
        panels = np.empty(native.module.gemm_f32_packed_size(c, o), np.float32)
        native.module.pack_f32_panels(np.ascontiguousarray(filt.T), c, o, panels)
        exact = (x.reshape(-1, c).astype(np.float64) @ filt.astype(np.float64))
        outs = []
        for threads in (1, 2, 3):
            out = np.full((n, h, w, o), np.nan, np.float32)
            native.module.conv_blas_step(x, panels, None, out, None, (n, h, w, c, o),
                                         (1, 1, 1, 1, 1, 1, 0, 0, h, w), 0, 0.0, 0.0,
                                         threads, True)()
            outs.append(out)
        for out in outs[1:]:
            np.testing.assert_array_equal(out.view(np.int32), outs[0].view(np.int32))
        bound = c * np.finfo(np.float32).eps * (np.abs(x.reshape(-1, c)) @ np.abs(filt))
        assert np.all(np.abs(outs[0].reshape(-1, o) - exact) <= bound)


@needs_native
def test_packed_step_needs_no_sgemm_and_checks_the_panels(request):
    rng = np.random.default_rng(2)
    x, out = rng.standard_normal((1, 2, 2, 3)).astype(np.float32), \
        np.zeros((1, 2, 2, 20), np.float32)
    filt = rng.standard_normal((3, 20)).astype(np.float32)
    window = (1, 1, 1, 1, 1, 1, 0, 0, 2, 2)
    size = native.module.gemm_f32_packed_size(3, 20)    # 2 panels of 16: 96 values
    assert size == 96
    panels = np.empty(size, np.float32)
    native.module.pack_f32_panels(np.ascontiguousarray(filt.T), 3, 20, panels)
    assert native_conv_blas.available()
    found = native_conv_blas._find_sgemm()
    native.module.set_sgemm(0, False)
    request.addfinalizer(lambda: native.module.set_sgemm(*found))
    with pytest.raises(ValueError, match="no sgemm"):
        native.module.conv_blas_step(x, filt, None, out, None, (1, 2, 2, 3, 20), window, 0,
                                     0.0, 0.0, 1)
    native.module.conv_blas_step(x, panels, None, out, None, (1, 2, 2, 3, 20), window, 0,
                                 0.0, 0.0, 1, True)()
    np.testing.assert_allclose(out.reshape(4, 20), x.reshape(4, 3) @ filt, rtol=1e-5,
                               atol=1e-5)
    with pytest.raises(ValueError, match="the filter holds 240 bytes, needs 384"):
        native.module.conv_blas_step(x, np.zeros(60, np.float32), None, out, None,
                                     (1, 2, 2, 3, 20), window, 0, 0.0, 0.0, 1, True)
    with pytest.raises(ValueError, match="bad geometry"):
        native.module.conv_blas_step(x, np.zeros(size, np.float32), None, out, None,
                                     (1, 2, 2, 3, 20), window, 3, 0.0, 0.0, 1, True)
