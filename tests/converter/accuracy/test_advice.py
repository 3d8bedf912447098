"""`compare` says what to do about each tensor (advice.py): every diagnosis triggered by a
small model built here, with its numbers checked against values computed from the float
model; and on the trained fashion_xception, the advice's action applied really helps."""

from __future__ import annotations

import functools
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

from edgelite import Interpreter
from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.accuracy import compare
from edgelite.converter.accuracy.advice import (AdviceKind, RangeStats, arithmetic,
                                               output_rounding)
from edgelite.converter.accuracy.report import compare_csv, compare_json
from edgelite.converter.quantize import QuantizeOptions
from tests.conftest import MODELS

from ..tfgraph import GraphBuilder

F32 = np.dtype(np.float32)


def _int8(pb: bytes, calib: np.ndarray, tmp_path, **options) -> bytes:
    path = tmp_path / "calib.npy"
    np.save(path, calib.astype(np.float32))
    quant = QuantizeOptions(calib=str(path), **options)
    return convert_detailed(pb, ConvertOptions(quantize=quant)).model


def _float_values(pb: bytes, x: np.ndarray, name: str) -> np.ndarray:
    """Every sample's value of tensor `name` in the float model, stacked."""
    it = Interpreter(model_content=convert_detailed(pb).model, preserve_all_tensors=True)
    it.allocate_tensors()
    inp = it.get_input_details()[0]
    index = {d["name"]: d["index"] for d in it.get_tensor_details()}[name]
    out = []
    for sample in x:
        it.set_tensor(inp["index"], sample.reshape(inp["shape"]).astype(np.float32))
        it.invoke()
        out.append(np.array(it.get_tensor(index), np.float64))
    return np.stack(out)


def _qparams(model: bytes, report, name: str) -> tuple[float, int]:
    """The quantization of the quantized model's tensor matched to `name`."""
    it = Interpreter(model_content=model)
    d = {d["name"]: d for d in it.get_tensor_details()}[_row(report, name).quant_name]
    scale, zero_point = d["quantization"]
    return float(scale), int(zero_point)


def _row(report, name):
    return next(t for t in report.tensors if t.name == name)


def dense(w: np.ndarray, b: np.ndarray | None = None, softmax: bool = False) -> bytes:
    """x[1, I] -> MatMul W[I, O] (+ BiasAdd b) (-> Softmax "probs")."""
    g = GraphBuilder()
    g.placeholder("x", [1, w.shape[0]])
    g.const("w", w.astype(np.float32))
    head = g.node("logits" if b is None else "mm", "MatMul", ["x", "w"], T=F32)
    if b is not None:
        g.const("b", b.astype(np.float32))
        head = g.node("logits", "BiasAdd", [head, "b"], T=F32)
    if softmax:
        g.node("probs", "Softmax", [head], T=F32)
    return g.bytes()


def test_fixed_output_softmax(tmp_path):
    """A confident 10-class softmax: the int8 output step is 1/256, so every probability
    below 1/512 reads 0 -- advice: a float softmax, --keep-float SOFTMAX, no weight cost;
    applying it makes every probability exact given the logits (op SQNR inf)."""
    rng = np.random.default_rng(0)
    w = rng.normal(0, 3.0, (6, 10))
    pb = dense(w, np.zeros(10), softmax=True)
    x = rng.uniform(-1, 1, (40, 6))
    report = compare(pb, _int8(pb, x, tmp_path), x)
    probs = _row(report, "probs")
    a = probs.advice
    assert a.kind is AdviceKind.FIXED_OUTPUT
    assert a.keep_float == ("SOFTMAX",) and a.cost_bytes == 0
    ref = _float_values(pb, x, "probs")
    want = np.count_nonzero((ref != 0) & (ref < 1 / 512)) / ref.size
    assert want > 0.3 and a.fraction == pytest.approx(want, abs=1e-12)
    assert a.step == 1 / 256
    assert "--keep-float SOFTMAX (+0 bytes)" in a.text and f"{100 * want:.1f} %" in a.text
    kept = compare(pb, _int8(pb, x, tmp_path, keep_float=a.keep_float), x)
    assert _row(kept, "probs").op_sqnr_db == math.inf
    assert kept.output_sqnr_db > report.output_sqnr_db


def test_clipping(tmp_path):
    """Calibration samples have one non-zero input each, so the sum's range is [-1, 1];
    held-out samples have four: the logits clip. The input's range [-1, 1] covers both."""
    pb = dense(np.ones((4, 1)))
    calib = np.concatenate([np.eye(4), -np.eye(4)])
    x = np.random.default_rng(1).uniform(-1, 1, (200, 4))
    model = _int8(pb, calib, tmp_path)
    report = compare(pb, model, x)
    logits = _row(report, "logits")
    a = logits.advice
    assert a.kind is AdviceKind.CLIPPING and a.flags == ("--calib-method minmax",)
    scale, zp = _qparams(model, report, "logits")
    ref = _float_values(pb, x, "logits")
    lo, hi = scale * (-128 - zp), scale * (127 - zp)
    want = np.count_nonzero((ref < lo - scale / 2) | (ref > hi + scale / 2)) / ref.size
    assert want > 0.2 and a.fraction == pytest.approx(want, abs=1e-12)
    assert f"clips {100 * want:.2f} % of values" in a.text
    assert _row(report, "x").advice.kind is AdviceKind.RESOLUTION  # the input does not clip
    # The op ends the model: float to the output is offered (4 weights, 3 bytes more each).
    assert a.keep_float == ("FULLY_CONNECTED",) and a.cost_bytes == 12
    kept = compare(pb, _int8(pb, calib, tmp_path, keep_float=a.keep_float), x)
    assert kept.output_sqnr_db > report.output_sqnr_db + 10.0


def test_input_clipping_names_input_range(tmp_path):
    """Held-out inputs twice the calibrated range: the model input itself clips; the fix is
    its real range (--input-range), not a calibration method."""
    pb = dense(np.ones((4, 1)))
    x = np.random.default_rng(5).uniform(-1, 1, (100, 4))
    report = compare(pb, _int8(pb, x / 2, tmp_path), x)
    a = _row(report, "x").advice
    assert a.kind is AdviceKind.CLIPPING and a.flags == ("--input-range 'x':MIN,MAX",)
    assert a.fraction > 0.4 and "give the input's real range" in a.text


def hard_swish() -> bytes:
    """x[1, 64] -> x * relu6(x + 3) / 6 (one HARD_SWISH)."""
    g = GraphBuilder()
    g.placeholder("x", [1, 64])
    g.const("three", np.float32(3))
    g.const("sixth", np.float32(1 / 6))
    g.node("a", "AddV2", ["x", "three"], T=F32)
    g.node("r", "Relu6", ["a"], T=F32)
    g.node("m", "Mul", ["x", "r"], T=F32)
    g.node("y", "Mul", ["m", "sixth"], T=F32)
    return g.bytes()


def test_resolution(tmp_path):
    """Uniform inputs fill the range (3.5x the RMS): the HARD_SWISH output's rounding is
    all its error and nothing but more bits helps -- a float op at the end of the model."""
    x = np.random.default_rng(0).uniform(-4, 4, (50, 64))
    model = _int8(hard_swish(), x, tmp_path)
    report = compare(hard_swish(), model, x)
    y = _row(report, "y")
    a = y.advice
    assert y.op == "HARD_SWISH" and a.kind is AdviceKind.RESOLUTION
    assert a.keep_float == ("HARD_SWISH",) and a.cost_bytes == 0 and a.flags == ()
    assert a.step == pytest.approx(_qparams(model, report, "y")[0], rel=1e-7)
    assert "the range is well used" in a.text
    x_advice = _row(report, "x").advice
    assert x_advice.kind is AdviceKind.RESOLUTION and x_advice.keep_float == ()
    assert x_advice.text.endswith("int16 activations (16x8: 256x finer steps, same int8 "
                                  "weights): --quantize int16x8")  # not "unavailable"
    kept = compare(hard_swish(), _int8(hard_swish(), x, tmp_path, keep_float=a.keep_float), x)
    assert _row(kept, "y").op_sqnr_db == math.inf


def test_arithmetic_names_the_op():
    """The fallback (no weights, no clipping, not the output's rounding): the integer
    kernel's own arithmetic; names from files are quoted / escaped."""
    report = SimpleNamespace(op="HARD_SWISH", name="a\nb")
    a = arithmetic(report, ("a\nb",), 0, None)
    assert a.kind is AdviceKind.ARITHMETIC and a.keep_float == ("a\nb",)
    assert a.text == ("integer HARD_SWISH arithmetic loses precision: keep it float: "
                      "--keep-float 'a\\nb' (+0 bytes)")


def mean_model() -> bytes:
    """x[1, 8, 8, 4] -> Mean over H, W -> "gap"."""
    g = GraphBuilder()
    g.placeholder("x", [1, 8, 8, 4])
    g.const("axes", np.array([1, 2], np.int32))
    g.node("gap", "Mean", ["x", "axes"], T=F32, Tidx=np.dtype(np.int32), keep_dims=False)
    return g.bytes()


def spikes(rng, n: int) -> np.ndarray:
    """One pixel per channel in [0.5, 1], the rest 0: the mean is 1/128 .. 1/64."""
    x = np.zeros((n, 8, 8, 4))
    for s in range(n):
        for c in range(4):
            x[s, rng.integers(8), rng.integers(8), c] = rng.uniform(0.5, 1.0)
    return x


def test_range_too_wide_mean(tmp_path):
    """The issue's global-pool case: one calibration sample with a whole channel at 1 gives
    the MEAN output the range [0, 1] while its typical values are 1/128 .. 1/64, a few steps
    (the input's 0 .. 1 pixels are represented well). Advice: RANGE with the measured step
    and signal RMS; the model ends at the MEAN, so keeping it float removes the rounding."""
    rng = np.random.default_rng(2)
    x = spikes(rng, 100)
    calib = np.concatenate([spikes(rng, 20), np.ones((1, 8, 8, 4))])
    model = _int8(mean_model(), calib, tmp_path)
    report = compare(mean_model(), model, x)
    gap = _row(report, "gap")
    assert report.culprit() is gap
    a = gap.advice
    assert a.kind is AdviceKind.RANGE
    assert a.flags == ("--calib-method mse", "--calib-method auto")
    assert a.keep_float == ("MEAN",) and a.cost_bytes == 0
    scale, _ = _qparams(model, report, "gap")
    ref = _float_values(mean_model(), x, "gap")
    rms = math.sqrt(float(np.mean(ref ** 2)))
    assert a.step == pytest.approx(scale, rel=1e-7) and a.rms == pytest.approx(rms, rel=1e-9)
    assert f"step {scale:.3g} vs signal RMS {rms:.3g}" in a.text
    assert gap.op_sqnr_db < 25.0
    kept = compare(mean_model(), _int8(mean_model(), calib, tmp_path, keep_float=a.keep_float), x)
    assert _row(kept, "gap").op_sqnr_db == math.inf
    assert kept.output_sqnr_db > report.output_sqnr_db + 20.0


@pytest.mark.parametrize("held_out", [1.0, 1.05])
def test_error_from_input(tmp_path, held_out):
    """x[:, 0] reaches 100 once in calibration, so the input's step is ~0.4 and x[:, 1]
    (|x| <= 1) is mostly lost there; the MatMul reads only x[:, 1] and its own output range is
    about [-1, 1]: its error comes in with the input, which is named. Held-out values up to
    1.3 also clip the MatMul's own range: said too, with the share clipped."""
    pb = dense(np.array([[0.0, 0.0], [1.0, 0.5]]))
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (100, 2))
    calib = np.concatenate([x, [[100.0, 0.0]]])
    x = x * held_out
    model = _int8(pb, calib, tmp_path)
    report = compare(pb, model, x)
    logits, inp = _row(report, "logits"), _row(report, "x")
    a = logits.advice
    assert a.kind is AdviceKind.FROM_INPUT and a.source == "x"
    assert a.input_sqnr_db == inp.sqnr_db
    assert inp.sqnr_db + 6.0 <= logits.op_sqnr_db
    assert f"input SQNR {inp.sqnr_db:.1f} dB" in a.text and "'x'" in a.text
    scale, zp = _qparams(model, report, "logits")
    ref = _float_values(pb, x, "logits")
    lo, hi = scale * (-128 - zp), scale * (127 - zp)
    clipped = np.count_nonzero((ref < lo - scale / 2) | (ref > hi + scale / 2)) / ref.size
    assert bool(clipped > 0.001) is (held_out > 1)
    assert ("also clips" in a.text) is (held_out > 1)
    if held_out > 1:
        assert a.text.endswith(f"also clips {100 * clipped:.2f} % of values")


@pytest.mark.parametrize("per_channel", [True, False])
def test_weight_rounding(tmp_path, per_channel):
    """Weights of 10 on inputs that are always 0 set every weight scale (per channel: both
    channels have one), so the 0.05 weights that matter round to 0 or +-1 step: the error is
    the weights', not the output's rounding. Keeping the op float costs 3 bytes a weight."""
    w = np.full((8, 2), 0.05)
    w[4:] = 10.0
    w[:4, 1] = -0.07
    pb = dense(w)
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.uniform(-1, 1, (100, 4)), np.zeros((100, 4))], axis=1)
    model = _int8(pb, x, tmp_path, per_channel=per_channel)
    report = compare(pb, model, x)
    a = _row(report, "logits").advice
    assert a.kind is AdviceKind.WEIGHTS
    assert a.keep_float == ("FULLY_CONNECTED",) and a.cost_bytes == 3 * w.size
    assert ("one scale for the whole tensor" in a.text) is (not per_channel)
    assert a.flags == (("--bias-correction",) if per_channel else ("--equalize",))
    kept = compare(pb, _int8(pb, x, tmp_path, per_channel=per_channel,
                             keep_float=a.keep_float), x)
    assert kept.output_sqnr_db > report.output_sqnr_db + 10.0


def test_advice_in_table_json_and_csv(tmp_path):
    pb = dense(np.ones((4, 1)))
    report = compare(pb, _int8(pb, np.concatenate([np.eye(4), -np.eye(4)]), tmp_path),
                     np.random.default_rng(1).uniform(-1, 1, (50, 4)))
    text = _row(report, "logits").advice.text
    table = report.table()
    assert "what to do:" in table and f"  1. {text}" in table
    rows = json.loads(compare_json(report))["tensors"]
    assert rows[0]["advice"]["kind"] == "clipping" and rows[0]["advice"]["text"] == text
    assert compare_csv(report).splitlines()[0].endswith(",advice")
    assert text in compare_csv(report)


# -- the trained Xception-style classifier --------------------------------------------------

XCEPTION = MODELS / "fashion_xception.pb"
FASHION_CALIB = MODELS / "fashion_calib.npz"


@functools.lru_cache(maxsize=None)
def _fashion(**options) -> tuple[bytes, np.ndarray]:
    with np.load(MODELS / "fashion_test.npz") as d:
        x = d["x"][:200].astype(np.float32)
    quant = QuantizeOptions(calib=str(FASHION_CALIB), **options)
    return convert_detailed(XCEPTION, ConvertOptions(quantize=quant)).model, x


def test_fashion_xception_advice_helps():
    """min/max int8 fashion_xception: the worst op is a depthwise conv whose error is its
    output rounding; the advice's first flag (--calib-method mse) raises that op's SQNR and
    the output SQNR. The softmax advice (a float softmax) raises the output SQNR too and
    makes the probabilities exact given the logits."""
    model, x = _fashion()
    report = compare(XCEPTION, model, x)
    worst = report.culprit()
    assert worst.name == "fashion_xception/block2_sepconv2/separable_conv2d/depthwise"
    assert worst.op == "DEPTHWISE_CONV_2D" and worst.advice.kind is AdviceKind.RANGE
    assert worst.advice.flags[0] == "--calib-method mse"
    assert worst.advice.rms / worst.advice.step < 20   # a wide range for its values
    fixed, _ = _fashion(calib_method="mse")
    better = compare(XCEPTION, fixed, x)
    assert _row(better, worst.name).op_sqnr_db > worst.op_sqnr_db + 1.0
    assert better.output_sqnr_db > report.output_sqnr_db + 0.5

    soft = _row(report, "probs").advice
    assert soft.kind is AdviceKind.FIXED_OUTPUT and soft.keep_float == ("SOFTMAX",)
    assert soft.fraction > 0.5     # a confident classifier: most probabilities read 0
    kept, _ = _fashion(keep_float=soft.keep_float)
    floated = compare(XCEPTION, kept, x)
    assert _row(floated, "probs").op_sqnr_db == math.inf
    assert floated.output_sqnr_db > report.output_sqnr_db


def test_cli_prints_advice(tmp_path):
    """The table ends with the worst tensors' advice; with -o, the summary line is followed
    by the worst op's advice. keras_cnn's logits clip on the held-out digits (1.13 %)."""
    from click.testing import CliRunner

    from edgelite.cli.main import main
    from tests.converter.accuracy_models import PB, int8_model

    model = tmp_path / "k.tflite"
    model.write_bytes(int8_model())
    args = ["compare", str(PB), str(model), "--data", str(MODELS / "digits_test.npz")]
    result = CliRunner().invoke(main, args + ["--top", "2"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    at = lines.index("what to do:")
    assert lines[at + 1].startswith("  1. clips 1.13 % of values (range [")
    assert lines[at + 2].startswith("  2. error comes from its input")
    result = CliRunner().invoke(main, args + ["-o", str(tmp_path / "r.txt")])
    assert result.output.splitlines()[1].startswith("what to do: clips 1.13 % of values")


def test_output_rounding_mid_network_offers_16x8_for_the_op():
    stats = RangeStats(4.0 / 127, 0, np.int8)
    stats.update(np.random.default_rng(0).uniform(-4, 4, 1000))
    report = SimpleNamespace(op="CONV_2D", name="block/conv")
    a = output_rounding(report, stats, (), 0, None, "block/conv")
    assert a.kind is AdviceKind.RESOLUTION
    assert a.text.endswith("int16 activations (16x8: 256x finer steps, same int8 weights): "
                           "--int16-ops 'block/conv'")
    by_type = output_rounding(report, stats, (), 0, None, "CONV_2D")
    assert by_type.text.endswith("--int16-ops CONV_2D")
