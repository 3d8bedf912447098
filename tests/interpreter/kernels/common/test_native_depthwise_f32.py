"""The native float32 DEPTHWISE_CONV_2D (native/depthwise_f32.c) against the numpy kernel:
the same sums in the same order, so the same floats."""

from __future__ import annotations

import os

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, native

from ..test_conv import ACTIVATIONS, conv_model

needs_native = pytest.mark.skipif(
    not native.built() and not os.environ.get("CI"),
    reason="native kernels not built (python setup.py build_ext --inplace)")


def _run(model: bytes, x: np.ndarray, **kw) -> np.ndarray:
    interp = Interpreter(model_content=model, **kw)
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    return interp.get_tensor(interp.get_output_details()[0]["index"]).copy()


class _Calls:
    """Counts the C kernel's calls (eval) and steps (run loop) the interpreters bind."""

    def __init__(self, monkeypatch):
        self.count = 0
        for name in ("depthwise_f32", "depthwise_f32_step"):
            real = getattr(native.module, name)
            monkeypatch.setattr(native.module, name, self._spy(real))

    def _spy(self, real):
        def call(*args):
            self.count += 1
            return real(*args)
        return call


def _random_depthwise(seed: int):
    rng = np.random.default_rng(seed)
    # channel counts around the C kernel's 32-channel blocks, multipliers 1-3
    c = int(rng.choice([1, 3, 8, 31, 32, 33, 70]))
    mult = int(rng.integers(1, 4)) if c < 40 else 1
    kh, kw = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    if seed == 0:
        kh, kw = 9, 9  # 81 taps: the heap tap list
    dil = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    h = int(rng.integers(kh * dil[0], 24))
    w = int(rng.integers(kw * dil[1], 24))
    x = rng.standard_normal((int(rng.integers(1, 3)), h, w, c)).astype(np.float32)
    filt = rng.standard_normal((1, kh, kw, c * mult)).astype(np.float32)
    bias = rng.standard_normal(c * mult).astype(np.float32) if seed % 4 else None
    model = conv_model(x.shape, filt, bias, op="DEPTHWISE_CONV_2D",
                       padding=str(rng.choice(["SAME", "VALID"])),
                       stride=(int(rng.integers(1, 4)), int(rng.integers(1, 4))),
                       dilation=dil, act=str(rng.choice(ACTIVATIONS)), depth_multiplier=mult)
    return model, x


@pytest.fixture(params=[True, False], ids=["avx2", "baseline"])
def avx2(request):
    """The AVX2 build of the C loops where the CPU has it, then the baseline build."""
    if not native.built():
        pytest.skip("native kernels not built")
    if request.param and not native.module.has_avx2():
        pytest.skip("no AVX2 here")
    before = native.module.allow_avx2(request.param)
    yield request.param
    native.module.allow_avx2(before)


@needs_native
@pytest.mark.parametrize("seed", range(32))
def test_float_depthwise_sweep_native_equals_numpy(seed, avx2, monkeypatch):
    """Random float depthwise convolutions (channels, multipliers, kernels up to 9x9,
    strides, dilations, paddings, activations, with and without bias) on 1-4 threads, every
    op split into tasks over the C pool: the C kernel runs and gives exactly the numpy
    kernel's floats."""
    from edgelite.interpreter.kernels.common import native_split

    monkeypatch.setattr(native_split, "SPLIT_MACS", 2)
    model, x = _random_depthwise(seed)
    calls = _Calls(monkeypatch)
    for threads in (1, 2, 3, 4):
        want = _run(model, x, native=False, num_threads=threads)
        before = calls.count
        got = _run(model, x, native=True, num_threads=threads)
        assert calls.count > before, "the native float depthwise kernel did not run"
        np.testing.assert_array_equal(got, want, err_msg=f"{threads} threads")


@needs_native
def test_float_depthwise_runs_in_the_run_loop_and_splits(monkeypatch):
    """The op is a bound native step on one thread and on two, where its rows are split
    into 4 tasks over the C pool inside the step: the numpy kernel's floats either way."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 64, 64, 64)).astype(np.float32)
    filt = rng.standard_normal((1, 3, 3, 64)).astype(np.float32)
    bias = rng.standard_normal(64).astype(np.float32)
    model = conv_model(x.shape, filt, bias, op="DEPTHWISE_CONV_2D", act="RELU6",
                       depth_multiplier=1)
    want = _run(model, x, native=False)
    steps = []
    real_step = native.module.depthwise_f32_step
    monkeypatch.setattr(native.module, "depthwise_f32_step",
                        lambda *a: steps.append(a[-2:]) or real_step(*a))
    monkeypatch.setattr(native.module, "depthwise_f32", None)  # no eval, no Python slices
    np.testing.assert_array_equal(_run(model, x, native=True, num_threads=1), want)
    np.testing.assert_array_equal(_run(model, x, native=True, num_threads=2), want)
    assert steps == [(1, 1), (2, 4)]  # (threads, tasks)


@needs_native
def test_float_depthwise_entry_refuses_short_buffers():
    x = np.zeros((1, 4, 4, 2), np.float32)
    w = np.zeros((9, 2), np.float32)
    out = np.zeros((1, 4, 4, 2), np.float32)
    args = (x, (1, 4, 4, 2, 1), (3, 3, 1, 1, 1, 1, 1, 1, 4, 4), w, None, False, 0.0, 0.0)
    native.module.depthwise_f32(*args, out, 0, 4)
    with pytest.raises(ValueError, match="the output"):
        native.module.depthwise_f32(*args, out[:, :3].copy(), 0, 4)
    with pytest.raises(ValueError, match="the filter"):
        native.module.depthwise_f32(*args[:3], w[:8].copy(), *args[4:], out, 0, 4)
    with pytest.raises(ValueError, match="bad geometry"):
        native.module.depthwise_f32(*args, out, 0, 5)
    for threads, tasks in ((0, 1), (65, 2), (2, 0)):
        with pytest.raises(ValueError, match="bad geometry"):
            native.module.depthwise_f32_step(*args, out, threads, tasks)
