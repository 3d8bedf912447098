"""Empirical bias correction: the mean output error per channel shrinks on calibration data."""

import copy

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.shape_inference import infer_shapes
from edgelite.converter.export import export_tflite
from edgelite.converter.ir import Activation, Graph
from edgelite.converter.quantize import QuantizeOptions
from edgelite.converter.quantize.bias_correction import bias_correct
from edgelite.converter.quantize.calibrate import collect_ranges, load_samples
from edgelite.converter.quantize.metrics import sqnr
from edgelite.converter.quantize.params import QType
from edgelite.converter.quantize.rewrite import RewriteConfig, quantize_graph
from edgelite.converter.runner import ModelRunner, run_all
from edgelite.converter.quantize.staged import run_staged
from edgelite.interpreter import Interpreter
from edgelite.interpreter.errors import EdgeliteError
from tests.conftest import MODELS

CALIB = MODELS / "digits_calib.npy"
SAMPLES = list(load_samples(CALIB, ["input"]))


def mean_error(float_model, quant_model, tensor, samples):
    """Per channel E[y_float - y_quant] of `tensor` over the samples."""
    f, q = ModelRunner(float_model, True), ModelRunner(quant_model, True)
    total = 0.0
    for s in samples:
        f.run(s)
        q.run(s)
        d = (f.tensor(tensor) - q.tensor(tensor)).astype(np.float64)
        total = total + d.reshape(-1, d.shape[-1]).mean(axis=0)
    return total / len(samples)


def convert(name, **kw):
    q = QuantizeOptions(calib=str(CALIB), per_channel=False, **kw)
    return convert_detailed(MODELS / f"{name}.pb", ConvertOptions(quantize=q))


@pytest.mark.parametrize("name,logits", [("tf1_cnn", "fc/logits"),
                                         ("keras_cnn", "keras_cnn/logits/BiasAdd")])
def test_bias_correction_reduces_the_mean_output_error(name, logits, capsys):
    float_model = convert_detailed(MODELS / f"{name}.pb").model
    plain, corrected = convert(name), convert(name, bias_correction=True)
    before = mean_error(float_model, plain.model, logits, SAMPLES)
    after = mean_error(float_model, corrected.model, logits, SAMPLES)
    ref = run_all(float_model, SAMPLES)
    s0, s1 = sqnr(ref, run_all(plain.model, SAMPLES)), sqnr(ref, run_all(corrected.model,
                                                                          SAMPLES))
    with capsys.disabled():
        print(f"\n{name} per-tensor, calibration data: mean |E[y - y_q]| of the logits "
              f"{np.abs(before).mean():.4f} -> {np.abs(after).mean():.4f}; output SQNR "
              f"{s0:.2f} -> {s1:.2f} dB")
    # what bias correction optimises; the output SQNR (softmax, a few samples dominate) is
    # reported, not asserted (the bench / test_quant_methods.py table covers it)
    assert np.abs(after).mean() < 0.2 * np.abs(before).mean()
    report = corrected.quantization.bias_correction
    assert logits in report.layers and len(report.layers) == (3 if name == "tf1_cnn" else 4)
    # only the int32 biases changed
    for a, b in zip(plain.graph.tensors(), corrected.graph.tensors()):
        if a.is_const and a.dtype != np.int32:
            np.testing.assert_array_equal(a.data, b.data)


def biased_fc_graph():
    """x[1,32] >= 0 -> FULLY_CONNECTED 32->4 whose small weights all round up (per tensor)."""
    g = Graph()
    x = g.tensor("x", np.float32, (1, 32))
    g.inputs = [x]
    w = np.full((4, 32), 0.004, np.float32)
    w[:, 0] = 1.0                    # scale 1/127: 0.004 / (1/127) = 0.51 -> rounds to 1
    y = g.tensor("y", np.float32)
    g.add_op("FULLY_CONNECTED", [x, g.const("w", w), g.const("b", np.zeros(4, np.float32))],
             [y], dict(fused_activation_function=Activation.NONE, weights_format=0,
                       keep_num_dims=False, asymmetric_quantize_inputs=False), name="fc")
    g.outputs = [y]
    infer_shapes(g)
    return g


def test_systematic_weight_rounding_bias_is_removed():
    g = biased_fc_graph()
    rng = np.random.default_rng(0)
    samples = [{"x": rng.uniform(0, 1, (1, 32)).astype(np.float32)} for _ in range(64)]
    ranges = collect_ranges(export_tflite(g), samples, None).ranges
    q = copy.deepcopy(g)
    pairs = list(zip(g.ops, q.ops))
    quantize_graph(q, ranges, RewriteConfig(QType.INT8, per_channel=False))
    before = mean_error(export_tflite(g), export_tflite(q), "y", samples)
    report = bias_correct(g, q, pairs, samples)
    after = mean_error(export_tflite(g), export_tflite(q), "y", samples)
    out_scale = float(q.ops[1].outputs[0].quant.scale[0])
    # every small weight is 0.00787 instead of 0.004: E[error] = -31 * 0.0039 * E[x] = -0.06
    assert before == pytest.approx(np.full(4, -31 * (1 / 127 - 0.004) * 0.5), rel=0.15)
    assert np.abs(after).max() < out_scale             # within one output step
    (layer,) = report.layers         # the graph output's quantized tensor: "y_int8"
    assert report.mean_abs_shift[layer] == pytest.approx(np.abs(before).mean(), rel=0.1)


def test_staged_run_matches_the_whole_model():
    q = convert("keras_cnn").graph
    staged = run_staged(q, SAMPLES[:10])
    interp = Interpreter(model_content=export_tflite(q))
    interp.allocate_tensors()
    inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
    for s, (y,) in zip(SAMPLES[:10], staged):
        interp.set_tensor(inp["index"], s["input"][None])
        interp.invoke()
        np.testing.assert_array_equal(y, interp.get_tensor(out["index"]))


def test_bias_correction_needs_calibration_data():
    with pytest.raises(EdgeliteError, match="give --calib"):
        convert_detailed(MODELS / "tf1_cnn.pb", ConvertOptions(quantize=QuantizeOptions(
            bias_correction=True, default_range=(-8, 8))))
