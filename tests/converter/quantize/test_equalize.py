"""Cross-layer equalization: the float function is unchanged, the channel ranges are equal."""

import copy

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.shape_inference import infer_shapes
from edgelite.converter.export import export_tflite
from edgelite.converter.ir import Activation, Graph, Padding
from edgelite.converter.quantize import QuantizeOptions
from edgelite.converter.quantize.calibrate import load_samples
from edgelite.converter.quantize.equalize import (channel_maxima, equalize, find_pairs,
                                                  input_ranges, output_ranges, relu6_layers)
from edgelite.converter.quantize.metrics import sqnr
from edgelite.converter.runner import run_all
from tests.conftest import MODELS

CONV = dict(padding=Padding.SAME, stride_h=1, stride_w=1, dilation_h_factor=1,
            dilation_w_factor=1)


def dw_pw_graph(act1=Activation.RELU, spread=100.0, act2=Activation.NONE, seed=0):
    """x[1,8,8,6] -> DEPTHWISE 3x3 (channel scales spread over `spread`x) -> CONV 1x1 -> y."""
    rng = np.random.default_rng(seed)
    g = Graph()
    x = g.tensor("x", np.float32, (1, 8, 8, 6))
    g.inputs = [x]
    scales = np.geomspace(1.0 / spread, 1.0, 6).astype(np.float32)
    w1 = (rng.standard_normal((1, 3, 3, 6)) * scales).astype(np.float32)
    h = g.tensor("dw", np.float32)
    g.add_op("DEPTHWISE_CONV_2D", [x, g.const("w1", w1), g.const("b1", rng.normal(0, .1, 6)
                                                                   .astype(np.float32) * scales)],
             [h], dict(CONV, depth_multiplier=1, fused_activation_function=act1), name="dw")
    y = g.tensor("pw", np.float32)
    g.add_op("CONV_2D", [h, g.const("w2", rng.standard_normal((4, 1, 1, 6)).astype(np.float32)),
                         g.const("b2", np.zeros(4, np.float32))],
             [y], dict(CONV, fused_activation_function=act2), name="pw")
    g.outputs = [y]
    infer_shapes(g)
    return g


def inputs(n=8, seed=1):
    rng = np.random.default_rng(seed)
    return [{"x": rng.standard_normal((1, 8, 8, 6)).astype(np.float32)} for _ in range(n)]


def assert_same_function(before, after, samples, rtol=1e-5):
    ref = run_all(export_tflite(before), samples)
    out = run_all(export_tflite(after), samples)
    for a, b in zip(ref, out):
        np.testing.assert_allclose(b[0], a[0], rtol=rtol, atol=rtol * np.abs(a[0]).max())


@pytest.mark.parametrize("act", [Activation.NONE, Activation.RELU])
def test_depthwise_pointwise_pair_is_equalized_exactly(act):
    g = dw_pw_graph(act)
    before = copy.deepcopy(g)
    report = equalize(g)
    assert report.pairs == [("dw", "pw")]
    (pair,) = find_pairs(g)
    r1, r2 = output_ranges(pair.first), input_ranges(pair.second, 6)
    np.testing.assert_allclose(r1, r2, rtol=1e-6)                 # r1_i == r2_i
    r1_before = output_ranges(find_pairs(before)[0].first)
    r2_before = input_ranges(find_pairs(before)[0].second, 6)
    np.testing.assert_allclose(r1, np.sqrt(r1_before * r2_before), rtol=1e-5)
    assert_same_function(before, g, inputs())


def test_equalization_helps_per_tensor_weights():
    g = dw_pw_graph(Activation.RELU, spread=1000.0)
    samples = inputs(16)
    ref = run_all(export_tflite(g), samples)

    def weights_only(graph):
        from edgelite.converter.quantize.weights_only import dynamic_range
        graph = copy.deepcopy(graph)
        dynamic_range(graph, per_channel=False)
        return sqnr(ref, run_all(export_tflite(graph), samples))

    plain = weights_only(g)
    equalize(g)
    gain = weights_only(g) - plain
    print(f"\nper-tensor weights: {plain:.1f} dB -> {plain + gain:.1f} dB after equalization")
    assert gain > 5


def test_non_homogeneous_activation_and_shared_tensor_are_skipped():
    g = dw_pw_graph(Activation.RELU_N1_TO_1)
    report = equalize(g)
    assert report.pairs == [] and ("dw", "activation RELU_N1_TO_1") in report.skipped
    g = dw_pw_graph(Activation.RELU)
    g.outputs.append(g.ops[0].outputs[0])                      # dw is also a graph output
    report = equalize(g)
    assert report.pairs == [] and "other readers" in dict(report.skipped)["dw"]


def test_relu6_needs_data_and_pins_the_channels_that_clip():
    g = dw_pw_graph(Activation.RELU6)
    assert relu6_layers(g) == ["dw"]
    report = equalize(copy.deepcopy(g))                        # no data: skipped
    assert report.pairs == [] and "no calibration data" in dict(report.skipped)["dw"]
    samples = [{"x": s["x"] * 30} for s in inputs()]          # large inputs: some clip at 6
    observed = channel_maxima(export_tflite(g), samples, ["dw"])["dw"]
    clipping = observed >= 6.0
    assert clipping.any() and not clipping.all()
    before = copy.deepcopy(g)
    w_before = g.ops[0].inputs[1].data.copy()
    report = equalize(g, {"dw": observed})
    assert report.pairs == [("dw", "pw")] and report.relu6_pinned == {"dw": clipping.sum()}
    assert g.ops[0].options["fused_activation_function"] == Activation.RELU6
    np.testing.assert_array_equal(g.ops[0].inputs[1].data[..., clipping],
                                  w_before[..., clipping])   # clipping channels: s = 1
    assert_same_function(before, g, samples)                  # exact on the calibration data
    after = channel_maxima(export_tflite(g), samples, ["dw"])["dw"]
    assert (after[~clipping] < 6.0).all()


def test_sample_models_keep_their_outputs():
    """conv -> maxpool -> conv -> flatten -> FC (tf1_cnn); conv(RELU6) -> depthwise ->
    pointwise -> avgpool -> mean -> FC (keras_cnn)."""
    samples = list(load_samples(MODELS / "digits_calib.npy", ["input"]))[:32]
    expected = {"tf1_cnn": [("conv1/Relu", "conv2/Relu"), ("conv2/Relu", "fc/logits")],
                "keras_cnn": [("keras_cnn/conv1_relu6/Relu6", "keras_cnn/dw2_relu/Relu"),
                              ("keras_cnn/dw2_relu/Relu", "keras_cnn/pw2_relu/Relu"),
                              ("keras_cnn/pw2_relu/Relu", "keras_cnn/logits/BiasAdd")]}
    for name, pairs in expected.items():
        g = convert_detailed(MODELS / f"{name}.pb").graph
        before = copy.deepcopy(g)
        observed = channel_maxima(export_tflite(g), samples, relu6_layers(g))
        report = equalize(g, observed)
        assert report.pairs == pairs
        assert_same_function(before, g, samples, rtol=1e-4)
        for pair in find_pairs(g, observed):
            if pair.relu6_max is None:      # ReLU / NONE pairs: ranges equal after the sweeps
                r1 = output_ranges(pair.first)
                np.testing.assert_allclose(r1, input_ranges(pair.second, r1.size), rtol=1e-3)


def test_quantize_option_equalizes_before_calibration():
    q = QuantizeOptions(calib=str(MODELS / "digits_calib.npy"), equalize=True,
                        per_channel=False, force_transforms=True)  # (not checked: auto.py)
    result = convert_detailed(MODELS / "keras_cnn.pb", ConvertOptions(quantize=q))
    report = result.quantization.equalization
    assert len(report.pairs) == 3 and report.iterations >= 1
    plain = convert_detailed(MODELS / "keras_cnn.pb", ConvertOptions(quantize=QuantizeOptions(
        calib=str(MODELS / "digits_calib.npy"), per_channel=False)))
    # calibration ran on the equalized graph: the scaled activations have other ranges
    name = "keras_cnn/dw2_relu/Relu"
    assert result.quantization.ranges[name] != plain.quantization.ranges[name]
