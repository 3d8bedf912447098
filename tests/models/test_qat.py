"""A quantization-aware graph converts to int8 without calibration data, and each tensor's
parameters are its FakeQuant node's nudged range -- the same ones TensorFlow's converter
gives (recorded in models/qat_cnn.ranges.json by models/build_quantized.py)."""

import json

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import QuantizeOptions, QuantMode
from tests.conftest import MODELS


@pytest.fixture(scope="module")
def qat():
    ranges = json.loads((MODELS / "qat_cnn.ranges.json").read_text())
    result = convert_detailed(MODELS / "qat_cnn.pb",
                              ConvertOptions(quantize=QuantizeOptions(mode=QuantMode.INT8)))
    assert result.quantization.calibration is None
    tensors = {t.name: t for t in result.graph.tensors()}
    return ranges, tensors, result


def test_ranges_equal_nudged_fake_quant_ranges(qat):
    ranges, tensors, _ = qat
    checked = 0
    for fq in ranges["activation_fake_quants"]:
        t = tensors.get(fq["name"]) or tensors.get(f"{fq['input']}_int8")
        assert t is not None, fq["name"]
        assert t.dtype == np.int8
        assert t.quant.scale[0] == pytest.approx(fq["nudged_scale"], rel=1e-6)
        assert int(t.quant.zero_point[0]) == fq["zero_point_int8"]
        assert t.quant.scale[0] == pytest.approx(fq["tflite_tensor"]["scale"], rel=1e-6)
        assert int(t.quant.zero_point[0]) == fq["tflite_tensor"]["zero_point"]
        checked += 1
    assert checked == len(ranges["activation_fake_quants"]) >= 4


def test_qat_model_matches_float_graph(qat, litert):
    _, _, result = qat
    golden = np.load(MODELS / "qat_cnn.golden.npz")
    interp = litert.Interpreter(model_content=result.model)
    interp.allocate_tensors()
    inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
    agree = 0
    for x, ref in zip(golden["input"], golden["output"]):
        interp.set_tensor(inp["index"], x[None])
        interp.invoke()
        agree += interp.get_tensor(out["index"])[0].argmax() == ref.argmax()
    assert agree >= 0.9 * len(golden["input"])
