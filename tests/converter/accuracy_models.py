"""keras_cnn in float and int8 (calibrated on models/digits_calib.npy), and int8 copies with
one tensor's calibration range deliberately ruined -- shared by the accuracy tests."""

from __future__ import annotations

import functools
import importlib

import numpy as np

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import QuantizeOptions, QuantMode
from tests.conftest import MODELS

PB = MODELS / "keras_cnn.pb"
CALIB = MODELS / "digits_calib.npy"
TEST = MODELS / "digits_test.npz"


@functools.lru_cache(maxsize=None)
def digits() -> tuple[np.ndarray, np.ndarray]:
    with np.load(TEST) as d:
        return d["x"], d["y"]


@functools.lru_cache(maxsize=None)
def float_model() -> bytes:
    return convert_detailed(PB).model


@functools.lru_cache(maxsize=None)
def int8_model(ruin: str | None = None, factor: float = 1.0) -> bytes:
    """int8 keras_cnn; with `ruin`, that tensor's calibrated range is stretched `factor`
    times (as a bad calibration would), everything else calibrated as usual."""
    quantize = importlib.import_module("edgelite.converter.quantize.pipeline")
    original = quantize.collect_ranges

    def ruined(*args, **kwargs):
        stats = original(*args, **kwargs)
        lo, hi = stats.ranges[ruin]
        stats.ranges[ruin] = (lo * factor, hi * factor)
        return stats

    if ruin is not None:
        quantize.collect_ranges = ruined
    try:
        options = ConvertOptions(quantize=QuantizeOptions(mode=QuantMode.INT8, calib=str(CALIB)))
        return convert_detailed(PB, options).model
    finally:
        quantize.collect_ranges = original
