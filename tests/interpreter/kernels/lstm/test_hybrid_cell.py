"""Hybrid (dynamic-range) UNIDIRECTIONAL_SEQUENCE_LSTM and LSTM (lstm/hybrid_cell.py,
hybrid/rows.py, eigen_math.py): float32 input and states, int8 weights; bit-exact with
LiteRT on both kernel sets (outputs and states) over three consecutive invokes and again
after a reset, with symmetric and asymmetric input quantization."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.errors import UnsupportedOpError
from edgelite.interpreter.kernels.hybrid.rows import (quantize_rows_asymmetric,
                                                      quantize_rows_symmetric)
from edgelite.schema import generated_tflite as tfl
from tests.interpreter.kernels.lstm.test_float_cell import FLOAT_VARIANTS
from tests.interpreter.lstm_models import (LstmSpec, assert_matches_litert_over_invokes,
                                           edited, lstm_model, sequence_feeds,
                                           with_zero_steps)

# The float kernel's variants (test_lstm.py) but the diagonal recurrence (refused in a
# hybrid LSTM), plus a linear and a wider one.
VARIANTS = {name: spec for name, spec in FLOAT_VARIANTS.items() if not spec.diagonal} | {
    "linear": LstmSpec(activation="NONE", batch=2),
    "wide": LstmSpec(n_input=16, n_cell=12, steps=7, batch=2),
    # gates that start off a 4-float boundary of LiteRT's scratch buffer: Eigen's
    # logistic takes its single-value path on their first lanes (hybrid_cell.logistic_lanes)
    "cifg_odd_cells_time_major": LstmSpec(cifg=True, n_cell=5, batch=3, time_major=True),
    "cifg_odd_cells_batch_major": LstmSpec(cifg=True, n_cell=7, batch=2, peephole=True),
    "odd_cells_batch_major": LstmSpec(n_cell=7, batch=3, n_input=5),
}


@pytest.mark.parametrize("asymmetric", [False, True], ids=["symmetric", "asymmetric"])
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_hybrid_sequence_matches_litert(name, asymmetric):
    spec = replace(VARIANTS[name], hybrid=True,
                   options={"asymmetric_quantize_inputs": asymmetric})
    for seed in (1, 2):
        outs = assert_matches_litert_over_invokes(lstm_model(spec), [
            [f] for f in with_zero_steps(spec, sequence_feeds(spec, 3, seed=seed))], rtol=0)
        assert outs[0][0].shape == tuple(spec.seq_shape(spec.outputs))
        assert not np.array_equal(outs[0][0], outs[1][0])  # the state carries
        np.testing.assert_array_equal(outs[0][0], outs[3][0])  # after the reset: as at first


@pytest.mark.parametrize("asymmetric", [False, True], ids=["symmetric", "asymmetric"])
@pytest.mark.parametrize("name", ["wide", "odd_cells_batch_major", "projection"])
def test_hybrid_sequence_on_dequantized_inputs_matches_litert(name, asymmetric):
    # inputs on an int8 grid (a text model's embedding): rounding ties in every invoke;
    # one tie rounded LiteRT's other way changes every later step and, through the
    # carried state, every later invoke (AsymmetricQuantizeFloats: zero point in double,
    # rounded before it is added)
    spec = replace(VARIANTS.get(name, LstmSpec(projection=True, n_output=3, batch=2)),
                   hybrid=True, steps=9, options={"asymmetric_quantize_inputs": asymmetric})
    feeds = sequence_feeds(spec, 4, seed=3, grid=True)
    assert_matches_litert_over_invokes(lstm_model(spec), [[f] for f in feeds], rtol=0)


@pytest.mark.parametrize("asymmetric", [False, True], ids=["symmetric", "asymmetric"])
def test_hybrid_lstm_step_op_matches_litert(asymmetric):
    spec = LstmSpec(batch=2, peephole=True, projection=True, n_output=3, hybrid=True,
                    options={"asymmetric_quantize_inputs": asymmetric})
    assert_matches_litert_over_invokes(lstm_model(spec, op="LSTM"), [
        [f] for f in sequence_feeds(spec, 3, step=True)], rtol=0)


def test_quantize_rows_match_tflite_formulas():
    x = np.array([[0.5, -1.0, 0.25, 0.0], [0, 0, 0, 0], [3.0, 1.0, 2.0, 0.5]], np.float32)
    sym = quantize_rows_symmetric(x)
    np.testing.assert_array_equal(sym.q, [[64, -127, 32, 0], [0, 0, 0, 0], [127, 42, 85, 21]])
    np.testing.assert_array_equal(sym.scale, np.float32([1 / 127, 1, 3 / 127]))
    asym = quantize_rows_asymmetric(x)
    # row 0: range [-1, 0.5], scale 1.5 / 255, zero point 127 - 0.5 / scale = 42
    np.testing.assert_array_equal(asym.zero_point, [42, 0, -128])
    np.testing.assert_array_equal(asym.q[0], [127, -128, 85, 42])
    np.testing.assert_array_equal(asym.q[1], 0)
    np.testing.assert_array_equal(asym.scale[:2], np.float32([1.5 / 255, 1]))


def _uint8_weights(sg, m):
    for t in sg.tensors:
        if t.name == b"input_to_1":
            t.type = tfl.TensorType.UINT8
            t.quantization.zeroPoint = [128]


def _per_channel(sg, m):
    for t in sg.tensors:
        if t.name == b"recurrent_to_2":
            t.quantization.scale = [0.01] * 4
            t.quantization.zeroPoint = [0] * 4


def _int16_states(sg, m):
    for t in sg.tensors:
        if t.name == b"cell_state":
            t.type = tfl.TensorType.INT16


@pytest.mark.parametrize("change, text", [
    (_uint8_weights, "input weights 'input_to_1' is uint8; a hybrid LSTM's weights must all "
                     "be int8"),
    (_per_channel, "recurrent weights tensor 'recurrent_to_2' is quantized per channel; "
                   "LiteRT's hybrid LSTM takes one scale per tensor"),
    (_int16_states, "state 'cell_state' is int16; a hybrid LSTM's states are float32"),
], ids=["uint8_weights", "per_channel", "int16_state"])
def test_hybrid_refusals_name_the_tensor(change, text):
    model = edited(lstm_model(LstmSpec(hybrid=True)), change)
    with pytest.raises(UnsupportedOpError) as info:
        Interpreter(model_content=model).allocate_tensors()
    assert "operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM" in str(info.value)
    assert text in str(info.value)
