"""Calibration (min / max) in worker processes and on Ray: the same ranges, used count and
skipped samples as one process, bit for bit; other methods refused in one line."""

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
    with pytest.raises(EdgeliteError, match="^--workers / --ray calibrate with --calib-method "
                                            "minmax .* percentile builds"):
        collect_ranges(_float_model(), _samples(calib), None, method="percentile", workers=2)


def test_ray_local_gives_the_same_ranges(calib, ray_session):  # noqa: F811
    model = _float_model()
    one = collect_ranges(model, _samples(calib), None)
    on_ray = collect_ranges(model, _samples(calib), None, ray="local")
    assert on_ray.ranges == one.ranges and on_ray.used == 88
