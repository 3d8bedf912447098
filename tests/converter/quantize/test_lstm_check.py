"""quantize/lstm_check.py: each sequence LSTM the integer kernel runs is measured on the
calibration data and written integer, or weights-only (float arithmetic, int8 weights
behind DEQUANTIZE) where it loses the signal; --lstm overrides the choice."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, RnnState, convert_detailed
from edgelite.converter.export import export_tflite
from edgelite.converter.quantize import QuantizeOptions, quantize
from edgelite.converter.quantize.lstm_check import MIN_SQNR, LstmCheck
from edgelite.converter.runner import ModelRunner
from tests.conftest import MODELS

LSTM = "UNIDIRECTIONAL_SEQUENCE_LSTM"


def _graph(input_gain: float = 1.0, recurrent_gain: float = 1.0, open_output: bool = False):
    """rnn_lstm's float graph (state kept, no resets), its weights scaled: input-to-gate by
    ``input_gain``, recurrent by ``recurrent_gain``. ``open_output``: the output gate's bias
    +12 and its recurrent weights x8 -- its input term W x + b (about 12) leaves the +-8 the
    integer kernel holds while R h often pulls the sum back below 8."""
    g = convert_detailed(MODELS / "rnn_lstm.pb", ConvertOptions(rnn_state=RnnState.KEEP)).graph
    op = _lstm(g)
    for i in range(1, 9):
        op.inputs[i].data = op.inputs[i].data * (input_gain if i < 5 else recurrent_gain)
    if open_output:
        op.inputs[15].data = op.inputs[15].data + np.float32(12)
        op.inputs[8].data = op.inputs[8].data * np.float32(8)
    return g


def _lstm(g):
    return next(op for op in g.ops if op.type == LSTM)


def _calib(tmp_path, n=16, seed=0):
    path = tmp_path / f"calib{seed}.npz"
    np.savez(path, tokens=np.random.default_rng(seed).integers(0, 20, (n, 6)).astype(np.int32))
    return str(path)


def _lstm_sqnr(float_graph, quantized_graph, n=16) -> float:
    """The quantized model's LSTM output against the float model's, held-out samples."""
    name = _lstm(float_graph).outputs[0].name
    f = ModelRunner(export_tflite(float_graph), keep_all=True)
    q = ModelRunner(export_tflite(quantized_graph), keep_all=True)
    ref, got = [], []
    for x in np.random.default_rng(9).integers(0, 20, (n, 6)):
        f.run({"tokens": x}), q.run({"tokens": x})
        ref.append(f.tensor(name)), got.append(q.tensor(name))
    ref, got = np.array(ref, np.float64), np.array(got, np.float64)
    return float(10 * np.log10(np.sum(ref ** 2) / np.sum((ref - got) ** 2)))


def test_an_lstm_that_keeps_its_signal_stays_integer(tmp_path):
    g = _graph()
    report = quantize(g, QuantizeOptions(calib=_calib(tmp_path)))
    [check] = report.lstms
    assert check.integer and check.sqnr > MIN_SQNR and check.gate_peak < 8
    assert check.name == _lstm(g).outputs[0].name and check.node == _lstm(g).name
    assert _lstm(g).inputs[19].dtype == np.int16


def test_an_lstm_whose_input_term_leaves_q3_12_goes_weights_only(tmp_path):
    """Measured below the floor and weights-only far better: the LSTM runs float on the
    integer LSTM's own int8 weights -- and so it is on other samples too."""
    calib = _calib(tmp_path)
    float_graph, g, integer = (_graph(open_output=True) for _ in range(3))
    report = quantize(g, QuantizeOptions(calib=calib))
    quantize(integer, QuantizeOptions(calib=calib, lstm="integer"))
    [check] = report.lstms
    assert not check.integer and check.sqnr < MIN_SQNR
    assert check.weights_only > check.sqnr + 10 and check.gate_peak > 8
    assert "integer kernel holds +-8" in check.line()
    op = _lstm(g)
    assert op.inputs[0].dtype == np.float32 and op.inputs[19].dtype == np.float32
    assert not op.intermediates
    for i in range(1, 9):   # the integer LSTM's own weights, per tensor
        deq, ints = g.producer(op.inputs[i]), _lstm(integer).inputs[i]
        assert deq.type == "DEQUANTIZE" and deq.inputs[0].dtype == np.int8
        np.testing.assert_array_equal(deq.inputs[0].data, ints.data)
        assert deq.inputs[0].quant.scale.tolist() == ints.quant.scale.tolist()
        assert deq.inputs[0].quant.zero_point.tolist() == [0]
    assert all(op.inputs[i].dtype == np.float32 for i in range(12, 16))
    integer_db, weights_only_db = _lstm_sqnr(float_graph, integer), _lstm_sqnr(float_graph, g)
    assert integer_db < MIN_SQNR < weights_only_db and weights_only_db > integer_db + 10


def test_an_lstm_that_its_int8_weights_limit_stays_integer(tmp_path):
    """Input weights x16, recurrent x4: below the floor, but weights-only is no better (the
    int8 weights lose the signal, not the integer arithmetic): integer, as TensorFlow."""
    g = _graph(16, 4)
    [check] = quantize(g, QuantizeOptions(calib=_calib(tmp_path))).lstms
    assert check.integer and check.sqnr < MIN_SQNR and check.weights_only < check.sqnr + 3
    assert _lstm(g).inputs[19].dtype == np.int16


@pytest.mark.parametrize("form, integer", [("integer", True), ("weights-only", False)])
def test_the_form_can_be_chosen(tmp_path, form, integer):
    g = _graph(open_output=True) if integer else _graph()
    report = quantize(g, QuantizeOptions(calib=_calib(tmp_path), lstm=form))
    assert report.lstms == []   # nothing measured
    assert (_lstm(g).inputs[19].dtype == np.int16) is integer
    deq = sum(op.type == "DEQUANTIZE" for op in g.ops)
    assert deq == (1 if integer else 8 + 2)   # the output's (+ the weights', the input's)


def test_without_calibration_data_the_lstm_is_tensorflows_integer_one():
    g = _graph(open_output=True)
    report = quantize(g, QuantizeOptions(default_range=(-4.0, 4.0)))
    assert report.lstms == [] and _lstm(g).inputs[19].dtype == np.int16


def test_an_lstm_kept_float_by_the_user_is_not_measured(tmp_path):
    g = _graph(open_output=True)
    report = quantize(g, QuantizeOptions(calib=_calib(tmp_path), keep_float=(LSTM,)))
    assert report.lstms == [] and _lstm(g).inputs[1].is_const   # float32 weights, as asked


def test_the_log_line_names_the_node_and_the_choice():
    line = LstmCheck("out", "model/lstm/while", 29.86, 42.5, 23.3, False).line()
    assert line == ("LSTM 'model/lstm/while': integer 29.9 dB, weights-only 42.5 dB on the "
                    "calibration data (floor 35) -> float, weights int8 (weights-only); its "
                    "input-to-gate sums reach 23.3, the integer kernel holds +-8")
    assert LstmCheck("out", "", 40.0, 41.0, 2.0, True).line().endswith("(floor 35) -> integer")


def test_an_unknown_form_is_refused():
    with pytest.raises(ValueError, match="'float'"):
        QuantizeOptions(lstm="float")


def test_cli_flags(tmp_path):
    from click.testing import CliRunner

    from edgelite.cli.main import main
    out = tmp_path / "m.tflite"
    base = ["convert", str(MODELS / "text_lstm.pb"), "-o", str(out), "--quantize", "int8",
            "--calib", str(MODELS / "text_lstm.calib.npz")]
    r = CliRunner().invoke(main, base)
    assert r.exit_code == 0, r.output
    lines = [line for line in r.output.splitlines() if line.startswith("LSTM ")]
    assert len(lines) == 2 and lines[0].endswith("the integer kernel holds +-8")
    assert "-> float, weights int8 (weights-only)" in lines[0] and lines[1].endswith("integer")
    assert "DEQUANTIZE x10" in r.output and "QUANTIZE x2" in r.output
    r = CliRunner().invoke(main, base + ["--lstm", "integer", "--sequence-head", "int8"])
    assert r.exit_code == 0, r.output
    assert not any(line.startswith("LSTM ") for line in r.output.splitlines())
    assert "DEQUANTIZE," in r.output and " QUANTIZE" not in r.output
    r = CliRunner().invoke(main, base + ["--lstm", "float"])
    assert r.exit_code == 2 and "'float' is not one of" in r.output
