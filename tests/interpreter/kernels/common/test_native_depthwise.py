"""kernels/common/native_depthwise.py: the native int8 / uint8 DEPTHWISE_CONV_2D (integer
taps, fused output stage; native/depthwise.c) equals the numpy kernel bit for bit --
random sweeps in every kernel set, rounding and thread count on each tile kernel (generic
C, SSE2, AVX2), with channel blocks and tails, depth multipliers, strides, dilations,
padding at every edge, uint8 filters with zero points, biases at the int32 limit so that
the accumulator wraps -- it runs as a native step, splitting its rows over the C pool's
threads inside the step where that is worth it."""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.interpreter.kernels import depthwise_conv
from edgelite.interpreter.kernels.common import native_depthwise, native_gemm, native_split

from ...test_native import _both_backends, needs_native
from .test_native_gemm import _sweep


def _count(monkeypatch, isa: int, split: bool = False) -> list:
    """Records each native depthwise kernel prepared from now on (True where its step ran
    as a native step), with tile kernel ``isa`` at best; ``split``: every op with several
    threads splits its rows (not only those worth it)."""
    made = []
    original = native_depthwise.native_depthwise

    def counted(*args, **kw):
        chosen = original(*args, **kw)
        if chosen is not None:
            made.append(chosen.record)
        return chosen

    monkeypatch.setattr(depthwise_conv, "native_depthwise", counted)
    monkeypatch.setattr(native_gemm, "ISA", isa)
    if split:  # any op of 2 multiply-adds or more splits over the C pool
        monkeypatch.setattr(native_split, "SPLIT_MACS", 2)
    return made


@needs_native
@pytest.mark.parametrize("seed", range(36))
def test_depthwise_native_sweep(seed, monkeypatch):
    """Random cases; every third one a 3x3 (the unrolled AVX2 tile), channel counts across
    the 16-channel blocks, biases near 2^31 in every sixth."""
    from ..test_conv import ACTIVATIONS, quant_conv_model

    made = _count(monkeypatch, isa=seed % 3, split=seed % 4 == 1)
    rng = np.random.default_rng(3000 + seed)
    dtype = (np.int8, np.uint8)[seed % 2]
    c = int(rng.integers(1, 40))
    mult = 1 if seed % 3 else int(rng.integers(1, 4))
    kh, kw = (3, 3) if seed % 3 == 1 else (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
    dil = (1, 1) if seed % 5 else (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    h = int(rng.integers(kh * dil[0], 17))
    w = int(rng.integers(kw * dil[1], 17))
    bias_range = (2**31 - 2**18, 2**31 - 1) if seed % 6 == 4 else (-5000, 5000)
    model, feeds = quant_conv_model(
        rng, dtype, (int(rng.integers(1, 3)), h, w, c), (1, kh, kw, c * mult),
        op="DEPTHWISE_CONV_2D", padding=str(rng.choice(["SAME", "VALID"])),
        stride=(int(rng.integers(1, 4)), int(rng.integers(1, 4))), dilation=dil,
        act=str(rng.choice(ACTIVATIONS)), per_channel=bool(seed % 3), bias=bool(seed % 7),
        bias_range=bias_range, axis=0 if dtype == np.uint8 and seed % 4 == 3 else None)
    _sweep(model, feeds, dtype, True, made, varied=bias_range[0] < 0)


@needs_native
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_depthwise_native_edges(dtype, monkeypatch):
    """SAME padding on all four edges with even kernels and strides 2 (pad_top / pad_left 0
    and 1), a kernel larger than the image, depth multipliers 7 and 5 (35
    outputs: two blocks and a tail), 1x1 kernels, 5x5 dilated, 625 taps (where the numpy
    kernel sums in float64): identical, and each op on one thread is a native step."""
    from ..test_conv import quant_conv_model

    made = _count(monkeypatch, isa=2)
    rng = np.random.default_rng(11)
    cases = [((1, 8, 9, 16), (1, 4, 2, 16), (2, 2), (1, 1)),
             ((2, 7, 6, 5), (1, 3, 4, 35), (1, 2), (1, 1)),
             ((1, 3, 3, 24), (1, 5, 5, 24), (1, 1), (1, 1)),
             ((1, 9, 11, 7), (1, 3, 3, 35), (2, 1), (1, 1)),
             ((1, 6, 6, 33), (1, 1, 1, 33), (1, 1), (1, 1)),
             ((1, 13, 12, 20), (1, 5, 5, 20), (1, 1), (2, 3)),
             ((1, 26, 27, 3), (1, 25, 25, 6), (1, 1), (1, 1))]
    for x_shape, w_shape, stride, dil in cases:
        model, feeds = quant_conv_model(rng, dtype, x_shape, w_shape, op="DEPTHWISE_CONV_2D",
                                        stride=stride, dilation=dil)
        _sweep(model, feeds, dtype, True, made)
    steps = []
    original = native_depthwise.NativeDepthwise.native_step
    monkeypatch.setattr(native_depthwise.NativeDepthwise, "native_step",
                        lambda self, i, o: steps.append(original(self, i, o)) or steps[-1])
    _both_backends(model, feeds, num_threads=1)
    assert len(steps) == 1 and type(steps[0][1]).__name__ == "NativeStep"


@needs_native
def test_depthwise_large_two_threads(monkeypatch):
    """A MobileNet-sized layer (56x56x144, 3x3) splits its rows into 4 tasks over two
    threads, inside its native step, and stays identical; at stride 2 (a quarter of the
    work, under native_split.SPLIT_MACS) it is not worth a hand-off and stays one task."""
    from ..test_conv import quant_conv_model

    made = _count(monkeypatch, isa=2)
    rng = np.random.default_rng(12)
    for stride in ((1, 1), (2, 2)):
        model, feeds = quant_conv_model(rng, np.int8, (1, 56, 56, 144), (1, 3, 3, 144),
                                        op="DEPTHWISE_CONV_2D", stride=stride)
        for kernels in ("default", "reference"):
            want, got = _both_backends(model, feeds, kernels=kernels, num_threads=2)
            np.testing.assert_array_equal(got, want)
    assert [(r.tasks, r.threads) for r in made] == [(4, 2), (4, 2), (1, 1), (1, 1)]


def test_arrange_weights_slots():
    """Channel i's weight of the pair's first tap sits at SLOT[i], the second tap's next to
    it, in the order vpunpcklwd / vpunpckhwd interleave 16 channels (lanes 0-3 / 8-11, then
    4-7 / 12-15); the odd last tap pairs with zeros, channels past O are zero."""
    w = np.arange(1, 3 * 18 + 1, dtype=np.int16).reshape(3, 1, 18)  # 3 taps, 18 channels
    packed = native_depthwise.arrange_weights(w)
    assert packed.shape == (2, 2, 32)
    assert list(native_depthwise.SLOT[:8]) == [0, 2, 4, 6, 16, 18, 20, 22]
    assert packed[0, 0, 0] == w[0, 0, 0] and packed[0, 0, 1] == w[1, 0, 0]
    assert packed[0, 0, 16] == w[0, 0, 4] and packed[0, 0, 8] == w[0, 0, 8]
    assert packed[0, 1, 1] == 0 and packed[0, 1, 0] == w[2, 0, 0]
    assert packed[1, 0, 2] == w[0, 0, 17] and packed[1, 0, 4] == 0


@needs_native
def test_depthwise_module_checks_its_buffers(monkeypatch):
    """The C entry points refuse buffers smaller than the geometry needs (a ValueError
    naming the buffer), never reading or writing past them."""
    from edgelite.interpreter import native
    from ..test_conv import quant_conv_model

    made = _count(monkeypatch, isa=2)
    rng = np.random.default_rng(13)
    model, feeds = quant_conv_model(rng, np.int8, (1, 6, 6, 8), (1, 3, 3, 8),
                                    op="DEPTHWISE_CONV_2D")
    _both_backends(model, feeds)
    rec = made[-1]
    out = np.empty((1, 6, 6, 8), np.int8)
    good = rec._args(feeds[0], out, rec.scratch)
    native.module.depthwise(*good, 0, 6)
    for index, small, name in ((0, feeds[0][:, :5], "the input"), (18, out[:, :5], "the output"),
                               (20, rec.scratch[:-1], "the scratch")):
        bad = good[:index] + (np.ascontiguousarray(small),) + good[index + 1:]
        with pytest.raises(ValueError, match=name):
            native.module.depthwise(*bad, 0, 6)
        with pytest.raises(ValueError, match=name):
            native.module.depthwise_step(*bad)
    with pytest.raises(ValueError, match="bad geometry"):
        native.module.depthwise(*good, 0, 7)  # rows past N * OH
    for threads, tasks in ((0, 1), (65, 2), (2, 0)):
        with pytest.raises(ValueError, match="bad geometry"):
            native.module.depthwise_step(*good, threads, tasks)
    with pytest.raises(ValueError, match="the scratch"):  # one thread's scratch, 2 threads
        native.module.depthwise_step(*good, 2, 4)
