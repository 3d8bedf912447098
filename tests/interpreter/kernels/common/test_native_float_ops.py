"""The native float32 element-wise kernels (native/activations_f32.c): LOGISTIC against
LiteRT's reference kernel and the numpy kernel, the float convolutions' bias + activation
stage against the numpy stage."""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.interpreter import native

from ..test_conv import ACTIVATIONS, conv_model
from .test_native_depthwise_f32 import _run, avx2, needs_native  # noqa: F401 (a fixture)


def _logistic_model(shape):
    from tests.interpreter.tflite_builder import ModelBuilder

    b = ModelBuilder()
    x, y = b.tensor("x", shape), b.tensor("y", shape)
    b.op("LOGISTIC", [x], [y])
    return b.build([x], [y])


def _logistic_input(rng, shape):
    x = rng.uniform(-20, 20, shape).astype(np.float32)
    flat = x.reshape(-1)  # both cut-offs and their neighbours, infinities, NaN
    edges = np.float32([16.619047164916992188, -9.0, np.inf, -np.inf, np.nan, 0.0, -0.0])
    near = np.concatenate([edges[:2], np.nextafter(edges[:2], np.float32(np.inf)),
                           np.nextafter(edges[:2], np.float32(-np.inf))])
    flat[:len(edges)] = edges
    flat[len(edges):len(edges) + len(near)] = near
    return x


@needs_native
@pytest.mark.parametrize("shape,threads", [((1, 5, 7, 3), 1), ((1, 1, 1, 2048), 2)])
def test_float_logistic_native(shape, threads, monkeypatch):
    """The C LOGISTIC runs on tensors up to NATIVE_LOGISTIC_MAX values and equals LiteRT's
    reference kernel (std::exp) exactly; the numpy kernel (numpy's exp, measured up to 4 ulp
    from std::exp here; LiteRT's default kernels up to 2048 in e^x's range) stays within 4
    ulp, with the cut-offs' exact values (1 above the upper one, NaN kept) identical."""
    from tests.support.runtimes import run_litert

    x = _logistic_input(np.random.default_rng(3), shape)
    model = _logistic_model(shape)
    calls = []
    for name in ("logistic_f32", "logistic_f32_step"):
        real = getattr(native.module, name)
        monkeypatch.setattr(native.module, name,
                            lambda *a, real=real, name=name: calls.append(name) or real(*a))
    want = _run(model, x, native=False, num_threads=threads)
    got = _run(model, x, native=True, num_threads=threads)
    assert calls, "the native LOGISTIC did not run"
    np.testing.assert_array_max_ulp(got, want, maxulp=4)
    fixed = ~np.isfinite(x) | (x > 16.619047164916992188)
    np.testing.assert_array_equal(got[fixed], want[fixed])
    assert np.isnan(got.reshape(-1)[4]) and got.reshape(-1)[2] == 1.0
    np.testing.assert_array_equal(got, run_litert(model, [x], "reference")[0])


@needs_native
@pytest.mark.parametrize("seed", range(16))
def test_float_conv_output_stage_native_equals_numpy(seed, avx2, monkeypatch):
    """Random float CONV_2Ds (pointwise and im2col strategies, strides,
    paddings, activations, with and without bias) on 1 and 2 threads: the C
    bias + activation stage runs and gives exactly the numpy stage's floats."""
    rng = np.random.default_rng(100 + seed)
    c, o = int(rng.integers(1, 20)), int(rng.integers(1, 40))
    kh, kw = (1, 1) if seed % 4 == 0 else (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    size = 70 if seed == 1 else int(rng.integers(6, 20))
    x = rng.standard_normal((int(rng.integers(1, 3)), size, size, c)).astype(np.float32)
    filt = rng.standard_normal((o, kh, kw, c)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32) if seed % 3 else None
    pointwise = seed % 4 == 0
    model = conv_model(x.shape, filt, bias, padding="VALID" if pointwise else
                       str(rng.choice(["SAME", "VALID"])),
                       stride=(1, 1) if pointwise else (int(rng.integers(1, 3)),) * 2,
                       act=str(rng.choice(ACTIVATIONS)))
    calls = []
    real = native.module.bias_act_f32
    monkeypatch.setattr(native.module, "bias_act_f32",
                        lambda *a: calls.append(1) or real(*a))
    for threads in (1, 2):
        want = _run(model, x, native=False, num_threads=threads)
        got = _run(model, x, native=True, num_threads=threads)
        np.testing.assert_array_equal(got, want, err_msg=f"{threads} threads")
    assert calls, "the native output stage did not run"


@needs_native
def test_large_float_logistic_keeps_numpy(monkeypatch):
    """Past NATIVE_LOGISTIC_MAX values the numpy kernel (vectorized exp) runs: the C
    kernel is not bound, and the outputs equal the numpy backend's."""
    from edgelite.interpreter.kernels.activations import NATIVE_LOGISTIC_MAX

    shape = (1, 1, 1, NATIVE_LOGISTIC_MAX + 1)
    x = _logistic_input(np.random.default_rng(4), shape)
    calls = []
    for name in ("logistic_f32", "logistic_f32_step"):
        monkeypatch.setattr(native.module, name, lambda *a: calls.append(a))
    got = _run(_logistic_model(shape), x, native=True)
    assert not calls
    np.testing.assert_array_equal(got, _run(_logistic_model(shape), x, native=False))
