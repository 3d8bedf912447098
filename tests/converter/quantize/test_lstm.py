"""quantize/lstm.py: TFLite's integer LSTM rule on a fused sequence LSTM (the power-of-two
cell state, which LSTMs fit, what stays float). The replayed cell state calibration records
at every step: test_lstm_replay.py."""

import copy

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, RnnState, convert_detailed
from edgelite.converter.ir import Activation
from edgelite.converter.quantize import QuantizeOptions, quantize
from edgelite.converter.quantize.lstm import cell_state_params, fits
from edgelite.errors import EdgeliteError
from tests.conftest import MODELS

LSTM = "UNIDIRECTIONAL_SEQUENCE_LSTM"


@pytest.mark.parametrize("top, log2", [
    (0.0, -15), (0.01, -15), (0.6, -15), (1.0, -15), (1.5, -14), (9.0, -11), (16.0, -11),
    (19.4, -10), (64.0, -9), (1000.0, -9)])
def test_cell_state_scale_is_the_power_of_two_bound_within_the_kernels_range(top, log2):
    # TF's PowerOfTwoBound(max |c|) / 32768, clamped to 2^-15 .. 2^-9 (LiteRT / TFLM)
    for lo, hi in ((-top, top / 2), (-top / 3, top)):
        p = cell_state_params(lo, hi)
        assert p.scale[0] == np.float32(2.0 ** log2) and p.zero_point[0] == 0


def _float_graph(name="rnn_lstm"):
    """The float graph with its fused LSTM, state kept (no reset ops in front)."""
    return convert_detailed(MODELS / f"{name}.pb", ConvertOptions(rnn_state=RnnState.KEEP)).graph


def _calib(tmp_path, n=8):
    rng = np.random.default_rng(0)
    path = tmp_path / "calib.npz"
    np.savez(path, tokens=rng.integers(0, 20, (n, 6)).astype(np.int32))
    return str(path)


def _lstm(graph):
    return next(op for op in graph.ops if op.type == LSTM)


@pytest.mark.parametrize("change", ["none", "peephole", "cifg", "relu", "diagonal"])
def test_only_the_form_the_integer_kernel_runs_fits(change):
    g = _float_graph()
    op = _lstm(g)
    if change == "peephole":
        for i in (9, 10, 11):
            op.inputs[i] = g.const(f"peephole{i}", np.ones(8, np.float32))
    elif change == "cifg":
        op.inputs[1] = None
    elif change == "relu":
        op.options["fused_activation_function"] = Activation.RELU
    elif change == "diagonal":
        op.options["diagonal_recurrent_tensors"] = True
    assert fits(op) is (change == "none")


def test_the_rule_writes_tflites_integer_lstm(tmp_path):
    g = _float_graph()
    quantize(g, QuantizeOptions(calib=_calib(tmp_path)))
    op = _lstm(g)
    x, out = op.inputs[0], op.outputs[0]
    assert x.dtype == np.int8 and out.dtype == np.int8
    for i in range(1, 9):
        w = op.inputs[i]
        assert w.dtype == np.int8 and w.quant.zero_point.tolist() == [0]
        assert w.quant.scale.size == 1 and np.abs(w.data).max() == 127
    for g_ in range(4):
        b = op.inputs[12 + g_]
        assert b.dtype == np.int32
        assert b.quant.scale[0] == np.float32(x.quant.scale[0] * np.float64(
            op.inputs[1 + g_].quant.scale[0]))
    h, c = op.inputs[18], op.inputs[19]
    assert h.is_variable and c.is_variable and h.dtype == np.int8 and c.dtype == np.int16
    assert (h.quant.scale[0], h.quant.zero_point[0]) == (out.quant.scale[0],
                                                         out.quant.zero_point[0])
    assert np.log2(c.quant.scale[0]) == int(np.log2(c.quant.scale[0]))
    assert [t.dtype for t in op.intermediates] == [np.float32] * 4 + [np.int8]
    assert all(t.quant is None and t.shape == (0,) for t in op.intermediates[:4])
    assert op.intermediates[4].quant.scale[0] == out.quant.scale[0]
    # the intermediates survive a deep copy (the accuracy tools copy graphs)
    assert len(_lstm(copy.deepcopy(g)).intermediates) == 5


def test_an_lstm_that_does_not_fit_stays_float(tmp_path):
    g = _float_graph()
    for i in (9, 10, 11):   # a peephole LSTM: LiteRT's integer kernel would need int16 ones
        _lstm(g).inputs[i] = g.const(f"peephole{i}", np.full(8, 0.1, np.float32))
    quantize(g, QuantizeOptions(calib=_calib(tmp_path)))
    op = _lstm(g)
    assert op.inputs[0].dtype == np.float32 and op.outputs[0].dtype == np.float32
    assert op.inputs[19].dtype == np.float32 and not op.intermediates
    assert g.producer(op.inputs[0]).type == "DEQUANTIZE"


def test_a_cell_state_without_a_range_is_named(tmp_path):
    g = _float_graph()
    c = _lstm(g).inputs[19]
    for t in g.tensors():   # ranges known from the graph (FakeQuant) for all but c
        if t.dtype == np.float32 and not t.is_const and t is not c:
            t.range = (-1.0, 1.0)
    with pytest.raises(EdgeliteError, match=r"tensor '[^']*cell_state' has no range"):
        quantize(g, QuantizeOptions())
