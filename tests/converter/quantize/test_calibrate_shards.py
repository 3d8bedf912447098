"""Calibration in worker processes and on Ray: the same ranges, used count and skipped
samples as one process, bit for bit -- min / max, and the histogram methods (percentile,
mse, entropy: two passes, integer counts on a fixed grid) over any sharding and sample
order; moving-average (sample order) refused in one line."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import QuantizeOptions, QuantMode
from edgelite.converter.quantize.calibrate import collect_ranges, load_samples
from edgelite.errors import EdgeliteError
from tests.conftest import MODELS

from ..shards.ray_session import ray_session  # noqa: F401 -- a fixture

PB = MODELS / "keras_cnn.pb"


@pytest.fixture(scope="module")
def calib(tmp_path_factory):
    x = np.load(MODELS / "digits_calib.npy")[:90].copy()
    x[5, 0, 0, 0] = np.nan
    x[70, 1, 1, 0] = np.inf
    path = tmp_path_factory.mktemp("calib") / "x.npy"
    np.save(path, x)
    return path


def _float_model() -> bytes:
    return convert_detailed(PB).model


def _samples(path):
    return load_samples(path, ["input"])


def test_two_workers_give_the_same_ranges(calib, monkeypatch):
    from edgelite.converter.quantize import calibrate_shards
    monkeypatch.setattr(calibrate_shards, "PIECE_SAMPLES", 16)  # several shards
    model = _float_model()
    one = collect_ranges(model, _samples(calib), 80)
    two = collect_ranges(model, _samples(calib), 80, workers=2)
    assert two.ranges == one.ranges and len(one.ranges) > 10
    assert (two.used, two.skipped) == (one.used, one.skipped) == (80, [5, 70])
    x = np.load(calib)
    finite = np.delete(x, [5, 70], axis=0)[:80]
    assert two.ranges["input"] == (float(finite.min()), float(finite.max()))


def test_convert_with_workers_writes_the_same_bytes(calib):
    def convert(**kw):
        q = QuantizeOptions(mode=QuantMode.INT8, calib=str(calib), **kw)
        return convert_detailed(PB, ConvertOptions(quantize=q)).model
    assert convert(workers=2) == convert()


def test_order_dependent_methods_are_refused(calib):
    with pytest.raises(EdgeliteError, match="^--workers / --ray calibrate with minmax, "
                                            "percentile, mse or entropy .* moving-average"):
        collect_ranges(_float_model(), _samples(calib), None, method="moving-average",
                       workers=2)


HISTOGRAM_METHODS = ["percentile:99.9", "mse", "entropy"]
RNG = np.random.default_rng(29)


@pytest.mark.parametrize("method", ["minmax", *HISTOGRAM_METHODS])
def test_random_shardings_give_identical_ranges(calib, method, monkeypatch):
    from edgelite.converter.quantize import calibrate_shards
    from edgelite.converter.quantize.observers import CalibConfig
    model = _float_model()
    samples = list(_samples(calib))
    one = collect_ranges(model, samples, None, method=method)
    assert one.used == 88 and len(one.ranges) > 10
    config = CalibConfig.parse(method)
    for _ in range(3):
        order = [samples[i] for i in RNG.permutation(len(samples))]
        monkeypatch.setattr(calibrate_shards, "PIECE_SAMPLES", int(RNG.integers(1, 40)))
        ranges, used, _ = calibrate_shards.parallel_ranges(model, lambda: iter(order), None,
                                                           None, None, None, config)
        assert used == 88 and ranges == one.ranges
    if method != "minmax":   # the method matters: its ranges are not min / max
        base = collect_ranges(model, samples, None).ranges
        assert sum(ranges[n] != base[n] for n in base) > 5


@pytest.mark.parametrize("method", HISTOGRAM_METHODS)
def test_sample_order_does_not_change_the_converted_file(calib, method):
    x = np.load(calib)
    x = x[np.isfinite(x).all(axis=(1, 2, 3))]

    def convert(data):
        q = QuantizeOptions(mode=QuantMode.INT8, calib=data, calib_method=method)
        return convert_detailed(PB, ConvertOptions(quantize=q)).model
    first = convert(x)
    assert convert(x[RNG.permutation(len(x))]) == first
    assert convert(x[::-1].copy()) == first


def test_two_workers_convert_mse_to_the_same_bytes(calib, monkeypatch):
    from edgelite.converter.quantize import calibrate_shards
    monkeypatch.setattr(calibrate_shards, "PIECE_SAMPLES", 16)  # several shards

    def convert(**kw):
        q = QuantizeOptions(mode=QuantMode.INT8, calib=str(calib), calib_method="mse", **kw)
        return convert_detailed(PB, ConvertOptions(quantize=q))
    one, two = convert(), convert(workers=2)
    assert two.model == one.model
    assert two.quantization.ranges == one.quantization.ranges


def test_ray_local_gives_the_same_ranges(calib, ray_session):  # noqa: F811
    model = _float_model()
    one = collect_ranges(model, _samples(calib), None)
    on_ray = collect_ranges(model, _samples(calib), None, ray="local")
    assert on_ray.ranges == one.ranges and on_ray.used == 88
    one = collect_ranges(model, _samples(calib), None, method="entropy")
    on_ray = collect_ranges(model, _samples(calib), None, method="entropy", ray="local")
    assert on_ray.ranges == one.ranges and on_ray.used == 88
