"""converter/quantize/lstm_replay.py: the float LSTM cell replayed step by step -- the cell
state of every step, in closed form on a one-unit cell, and equal to the float kernel's
last state on a real model, where calibration records the range over every step."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, RnnState, convert_detailed
from edgelite.converter.export import export_tflite
from edgelite.converter.quantize.calibrate import collect_ranges
from edgelite.converter.quantize.lstm_replay import Cell, float_cells
from edgelite.converter.runner import ModelRunner
from tests.conftest import MODELS


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


@pytest.mark.parametrize("time_major", [False, True])
def test_one_unit_cell_in_closed_form(time_major):
    # zero weights: every gate sees its bias only, so c_t = f * c_(t-1) + i * g
    b = np.float32([0.5, -1.0, 2.0, 0.25])          # input, forget, cell, output gates
    cell = Cell(0, "c", np.zeros((4, 2), np.float32), np.zeros((4, 1), np.float32), b,
                time_major, clip=0.0)
    x = np.zeros((3, 1, 2) if time_major else (1, 3, 2), np.float32)
    states = cell.states(x)
    assert states.shape == (3, 1, 1) and states.dtype == np.float32
    i, f, g = _sigmoid(0.5), _sigmoid(-1.0), np.tanh(2.0)
    want = [i * g, f * i * g + i * g, f * (f * i * g + i * g) + i * g]
    np.testing.assert_allclose(states.reshape(-1), want, rtol=1e-6)
    clipped = Cell(0, "c", cell.w, cell.r, b, time_major, clip=0.7).states(x)  # c1 ~ 0.60
    np.testing.assert_allclose(clipped.reshape(-1), [i * g, 0.7, 0.7], rtol=1e-6)


def test_calibration_records_the_cell_state_of_every_step(tmp_path):
    graph = convert_detailed(MODELS / "text_lstm.pb",
                             ConvertOptions(rnn_state=RnnState.KEEP)).graph  # state kept
    model = export_tflite(graph)
    runner = ModelRunner(model, keep_all=True)
    cells = float_cells(runner.interp.model)
    assert len(cells) == 2
    windows = np.load(MODELS / "text_lstm.calib.npz")["tokens"][:6].astype(np.float32)
    seen = {c.cell_state: [np.inf, -np.inf] for c in cells}
    for x in windows:
        runner.run({"tokens": x})
        for c in cells:
            states = c.states(runner.stored(c.input_index))
            # the replay's last step is the float kernel's final c
            np.testing.assert_allclose(states[-1], runner.tensor(c.cell_state).reshape(
                states[-1].shape), rtol=1e-5, atol=1e-5)
            seen[c.cell_state] = [min(seen[c.cell_state][0], states.min()),
                                  max(seen[c.cell_state][1], states.max())]
    stats = collect_ranges(model, ({"tokens": x} for x in windows), None)
    for name, (lo, hi) in seen.items():
        assert stats.ranges[name] == pytest.approx((lo, hi), rel=1e-6)
