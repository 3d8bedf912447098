"""Accuracy metrics against hand-computed values."""

import math

import numpy as np
import pytest

from edgelite.converter.accuracy import TensorStats, cosine, sqnr, top_k_hits
from edgelite.converter.accuracy.metrics import dequantized, sample_sums, sqnr_from_sums
from edgelite.interpreter import native
from edgelite.converter.quantize import metrics as quantize_metrics


def test_sqnr_is_the_quantizers_own():
    assert sqnr is quantize_metrics.sqnr


def test_sqnr_of_a_known_signal_and_noise():
    # signal: 100 values of 2 -> sum 400; noise: 0.2 on each -> sum 4; 10 log10(100) = 20 dB
    ref = np.full(100, 2.0)
    assert sqnr(ref, ref + 0.2) == pytest.approx(20.0)
    # a sine of amplitude 1 over whole periods has mean power 1/2; noise of +-0.01 (power 1e-4)
    t = np.arange(1000) / 1000
    s = np.sin(2 * np.pi * 5 * t)
    noise = np.where(np.arange(1000) % 2 == 0, 0.01, -0.01)
    assert sqnr(s, s + noise) == pytest.approx(10 * math.log10(0.5 / 1e-4))   # 36.99 dB
    assert sqnr(ref, ref) == math.inf
    assert sqnr(np.zeros(3), np.ones(3)) == -math.inf


def test_sqnr_from_sums():
    assert sqnr_from_sums(1000.0, 1.0) == pytest.approx(30.0)
    assert sqnr_from_sums(5.0, 0.0) == math.inf
    assert sqnr_from_sums(0.0, 2.0) == -math.inf


def test_cosine_hand_values():
    assert cosine([1, 0], [0, 1]) == 0.0
    assert cosine([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert cosine([1, 2, 3], [-1, -2, -3]) == pytest.approx(-1.0)
    assert cosine([1, 1], [1, 0]) == pytest.approx(1 / math.sqrt(2))
    assert cosine([[3, 4]], [[4, 3]]) == pytest.approx(24 / 25)   # flattened
    assert cosine([0, 0], [0, 0]) == 1.0 and cosine([0, 0], [1, 0]) == 0.0
    with pytest.raises(ValueError, match="3 values.*2"):
        cosine([1, 2, 3], [1, 2])


def test_tensor_stats_stream_over_samples():
    s = TensorStats(scale=0.5)
    s.update(np.array([1.0, 2.0]), np.array([1.0, 2.5]))    # errors 0, +0.5
    s.update(np.array([[3.0, 4.0]]), np.array([[2.7, 4.0]]))  # errors -0.3, 0
    assert s.count == 4
    assert s.mean_error == pytest.approx((0.5 - 0.3) / 4)
    assert s.max_abs == pytest.approx(0.5) and s.max_error_lsb == pytest.approx(1.0)
    ref = np.array([1.0, 2.0, 3.0, 4.0])
    test = np.array([1.0, 2.5, 2.7, 4.0])
    assert s.sqnr_db == pytest.approx(10 * math.log10(30 / (0.25 + 0.09)))
    assert s.cosine == pytest.approx(cosine(ref, test))


def test_tensor_stats_per_channel_scale_and_float():
    # errors of 0.1 in both channels; channel scales 0.1 and 0.05 -> 1 and 2 steps
    s = TensorStats(scale=np.array([[0.1, 0.05]]))
    s.update(np.zeros((3, 2)), np.full((3, 2), 0.1))
    assert s.max_error_lsb == pytest.approx(2.0)
    f = TensorStats()
    f.update(np.ones(2), np.ones(2) * 1.5)
    assert f.max_error_lsb is None and f.max_abs == 0.5


def test_top_k_hits_break_ties_like_argmax():
    scores = np.array([[0.1, 0.7, 0.2],
                       [0.5, 0.5, 0.0],    # tie: argmax says class 0
                       [0.3, 0.3, 0.4]])
    labels = np.array([1, 1, 0])
    assert top_k_hits(scores, labels, 1).tolist() == [True, False, False]
    assert top_k_hits(scores, labels, 2).tolist() == [True, True, True]
    assert top_k_hits(scores, labels, 1).tolist() == (scores.argmax(1) == labels).tolist()


# -- one sample's sums: one left-to-right pass, the same bits on both backends ------------

def _left_to_right(r: np.ndarray, t: np.ndarray) -> tuple:
    """The definition, one Python float at a time."""
    rr = tt = rt = ee = es = mx = 0.0
    for a, b in zip(r.astype(np.float64).tolist(), t.astype(np.float64).tolist()):
        e = b - a
        rr, tt, rt, ee, es = rr + a * a, tt + b * b, rt + a * b, ee + e * e, es + e
        mx = max(mx, abs(e))
    return rr, tt, rt, ee, es, mx


def _cases():
    rng = np.random.default_rng(7)
    for n in (1, 5, 255, 256, 257, 3000):
        r = rng.standard_normal(n).astype(np.float32) * np.float32(rng.uniform(0.01, 100))
        yield "float32", r, (r + rng.standard_normal(n).astype(np.float32) * 0.01), None
        for dtype in (np.int8, np.uint8, np.int16):
            info = np.iinfo(dtype)
            q = rng.integers(info.min, int(info.max) + 1, n).astype(dtype)
            yield dtype.__name__, r, q, (float(rng.uniform(1e-3, 0.1)), int(rng.integers(-5, 6)))


def _same(a, b) -> bool:
    return all(x == y or (math.isnan(x) and math.isnan(y)) for x, y in zip(a, b))


@pytest.mark.parametrize("case", list(_cases()), ids=lambda c: f"{c[0]}-{c[1].size}")
def test_sample_sums_run_left_to_right_on_both_backends(case):
    _, r, t, quant = case
    real = t if quant is None else (quant[0] * (t.astype(np.float64) - quant[1])).astype(
        np.float32)
    expected = _left_to_right(r, real)
    assert _same(sample_sums(r, t, quant, use_native=False), expected)
    if native.built():
        assert _same(sample_sums(r, t, quant, use_native=True), expected)


def test_sample_sums_edge_values_agree_across_backends():
    r = np.array([0.0, -0.0, 1.0, np.inf, 3.0], np.float32)
    cases = [(r, np.array([0.0, 0.0, np.nan, 1.0, 3.0], np.float32)),   # NaN -> max NaN
             (r, np.array([0.0, 0.0, 1.0, np.inf, 2.0], np.float32)),   # inf - inf
             (r[:0], r[:0])]                                          # no values
    for a, b in cases:
        with np.errstate(invalid="ignore"):
            numpy_sums = sample_sums(a, b, use_native=False)
            nan = bool(np.isnan(b.astype(np.float64) - a).any())
        assert math.isnan(numpy_sums[5]) == nan
        if native.built():
            assert _same(sample_sums(a, b, use_native=True), numpy_sums)
    assert sample_sums(r[:0], r[:0]) == (0.0,) * 6
    with pytest.raises(ValueError, match="test has 3"):
        sample_sums(r, r[:3])


def test_max_lsb_of_a_per_tensor_scale_is_the_elementwise_max():
    """max(|e|) / s equals max(|e| / s) bit for bit (division by s > 0 is monotone), so
    the per-tensor path needs no second pass."""
    rng = np.random.default_rng(3)
    for _ in range(50):
        r = rng.standard_normal(500).astype(np.float32)
        t = (r + rng.standard_normal(500) * 0.03).astype(np.float32)
        scale = float(rng.uniform(1e-4, 1.0))
        s = TensorStats(scale)
        s.update(r, t)
        assert s.max_lsb == float((np.abs(t.astype(np.float64) - r) / scale).max())


def test_quantized_test_values_read_as_dequantized():
    rng = np.random.default_rng(5)
    r = rng.standard_normal(300).astype(np.float32)
    q = rng.integers(-128, 128, 300).astype(np.int8)
    real = (0.02 * (q.astype(np.float64) - 3)).astype(np.float32)
    a, b = TensorStats(0.02), TensorStats(0.02)
    assert a.update(r, q, (0.02, 3)) == b.update(r, real)
    assert (a.sqnr_db, a.cosine, a.mean_error, a.max_abs, a.max_lsb) == (
        b.sqnr_db, b.cosine, b.mean_error, b.max_abs, b.max_lsb)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16])
def test_dequantized_is_the_interpreters_on_both_backends(dtype):
    """metrics.dequantized == details.dequantized (what get_dequantized_tensor returns)."""
    from types import SimpleNamespace
    from edgelite.interpreter.details import dequantized as interpreter_dequantized
    from edgelite.interpreter.loader.model_objects import Quantization
    rng = np.random.default_rng(11)
    info = np.iinfo(dtype)
    q = rng.integers(info.min, int(info.max) + 1, (3, 7, 5)).astype(dtype)
    scale32 = np.array([rng.uniform(1e-4, 0.3)], np.float32)   # a file's scale is float32
    scale, zero = float(scale32[0]), int(rng.integers(-9, 10))
    tensor = SimpleNamespace(name="t", quantization=Quantization(
        scale32, np.array([zero], np.int64), 0, None, None))
    expected = interpreter_dequantized(tensor, 0, q)
    for use_native in [False] + ([True] if native.built() else []):
        got = dequantized(q, (scale, zero), use_native)
        assert got.dtype == np.float32 and got.shape == q.shape
        assert np.array_equal(got.view(np.int32), expected.view(np.int32))


def test_range_counts_agree_across_backends():
    from edgelite.converter.accuracy.advice import RangeStats
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(5000) * 3).astype(np.float32)
    x[:50] = 0.0
    counts = []
    for use_native in [False] + ([True] if native.built() else []):
        s = RangeStats(0.02, -3, np.dtype(np.int8))
        s.update(x, use_native=use_native)
        s.update(x[:777], use_native=use_native)
        counts.append((s.count, s.clipped, s.tiny, s.sum_sq))
    r = np.concatenate([x, x[:777]]).astype(np.float64)
    lo, hi, half = 0.02 * (-128 + 3), 0.02 * (127 + 3), 0.01
    assert counts[0][:3] == (r.size, int(((r < lo - half) | (r > hi + half)).sum()),
                             int(((r != 0) & (np.abs(r) < half)).sum()))
    assert counts[0][1] > 0 and counts[0][2] > 0
    assert len(set(counts)) == 1
