"""Calibration observers on synthetic data with known answers, and --calib-method wiring."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import CalibConfig, CalibMethod, QuantizeOptions
from edgelite.converter.quantize.observers import (EntropyObserver, Histogram,
                                                   MinMaxObserver, MovingAverageObserver,
                                                   MseObserver, PercentileObserver)
from edgelite.errors import EdgeliteError
from edgelite.interpreter import native
from tests.conftest import MODELS

RNG = np.random.default_rng(7)


def feed(make, data):
    """Calibration's passes: an observer `make(extremes)` fed every sample after a first
    min / max pass (which the histogram observers' grids need)."""
    first = MinMaxObserver()
    for x in data:
        first.observe(x)
    observer = make((first.lo, first.hi))
    for x in data:
        observer.observe(x)
    return observer.range()


def method(text):
    return CalibConfig.parse(text).observer


def int8_mse(data, lo, hi):
    """Mean squared error of int8 asymmetric quantization over [lo, hi] (0 included)."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    s = (hi - lo) / 255
    zp = np.round(-128 - lo / s)
    q = np.clip(np.round(data / s) + zp, -128, 127)
    return float(np.mean((s * (q - zp) - data) ** 2))


def test_minmax_is_the_global_range():
    data = RNG.normal(0, 1, (20, 100))
    assert feed(method("minmax"), data) == (data.min(), data.max())


def test_moving_average_is_a_debiased_ema_of_per_sample_extremes():
    data = [np.array([-1.0, 2.0]), np.array([-3.0, 4.0]), np.array([-2.0, 1.0])]
    d = 0.9
    lo, hi = feed(lambda e: MovingAverageObserver(d), data)
    w = np.array([d ** 2, d, 1.0]) * (1 - d)          # weights of samples 1, 2, 3
    assert lo == pytest.approx(np.dot(w, [-1, -3, -2]) / w.sum())
    assert hi == pytest.approx(np.dot(w, [2, 4, 1]) / w.sum())
    assert feed(lambda e: MovingAverageObserver(0.0), data) == (-2.0, 1.0)   # decay 0: the last one


@pytest.mark.parametrize("p,expected", [(99.0, 0.98), (99.9, 0.998), (95.0, 0.90)])
def test_percentile_of_a_uniform_distribution(p, expected):
    data = RNG.uniform(-1, 1, (50, 4000))
    lo, hi = feed(lambda e: PercentileObserver(e, p), data)
    assert hi == pytest.approx(expected, abs=2e-3) and lo == pytest.approx(-expected, abs=2e-3)


def test_percentile_of_a_normal_cuts_each_tail():
    data = RNG.normal(0, 1, (100, 2000))
    lo, hi = feed(lambda e: PercentileObserver(e, 99.9), data)
    assert lo == pytest.approx(-3.09, abs=0.05) and hi == pytest.approx(3.09, abs=0.05)
    relu = np.maximum(data, 0)
    lo, hi = feed(lambda e: PercentileObserver(e, 99.9), relu)
    assert lo == 0.0 and hi == pytest.approx(np.quantile(relu, 0.999), abs=0.02)


@pytest.mark.parametrize("tails", ["laplace", "student-t3"])
def test_mse_clips_heavy_tails_and_beats_minmax(tails):
    data = (RNG.laplace(0, 1, (100, 1000)) if tails == "laplace"
            else RNG.standard_t(3, (100, 1000)))
    lo, hi = feed(MseObserver, data)
    assert 0.9 * data.min() < lo < 0 < hi < 0.9 * data.max()
    assert int8_mse(data, lo, hi) < 0.9 * int8_mse(data, data.min(), data.max())
    for other in (method("percentile"), EntropyObserver, method("moving-average")):
        assert int8_mse(data, lo, hi) <= int8_mse(data, *feed(other, data)) * 1.01


def test_mse_keeps_the_full_range_of_uniform_data():
    data = RNG.uniform(-1, 3, (50, 1000))
    lo, hi = feed(MseObserver, data)
    assert lo == pytest.approx(-1, abs=0.02) and hi == pytest.approx(3, abs=0.02)


def test_entropy_on_laplace_data_is_inside_min_max():
    data = RNG.laplace(0, 1, (100, 1000))
    lo, hi = feed(EntropyObserver, data)
    assert data.min() < lo < -3 and 3 < hi < data.max()
    assert lo == pytest.approx(-hi)                            # symmetric: 128 levels a side
    assert int8_mse(data, lo, hi) < int8_mse(data, data.min(), data.max())


def test_entropy_on_non_negative_data_starts_at_zero():
    data = np.maximum(RNG.laplace(0, 1, (50, 1000)), 0)        # ReLU output: many zeros
    lo, hi = feed(EntropyObserver, data)
    assert lo == 0.0 and 2 < hi < data.max()


def test_histogram_grid_spans_the_extremes_and_zero():
    data = RNG.normal(2.0, 0.5, 5000)                        # all positive
    h = Histogram(float(data.min()), float(data.max()), 256)
    h.add(data)
    assert h.counts.dtype == np.int64 and h.counts.size == 256 and h.total == data.size
    assert h.lo == 0.0 and h.hi == pytest.approx(data.max())
    assert h.counts[-1] >= 1                                  # the maximum: the last bin
    for q in (0.1, 0.5, 0.9):
        assert h.quantile(q) == pytest.approx(np.quantile(data, q), abs=2 * h.width)
    assert h.quantile(0.0) >= data.min() and h.quantile(1.0) <= data.max()


def test_histogram_counts_merge_exactly_over_any_split():
    data = RNG.standard_t(3, 20000)
    whole = Histogram(float(data.min()), float(data.max()))
    whole.add(data)
    for _ in range(5):
        cuts = np.sort(RNG.choice(np.arange(1, data.size), RNG.integers(1, 8), replace=False))
        parts = np.split(RNG.permutation(data), cuts)
        merged = Histogram(float(data.min()), float(data.max()))
        for part in parts:
            shard = Histogram(float(data.min()), float(data.max()))
            shard.add(part)
            merged.merge(shard)
        assert np.array_equal(merged.counts, whole.counts)
    with pytest.raises(ValueError, match="different grids"):
        whole.merge(Histogram(0.0, 1.0))


@pytest.mark.parametrize("text", ["percentile", "percentile:99.9", "mse", "entropy"])
def test_histogram_methods_give_identical_ranges_over_any_sharding(text):
    data = list(RNG.laplace(0, 1, (40, 500)))
    config = CalibConfig.parse(text)
    expected = feed(config.observer, data)
    lo, hi = min(x.min() for x in data), max(x.max() for x in data)
    for _ in range(4):
        order = RNG.permutation(len(data))
        cuts = np.sort(RNG.choice(np.arange(1, len(data)), RNG.integers(1, 6), replace=False))
        merged = None
        for shard in np.split(order, cuts):
            o = config.observer((lo, hi))
            o.observe(np.stack([data[i] for i in shard]))      # a batch at once
            merged = o if merged is None else (merged.merge(o) or merged)
        assert merged.range() == expected


def test_histogram_all_zeros():
    h = Histogram(0.0, 0.0, 64)
    h.add(np.zeros(10))
    assert h.total == 10 and h.empty_grid and h.quantile(0.5) == 0.0
    for text in ("percentile", "mse", "entropy"):
        assert feed(method(text), [np.zeros(5)]) == (0.0, 0.0)


def test_a_histogram_observer_needs_the_first_pass():
    with pytest.raises(ValueError, match="second pass"):
        CalibConfig.parse("mse").observer()
    assert CalibConfig.parse("entropy").two_pass and not CalibConfig.parse("minmax").two_pass


@pytest.mark.parametrize("text,method,arg", [
    ("minmax", CalibMethod.MINMAX, None), ("percentile", CalibMethod.PERCENTILE, 99.99),
    ("percentile:99.9", CalibMethod.PERCENTILE, 99.9), ("MSE", CalibMethod.MSE, None),
    ("moving-average:0.9", CalibMethod.MOVING_AVERAGE, 0.9),
    ("entropy", CalibMethod.ENTROPY, None)])
def test_parse(text, method, arg):
    c = CalibConfig.parse(text)
    assert c.method is method
    if method is CalibMethod.PERCENTILE:
        assert c.percentile == arg
    if method is CalibMethod.MOVING_AVERAGE:
        assert c.decay == arg


@pytest.mark.parametrize("bad", ["kl", "percentile:abc", "percentile:20", "mse:3",
                                 "moving-average:1.5"])
def test_parse_errors(bad):
    with pytest.raises(EdgeliteError, match="calibration method"):
        CalibConfig.parse(bad)


def ranges(method):
    q = QuantizeOptions(calib=str(MODELS / "digits_calib.npy"), calib_method=method)
    return convert_detailed(MODELS / "tf1_cnn.pb", ConvertOptions(quantize=q)).quantization


def test_calib_method_reaches_every_activation():
    base = ranges("minmax").ranges
    for method in ("percentile:99", "mse", "entropy", "moving-average"):
        report = ranges(method)
        assert str(report.calib_method) == method or report.calib_method.method.value == method
        r = report.ranges
        assert r["input"][0] >= base["input"][0]
        for name in ("conv1/Relu", "conv2/Relu"):
            assert r[name][0] == 0.0 and 0 < r[name][1] <= base[name][1]
        assert r["conv2/Relu"] != base["conv2/Relu"]           # the method did something


def reference_kl_threshold(hist, width, levels):
    """TensorRT's search written one candidate at a time (the definition kl_threshold
    computes in blocks)."""
    hist = hist.astype(np.float64)
    hist[0] = hist[1]
    if hist.size <= levels:
        return hist.size * width

    def smooth(p):
        zero = p == 0
        n_zero, n_nonzero = int(zero.sum()), int(p.size - zero.sum())
        if n_nonzero == 0:
            return None
        return p + 1e-4 * zero - (1e-4 * n_zero / n_nonzero) * ~zero if n_zero else p

    best_i, best_d = hist.size, np.inf
    for i in range(levels, hist.size + 1):
        p = hist[:i].copy()
        p[-1] += hist[i:].sum()
        merged = i // levels
        owners = np.minimum(np.arange(i) // merged, levels - 1)
        groups = np.bincount(owners, weights=hist[:i], minlength=levels)
        norm = np.bincount(owners, weights=p != 0, minlength=levels)
        per_bin = np.divide(groups, norm, out=np.zeros(levels), where=norm > 0)
        q = np.where(p != 0, per_bin[owners], 0.0)
        p, q = smooth(p), smooth(q)
        if p is None or q is None or (p <= 0).any() or (q <= 0).any():
            continue
        p, q = p / p.sum(), q / q.sum()
        d = float(np.sum(p * np.log(p / q)))
        if d <= best_d:
            best_i, best_d = i, d
    return best_i * width


def _kl_histogram(shape: str, rng, bins: int) -> np.ndarray:
    if shape == "laplace":
        counts = np.histogram(np.abs(rng.laplace(0, 1, 50000)), bins)[0]
    elif shape == "relu":
        counts = np.histogram(np.maximum(rng.normal(0, 1, 50000), 0), bins)[0]
    elif shape == "sparse":
        counts = rng.poisson(0.3, bins) * (rng.random(bins) < 0.2)
    elif shape == "tail":      # mass at the top only: Q is all zero for most candidates
        counts = np.zeros(bins, np.int64)
        counts[-3:] = (5, 0, 7)
    else:
        counts = np.zeros(bins, np.int64)
        counts[rng.integers(0, bins, 30)] = rng.integers(1, 1000, 30)
    counts[-1] = max(counts[-1], 1)
    return counts


KL_SHAPES = ["laplace", "relu", "sparse", "spiky", "tail"]
BACKENDS = [False, pytest.param(True, marks=pytest.mark.skipif(
    not native.built(), reason="native kernels not built"))]


@pytest.mark.parametrize("use_native", BACKENDS)
@pytest.mark.parametrize("shape", KL_SHAPES)
def test_kl_threshold_matches_the_one_candidate_at_a_time_search(shape, use_native):
    from edgelite.converter.quantize.observers.entropy import kl_threshold
    rng = np.random.default_rng(len(shape))
    for levels, bins in ((128, 700), (256, 1100), (128, 2048)):
        counts = _kl_histogram(shape, rng, bins)
        assert kl_threshold(counts, 0.01, levels, use_native) == \
            reference_kl_threshold(counts, 0.01, levels)


@pytest.mark.skipif(not native.built(), reason="native kernels not built")
@pytest.mark.parametrize("shape", KL_SHAPES)
def test_native_kl_divergences_are_numpys_bit_for_bit(shape):
    """interpreter/native/entropy.c: every candidate's D equals kl_divergences' (numpy's
    pairwise sums, the same float64 operations), unusable candidates (inf) included."""
    from edgelite.converter.quantize.observers.entropy import _NativeSearch, kl_divergences
    rng = np.random.default_rng(7 + len(shape))
    for levels, bins in ((128, 300), (256, 1500), (128, 2048)):
        hist = _kl_histogram(shape, rng, bins).astype(np.float64)
        hist[0] = hist[1]
        search = _NativeSearch(native.module, hist, levels)
        first, rows = levels + 5, min(300, bins - levels - 4)   # not a multiple of 8
        expected = kl_divergences(hist, levels, np.arange(first, first + rows))
        got = search.block(first, rows)
        assert got.tobytes() == np.array(expected).tobytes()
        if shape == "tail":
            assert np.isinf(got).sum() > rows // 2
        else:
            assert np.isfinite(got).all()


@pytest.mark.skipif(not native.built(), reason="native kernels not built")
def test_native_kl_search_refuses_wrong_sizes():
    hist = np.ones(300)
    sums = np.zeros(301)
    with pytest.raises(ValueError, match="candidates outside"):
        native.module.kl_prepare(hist, sums, sums, sums.astype(np.int64), 128, 200, 102,
                                 np.empty(1), np.empty(1), np.empty(102))
    with pytest.raises(ValueError, match="p holds"):
        native.module.kl_prepare(hist, sums, sums, sums.astype(np.int64), 128, 128, 2,
                                 np.empty(3), np.empty(257), np.empty(2))
