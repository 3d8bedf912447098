"""UNIDIRECTIONAL_SEQUENCE_LSTM and LSTM (interpreter/kernels/lstm.py and the cell modules
lstm_float.py, lstm_integer.py, lstm_integer_params.py, lstm_operands.py): float32 within
1e-5 of LiteRT, int8 bit-exact with both LiteRT kernel sets, over three consecutive
invokes (the state carries) and again after a reset."""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.interpreter.errors import ShapeError, UnsupportedOpError
from edgelite.schema import generated_tflite as tfl
from tests.interpreter.lstm_models import (LstmSpec, assert_matches_litert_over_invokes,
                                           edited, lstm_model, sequence_feeds,
                                           with_zero_steps)

FLOAT_VARIANTS = {
    "plain": LstmSpec(),
    "time_major_batch2": LstmSpec(time_major=True, batch=2),
    "batch_major_batch3": LstmSpec(batch=3, n_cell=5),
    "cifg": LstmSpec(cifg=True),
    "peephole": LstmSpec(peephole=True, cell_clip=0.7),
    "cifg_peephole": LstmSpec(cifg=True, peephole=True),
    "projection": LstmSpec(projection=True, n_output=3, proj_clip=0.3, batch=2),
    "projection_no_bias": LstmSpec(projection=True, n_output=6, projection_bias=False),
    "layer_norm": LstmSpec(layer_norm=True, peephole=True, batch=2),
    "layer_norm_cifg": LstmSpec(layer_norm=True, cifg=True),
    "relu": LstmSpec(activation="RELU", cell_clip=3.0),
    "diagonal": LstmSpec(diagonal=True, options={"diagonal_recurrent_tensors": True}),
    "inputs_20": LstmSpec(inputs=20),
}


# The activation NONE: LiteRT computes h = o . g and drops terms of the cell gate after an
# all-zero input step (lstm_float._linear_cell_gate); the feeds have such steps.
LINEAR_VARIANTS = {
    "linear": LstmSpec(activation="NONE"),
    "linear_layer_norm_time_major": LstmSpec(activation="NONE", layer_norm=True, batch=2,
                                             time_major=True),
    "linear_batch_major_batch2": LstmSpec(activation="NONE", batch=2),
    "linear_diagonal": LstmSpec(activation="NONE", diagonal=True,
                                options={"diagonal_recurrent_tensors": True}),
}


@pytest.mark.parametrize("name", sorted(FLOAT_VARIANTS) + sorted(LINEAR_VARIANTS))
def test_float_sequence_matches_litert(name):
    spec = FLOAT_VARIANTS.get(name) or LINEAR_VARIANTS[name]
    outs = assert_matches_litert_over_invokes(lstm_model(spec), [
        [f] for f in with_zero_steps(spec, sequence_feeds(spec, 3))])
    # The state carries: the second invoke of the same network differs from a fresh one.
    assert outs[0][0].shape == tuple(spec.seq_shape(spec.outputs))
    assert not np.allclose(outs[1][0], outs[4][0]) or not np.allclose(outs[1][0], outs[3][0])
    np.testing.assert_array_equal(outs[0][0], outs[3][0])  # after the reset: as at first


def test_float_lstm_step_op_matches_litert():
    spec = LstmSpec(batch=2, peephole=True, projection=True, n_output=3)
    assert_matches_litert_over_invokes(lstm_model(spec, op="LSTM"), [
        [f] for f in sequence_feeds(spec, 3, step=True)])


INTEGER_VARIANTS = {
    "plain": LstmSpec(integer=True),
    "time_major_batch2": LstmSpec(integer=True, time_major=True, batch=2, n_cell=6),
    "batch_major_batch2": LstmSpec(integer=True, batch=2, input_zp=-20),
    "cifg": LstmSpec(integer=True, cifg=True, cell_clip=0.5),
    "peephole": LstmSpec(integer=True, peephole=True, n_cell=20, steps=4),
    # 20 cells: NEON-blocked (16) and scalar (4) peephole products, rescaled by 2^-3
    # (2^-11 * 2^-4 / 2^-12): rounding ties, where the two roundings differ
    "peephole_ties": LstmSpec(integer=True, peephole=True, n_cell=20, peephole_max=9,
                              peephole_scale=2.0**-4, batch=2),
    "cifg_peephole": LstmSpec(integer=True, cifg=True, peephole=True, batch=2,
                              time_major=True),
    "projection": LstmSpec(integer=True, projection=True, n_output=3, proj_clip=0.3),
    "projection_peephole": LstmSpec(integer=True, projection=True, n_output=3,
                                    peephole=True, batch=2, time_major=True),
    "projection_peephole_batch_major": LstmSpec(integer=True, projection=True, n_output=3,
                                                peephole=True, batch=2),
    "layer_norm": LstmSpec(integer=True, layer_norm=True, n_cell=8),
    "layer_norm_cifg_peephole": LstmSpec(integer=True, layer_norm=True, cifg=True,
                                         peephole=True, n_cell=8, batch=2),
    "cell_scale_2^-9": LstmSpec(integer=True, cell_log2=-9, seed=3),
    "cell_scale_2^-15": LstmSpec(integer=True, cell_log2=-15, seed=4),
}


@pytest.mark.parametrize("name", sorted(INTEGER_VARIANTS))
def test_int8_sequence_bit_exact_with_both_kernel_sets(name):
    spec = INTEGER_VARIANTS[name]
    outs = assert_matches_litert_over_invokes(lstm_model(spec), [
        [f] for f in sequence_feeds(spec, 3)])
    values = np.concatenate([o[0].reshape(-1) for o in outs])
    assert len(np.unique(values)) > 8  # not saturated to a few levels


def test_int8_lstm_step_op_bit_exact():
    spec = LstmSpec(integer=True, batch=2, peephole=True, layer_norm=True, n_cell=8)
    assert_matches_litert_over_invokes(lstm_model(spec, op="LSTM"), [
        [f] for f in sequence_feeds(spec, 3, step=True)])


# --------------------------------------------------------------------------- hostile files

def _op(sg):
    return sg.operators[0]


def _inputs_21(sg, m):
    _op(sg).inputs = _op(sg).inputs[:21]


def _recurrent_shape(sg, m):  # recurrent_to_forget_weights: same bytes, [2, 8] not [4, 4]
    sg.tensors[_op(sg).inputs[6]].shape = [2, 8]


def _input_weights_shape(sg, m):  # input_to_cell_weights [3, 4] instead of [4, 3]
    sg.tensors[_op(sg).inputs[3]].shape = [3, 4]


def _no_hidden_scale(sg, m):
    sg.tensors[_op(sg).intermediates[4]].quantization = None


def _no_intermediates(sg, m):
    _op(sg).intermediates = []


def _cell_scale_not_pot(sg, m):
    sg.tensors[_op(sg).inputs[19]].quantization.scale = [0.0003]


def _basic_kernel(sg, m):
    _op(sg).builtinOptions.kernelType = 1


def _hybrid(sg, m):  # float input and output, int8 weights
    for index in (_op(sg).inputs[0], _op(sg).outputs[0]):
        sg.tensors[index].type = tfl.TensorType.FLOAT32
        sg.tensors[index].quantization = None


HOSTILE = [
    ("inputs_21", LstmSpec(), _inputs_21, ShapeError,
     "expects 20 or 24 inputs (24 with layer norm), the file gives 21"),
    ("recurrent_shape", LstmSpec(), _recurrent_shape, ShapeError,
     "recurrent_to_forget_weights 'recurrent_to_1' has shape [2, 8]; expected [4, 4]"),
    ("input_weights_shape", LstmSpec(), _input_weights_shape, ShapeError,
     "input_to_cell_weights 'input_to_2' has shape [3, 4]; expected [4, 3]"),
    ("no_hidden_scale", LstmSpec(integer=True), _no_hidden_scale, ShapeError,
     "intermediate 4 ('hidden_intermediate') of the integer LSTM has no quantization"),
    ("no_intermediates", LstmSpec(integer=True), _no_intermediates, UnsupportedOpError,
     "needs the 5 intermediate tensors TFLite's quantizer records"),
    ("cell_scale_not_pot", LstmSpec(integer=True), _cell_scale_not_pot, UnsupportedOpError,
     "cell state 'cell_state' has scale 0.0003"),
    # float input with an integer LSTM's int8 / int16 states: not a hybrid LSTM LiteRT runs
    ("hybrid_integer_states", LstmSpec(integer=True), _hybrid, UnsupportedOpError,
     "state 'output_state' is int8; a hybrid LSTM's states are float32"),
]


@pytest.mark.parametrize("name, spec, change, error, text", HOSTILE,
                         ids=[h[0] for h in HOSTILE])
def test_hostile_files_get_one_line_naming_the_op(name, spec, change, error, text):
    interp = Interpreter(model_content=edited(lstm_model(spec), change))
    with pytest.raises(error) as info:
        interp.allocate_tensors()
    message = str(info.value)
    assert text in message and "\n" not in message, message
    assert "operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM" in message


def test_lstm_basic_kernel_is_refused():
    interp = Interpreter(model_content=edited(lstm_model(LstmSpec(), op="LSTM"),
                                              _basic_kernel))
    with pytest.raises(UnsupportedOpError, match="BASIC LSTM kernel type"):
        interp.allocate_tensors()


def test_int8_output_state_starts_at_its_zero_point_and_carries():
    # TFLite's ResetVariableTensor: int8 variables start at their zero point (real 0), so a
    # fresh int8 LSTM starts from h = 0 like the float one (allocation.reset_variables).
    spec = LstmSpec(integer=True)
    interp = Interpreter(model_content=lstm_model(spec))
    interp.allocate_tensors()
    index = {d["name"]: d["index"] for d in interp.get_tensor_details()}
    np.testing.assert_array_equal(interp.get_tensor(index["output_state"]),
                                  np.full((1, 4), spec.output_zp, np.int8))
    np.testing.assert_array_equal(interp.get_tensor(index["cell_state"]),
                                  np.zeros((1, 4), np.int16))
    interp.set_tensor(interp.get_input_details()[0]["index"], sequence_feeds(spec, 1)[0])
    interp.invoke()
    out = interp.get_tensor(interp.get_output_details()[0]["index"])
    # the state is the last step's h (no projection) and a nonzero cell
    np.testing.assert_array_equal(interp.get_tensor(index["output_state"]), out[:, -1])
    assert np.any(interp.get_tensor(index["cell_state"]) != 0)
