"""Selective quantization: --keep-float by name / op type, and the --min-sqnr search."""

import numpy as np
import pytest
from click.testing import CliRunner

from edgelite.cli.main import main as cli
from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.shape_inference import infer_shapes
from edgelite.converter.ir import Activation, Graph
from edgelite.converter.quantize import QuantizeOptions, QuantMode, quantize
from edgelite.converter.quantize.calibrate import load_samples
from edgelite.converter.quantize.metrics import sqnr
from edgelite.converter.runner import run_all
from edgelite.errors import EdgeliteError
from tests.conftest import MODELS

CALIB = MODELS / "digits_calib.npy"
SAMPLES = list(load_samples(CALIB, ["input"]))


def convert(name="tf1_cnn", **kw):
    return convert_detailed(MODELS / f"{name}.pb",
                            ConvertOptions(quantize=QuantizeOptions(calib=str(CALIB), **kw)))


def float_ops(graph):
    """Ops computing in float: the non-DEQUANTIZE ops with a float output."""
    return [op for op in graph.ops if op.type not in ("QUANTIZE", "DEQUANTIZE")
            and op.outputs[0].dtype == np.float32]


def test_sqnr():
    ref = np.array([3.0, 4.0])
    assert sqnr(ref, ref) == float("inf")
    assert sqnr(ref, ref + [0.0, 0.5]) == pytest.approx(10 * np.log10(25 / 0.25))
    assert sqnr([ref, ref], [ref, ref + [0.0, 0.5]]) == pytest.approx(10 * np.log10(50 / 0.25))
    with pytest.raises(ValueError):
        sqnr(ref, np.zeros(3))


def test_keep_one_conv_float_by_name(litert):
    plain = convert().graph.op_counts()
    assert plain == {"CONV_2D": 2, "DEQUANTIZE": 1, "FULLY_CONNECTED": 1, "MAX_POOL_2D": 1,
                     "QUANTIZE": 1, "RESHAPE": 1, "SOFTMAX": 1}
    result = convert(keep_float=("conv2/Relu",))
    counts = result.graph.op_counts()
    # exactly one DEQUANTIZE before the float conv and one QUANTIZE after it
    assert counts == dict(plain, DEQUANTIZE=2, QUANTIZE=2)
    (kept,) = float_ops(result.graph)
    assert kept.type == "CONV_2D" and kept.outputs[0].name == "conv2/Relu"
    assert kept.inputs[1].dtype == np.float32 and kept.inputs[2].dtype == np.float32
    i = result.graph.ops.index(kept)
    assert result.graph.ops[i - 1].type == "DEQUANTIZE"
    assert result.graph.ops[i + 1].type == "QUANTIZE"
    # the TF node name of the conv ("conv2/Conv2D") selects the same op
    assert convert(keep_float=("conv2/Conv2D",)).graph.op_counts() == counts
    # and it runs in LiteRT
    interp = litert.Interpreter(model_content=result.model)
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], SAMPLES[0]["input"][None])
    interp.invoke()
    y = interp.get_tensor(interp.get_output_details()[0]["index"])
    ref = run_all(convert_detailed(MODELS / "tf1_cnn.pb").model, SAMPLES[:1])[0][0]
    assert np.abs(y - ref).max() < 0.05


def test_keep_an_op_type_float():
    result = convert(keep_float=("CONV_2D",))
    counts = result.graph.op_counts()
    # conv1 float (float input: no QUANTIZE at the input), then QUANTIZE for the pool,
    # DEQUANTIZE before conv2, QUANTIZE after it, DEQUANTIZE of the output
    assert counts == {"CONV_2D": 2, "DEQUANTIZE": 2, "FULLY_CONNECTED": 1, "MAX_POOL_2D": 1,
                      "QUANTIZE": 2, "RESHAPE": 1, "SOFTMAX": 1}
    assert sorted(op.type for op in float_ops(result.graph)) == ["CONV_2D", "CONV_2D"]
    lower = convert(keep_float=("conv_2d", "SOFTMAX")).graph
    assert sorted(op.type for op in float_ops(lower)) == ["CONV_2D", "CONV_2D", "SOFTMAX"]


def test_unknown_keep_float_name():
    with pytest.raises(EdgeliteError, match=r"'conv9' matches no op: give an op type "
                                            r"\(CONV_2D, FULLY_CONNECTED.*'conv1/Relu'"):
        convert(keep_float=("conv9",))


def skewed_graph():
    """x[1,16] -> FC1 -> FC2 -> FC3. Input channel 0 spans +-1000, the rest +-1: an int8
    input keeps almost nothing of channels 1..15, and FC1 weighs channel 0 by 1e-3. Only
    keeping FC1 float (so the input is never quantized) fixes the output."""
    rng = np.random.default_rng(0)
    g = Graph()
    x = g.tensor("x", np.float32, (1, 16))
    g.inputs = [x]
    t = x
    for k, (n_in, n_out) in enumerate([(16, 16), (16, 16), (16, 8)], start=1):
        w = rng.normal(0, 0.3, (n_out, n_in)).astype(np.float32)
        if k == 1:
            w[:, 0] *= 1e-3
        y = g.tensor(f"fc{k}", np.float32)
        g.add_op("FULLY_CONNECTED", [t, g.const(f"w{k}", w),
                                     g.const(f"b{k}", rng.normal(0, .1, n_out).astype(np.float32))],
                 [y], dict(fused_activation_function=Activation.RELU if k < 3 else
                           Activation.NONE, weights_format=0, keep_num_dims=False,
                           asymmetric_quantize_inputs=False), name=f"fc{k}")
        t = y
    g.outputs = [t]
    infer_shapes(g)
    return g


def test_min_sqnr_keeps_the_one_culprit(tmp_path):
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (64, 16)).astype(np.float32)
    x[:, 0] *= 1000
    np.save(tmp_path / "x.npy", x)
    g = skewed_graph()
    report = quantize(g, QuantizeOptions(calib=str(tmp_path / "x.npy"), min_sqnr=35.0)).selective
    print(f"\n{report.summary()}")
    assert report.initial_db < 35.0 <= report.final_db and report.met
    assert report.kept == ["fc1"]
    assert [n for n, _ in report.sensitivity][0] == "fc1"
    # FC1's constants stored as float32 instead of int8 weights / int32 bias
    assert (report.float_weight_bytes, report.int_weight_bytes) == (16 * 16 * 4 + 16 * 4,
                                                                    16 * 16 + 16 * 4)
    assert report.size_cost == 16 * 16 * 3
    assert [op.type for op in float_ops(g)] == ["FULLY_CONNECTED"]


def test_min_sqnr_on_keras_cnn():
    plain = convert("keras_cnn", min_sqnr=0.0).quantization.selective
    assert plain.met and plain.kept == [] and plain.evaluations == 1
    target = plain.initial_db + 2.0                   # plain int8 misses this
    result = convert("keras_cnn", min_sqnr=target)
    report = result.quantization.selective
    print(f"\n{report.summary()}")
    assert report.met and report.final_db >= target
    assert 1 <= len(report.kept) <= 2
    assert len(float_ops(result.graph)) == len(report.kept)
    ref = run_all(convert_detailed(MODELS / "keras_cnn.pb").model, SAMPLES)
    assert sqnr(ref, run_all(result.model, SAMPLES)) == pytest.approx(report.final_db)
    # the greedy result is minimal: dropping any kept op misses the target
    for name in report.kept:
        rest = tuple(n for n in report.kept if n != name)
        q = convert("keras_cnn", keep_float=rest) if rest else convert("keras_cnn")
        assert sqnr(ref, run_all(q.model, SAMPLES)) < target


def test_cli_flags(tmp_path):
    out = tmp_path / "m.tflite"
    r = CliRunner().invoke(cli, [
        "convert", str(MODELS / "keras_cnn.pb"), "-o", str(out), "--quantize", "int8",
        "--calib", str(CALIB), "--calib-method", "percentile:99.9", "--per-tensor",
        "--equalize", "--bias-correction", "--keep-float", "SOFTMAX", "--min-sqnr", "30"])
    assert r.exit_code == 0, r.output
    assert "equalized 3 layer pair(s)" in r.output
    assert "bias correction: 4 of 4 layer(s)" in r.output
    assert "min-sqnr 30 dB" in r.output and out.exists()
    r = CliRunner().invoke(cli, ["convert", str(MODELS / "keras_cnn.pb"), "-o", str(out),
                                 "--quantize", "int8", "--calib", str(CALIB),
                                 "--calib-method", "kl"])
    assert r.exit_code == 2 and "calibration method 'kl'" in r.output


def test_max_accuracy_drop_keeps_the_one_culprit(tmp_path):
    """Labels = the float model's own top-1: plain int8 (fc1's input range ruined by one
    huge channel) loses accuracy; keeping fc1 float brings the drop within 5 points."""
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (64, 16)).astype(np.float32)
    x[:, 0] *= 1000
    np.save(tmp_path / "x.npy", x)
    ref = run_all(convert_detailed_graph(skewed_graph()), [{"x": xi} for xi in x])
    np.save(tmp_path / "y.npy", np.array([r[0].argmax() for r in ref]))
    opts = dict(calib=str(tmp_path / "x.npy"), labels=str(tmp_path / "y.npy"))
    plain = quantize(skewed_graph(), QuantizeOptions(max_accuracy_drop=1.0, **opts)).selective
    assert plain.met and plain.kept == [] and plain.initial.accuracy < 0.9
    g = skewed_graph()
    report = quantize(g, QuantizeOptions(max_accuracy_drop=0.05, **opts)).selective
    print(f"\n{report.summary()}")
    assert report.goal.float_accuracy == 1.0
    assert report.met and report.kept == ["fc1"] and report.final.accuracy >= 0.95
    assert "max-accuracy-drop 5 points" in report.summary()
    assert [op.type for op in float_ops(g)] == ["FULLY_CONNECTED"]


def convert_detailed_graph(g):
    from edgelite.converter.export import export_tflite
    return export_tflite(g)


@pytest.mark.parametrize("kw, message", [
    (dict(max_accuracy_drop=0.01), "needs --labels"),
    (dict(max_accuracy_drop=1.5, labels="y.npy"), "fraction in [0, 1]"),
    (dict(min_sqnr=30.0, max_accuracy_drop=0.01, labels="y.npy"), "not both"),
    (dict(labels="y.npy"), "only used by --max-accuracy-drop"),
])
def test_accuracy_goal_errors(kw, message):
    with pytest.raises(EdgeliteError, match=message.replace("[", r"\[").replace("]", r"\]")):
        quantize(skewed_graph(), QuantizeOptions(calib=str(CALIB), **kw))


def test_cli_max_accuracy_drop(tmp_path):
    """On keras_cnn with the held-out digits as labelled calibration data: the drop stays
    within half a point (one sample is 0.25 points)."""
    out = tmp_path / "m.tflite"
    test = MODELS / "digits_test.npz"
    r = CliRunner().invoke(cli, [
        "convert", str(MODELS / "keras_cnn.pb"), "-o", str(out), "--quantize", "int8",
        "--per-tensor", "--calib", str(test), "--labels", str(test),
        "--max-accuracy-drop", "0.005"])
    assert r.exit_code == 0, r.output
    assert "max-accuracy-drop 0.5 points (float accuracy 96.22%)" in r.output
    assert " met" in r.output and out.exists()
    r = CliRunner().invoke(cli, [
        "convert", str(MODELS / "keras_cnn.pb"), "-o", str(out), "--quantize", "int8",
        "--calib", str(CALIB), "--max-accuracy-drop", "0.01"])
    assert r.exit_code == 1 and "needs --labels" in r.output


def test_min_sqnr_with_the_16x8_fallback():
    """--fallback int16: the picked ops run with int16 activations (int8 weights kept), no
    op computes in float, the target is met, and LiteRT runs the file as edgelite does."""
    from tests.support import assert_bit_exact

    plain = convert("keras_cnn", min_sqnr=0.0).quantization.selective
    target = plain.initial_db + 0.5  # (int16 activations leave the int8 weights' error)
    result = convert("keras_cnn", min_sqnr=target, fallback="int16")
    report = result.quantization.selective
    assert report.met and report.final_db >= target and report.wide == report.kept != []
    assert float_ops(result.graph) == [] and report.size_cost == 0
    wide = [op for op in result.graph.ops if op.outputs[0].name in report.wide]
    assert all(op.outputs[0].dtype == np.int16 for op in wide)
    assert "16x8" in report.summary()
    ref = run_all(convert_detailed(MODELS / "keras_cnn.pb").model, SAMPLES)
    assert sqnr(ref, run_all(result.model, SAMPLES)) == pytest.approx(report.final_db)
    assert_bit_exact(result.model, [SAMPLES[0]["input"][None]])


def test_16x8_fallback_needs_an_int8_model():
    with pytest.raises(EdgeliteError, match="they need --quantize int8, not uint8"):
        convert("tf1_cnn", mode=QuantMode.UINT8, min_sqnr=30.0, fallback="int16")
