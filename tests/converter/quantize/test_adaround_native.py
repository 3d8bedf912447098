"""AdaRound's loop on the native kernels (converter/quantize/adaround_native.py): the same
file as the numpy loop, bit for bit, on a whole conversion (the loop itself against the
textbook one: test_adaround.py); numpy where the kernels are not built or turned off."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import QuantizeOptions, adaround, adaround_native
from edgelite.interpreter import native
from tests.conftest import MODELS


def _convert(name: str, per_channel: bool) -> bytes:
    return convert_detailed(MODELS / f"{name}.pb", ConvertOptions(quantize=QuantizeOptions(
        calib=str(MODELS / "digits_calib.npy"), per_channel=per_channel, adaround=True,
        force_transforms=True))).model


@pytest.mark.skipif(not native.built(), reason="native kernels not built")
@pytest.mark.parametrize("name,per_channel", [("keras_cnn", True), ("tf1_cnn", False)])
def test_the_native_loop_writes_the_numpy_loops_file(name, per_channel, monkeypatch):
    used = []
    real = adaround_native.relaxed_for
    monkeypatch.setattr(adaround_native, "relaxed_for", lambda *a: used.append(
        type(real(*a)).__name__) or real(*a))
    fast = _convert(name, per_channel)
    monkeypatch.setattr(adaround_native, "relaxed_for", lambda *a: used.append(
        "numpy") or adaround.Relaxed(*a))
    slow = _convert(name, per_channel)
    layers = len(used) // 2
    assert layers >= 3 and used == ["NativeRelaxed"] * layers + ["numpy"] * layers
    assert fast == slow


def test_numpy_where_the_kernels_are_off(monkeypatch):
    monkeypatch.setenv(native.ENV, "0")
    quad = adaround.Quadratic(np.ones((2, 3)), [(np.eye(3), None)])
    one = np.ones((2, 3), np.float32)
    relaxed = adaround_native.relaxed_for(quad.cast(np.float32), one, one, one,
                                          np.ones((2, 3), bool), np.float32(1))
    assert type(relaxed) is adaround.Relaxed
