"""options.py: the flat keywords (the convert flags' names) fill the four groups; one clear
line for what a mode cannot do."""

from dataclasses import replace

import pytest

from edgelite.converter.quantize import (CalibConfig, CalibrationOptions, IOType,
                                         PrecisionOptions, QuantizeOptions, QuantMode)
from edgelite.converter.quantize.options import FLAT, GROUPS, KEYWORDS, enum_value
from edgelite.errors import EdgeliteError


def test_flat_keywords_fill_the_groups():
    q = QuantizeOptions("uint8", calib="d.npy", calib_samples=5, calib_method="percentile:99",
                        io_type="uint8", input_ranges={"x": (0, 1)}, adaround=True,
                        force_transforms=True, keep_float=["SOFTMAX"], per_channel=False,
                        workers=2)
    assert q.mode is QuantMode.UINT8
    assert (q.calibration.data, q.calibration.samples, q.calibration.workers) == ("d.npy", 5, 2)
    assert q.calibration.method == CalibConfig.parse("percentile:99")
    assert q.io.io_type is IOType.UINT8 and q.io.input_ranges == {"x": (0, 1)}
    assert q.transforms.adaround and q.transforms.force and not q.transforms.equalize
    assert q.precision.keep_float == ("SOFTMAX",) and q.precision.per_channel is False


def test_every_group_field_has_one_flat_name():
    """FLAT maps each flag onto one group field, and every field is reachable."""
    targets = list(FLAT.values())
    assert len(targets) == len(set(targets))
    fields = {(g, f) for g, kind in GROUPS.items() for f in kind.__dataclass_fields__}
    assert set(targets) == fields
    assert KEYWORDS >= set(FLAT) | set(GROUPS) | {"mode", "log", "progress_bar"}


def test_auto_is_a_transform_with_minmax_ranges():
    q = QuantizeOptions(calib_method="AUTO")
    assert q.transforms.auto and q.calibration.method == CalibConfig.parse("minmax")


def test_groups_and_flat_keywords_combine_and_replace_keeps_the_rest():
    q = QuantizeOptions(calibration=CalibrationOptions(data="a.npy", samples=3),
                        precision=PrecisionOptions(int16_ops=("ADD",)), calib_samples=7)
    assert (q.calibration.data, q.calibration.samples) == ("a.npy", 7)
    r = replace(q, calib_method="mse", auto=False, int16_ops=("ADD", "MUL"))
    assert r.calibration.data == "a.npy" and r.calibration.method == CalibConfig.parse("mse")
    assert r.precision.int16_ops == ("ADD", "MUL") and q.precision.int16_ops == ("ADD",)


def test_unknown_keyword_and_bad_values():
    with pytest.raises(TypeError, match="calibration_data"):
        QuantizeOptions(calibration_data="x")
    with pytest.raises(EdgeliteError, match="quantize is one of int8, uint8"):
        QuantizeOptions("int4")
    with pytest.raises(EdgeliteError, match="sequence_head is int16 or int8"):
        QuantizeOptions(sequence_head="int32")
    assert enum_value(IOType, " INT8 ", "io_type") is IOType.INT8


@pytest.mark.parametrize("kwargs, message", [
    (dict(mode="int16x8", io_type="int8"), "--quantize int16x8 takes --io-type float or int16"),
    (dict(mode="uint8", int16_ops=("ADD",)), "need --quantize int8, not uint8"),
    (dict(mode="int16x8", adaround=True, min_sqnr=30.0), "--adaround, --min-sqnr: not"),
    (dict(mode="int16x8", mean_std={"x": (1.0, 2.0)}), "--mean-std needs mean 0"),
])
def test_check_refuses_what_a_mode_cannot_do(kwargs, message):
    with pytest.raises(EdgeliteError, match=message):
        QuantizeOptions(**kwargs).check()


def test_check_passes_weights_only_modes_whatever_the_io():
    QuantizeOptions("dynamic", io_type="int8").check()
