"""RNN and UNIDIRECTIONAL_SEQUENCE_RNN (interpreter/kernels/rnn.py): float32 within 1e-5
of LiteRT and hybrid (int8 weights; symmetric or asymmetric inputs) bit-exact, over three
invokes (the hidden state carries) and after a reset."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.errors import ShapeError, UnsupportedOpError
from tests.interpreter.lstm_models import (LstmSpec, assert_matches_litert_over_invokes,
                                           edited, rnn_model, sequence_feeds)

VARIANTS = {
    "tanh": LstmSpec(),
    "relu_time_major_batch2": LstmSpec(activation="RELU", time_major=True, batch=2),
    "none_batch3": LstmSpec(activation="NONE", batch=3, n_cell=6, steps=3),
    "relu6": LstmSpec(activation="RELU6", n_input=7),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_sequence_rnn_matches_litert(name):
    spec = VARIANTS[name]
    outs = assert_matches_litert_over_invokes(rnn_model(spec), [
        [f] for f in sequence_feeds(spec, 3)])
    assert outs[0][0].shape == tuple(spec.seq_shape(spec.n_cell))
    np.testing.assert_array_equal(outs[0][0], outs[3][0])


@pytest.mark.parametrize("asymmetric", [False, True], ids=["symmetric", "asymmetric"])
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_hybrid_sequence_rnn_matches_litert(name, asymmetric):
    spec = replace(VARIANTS[name], hybrid=True, n_input=9,
                   options={"asymmetric_quantize_inputs": asymmetric})
    for seed in (1, 2):
        feeds = sequence_feeds(spec, 3, seed=seed)
        (feeds[1][1] if spec.time_major else feeds[1][:, 1])[...] = 0  # an all-zero step
        outs = assert_matches_litert_over_invokes(rnn_model(spec), [[f] for f in feeds],
                                                  rtol=0)
        np.testing.assert_array_equal(outs[0][0], outs[3][0])


@pytest.mark.parametrize("asymmetric", [False, True], ids=["symmetric", "asymmetric"])
def test_hybrid_sequence_rnn_on_dequantized_inputs_matches_litert(asymmetric):
    # int8-grid inputs (an embedding): the per-row quantization's rounding ties
    spec = LstmSpec(batch=2, n_cell=12, n_input=16, steps=9, hybrid=True,
                    options={"asymmetric_quantize_inputs": asymmetric})
    assert_matches_litert_over_invokes(rnn_model(spec), [
        [f] for f in sequence_feeds(spec, 4, seed=5, grid=True)], rtol=0)


@pytest.mark.parametrize("asymmetric", [False, True], ids=["symmetric", "asymmetric"])
def test_hybrid_rnn_step_op_matches_litert(asymmetric):
    spec = LstmSpec(batch=3, n_cell=7, n_input=5, hybrid=True,
                    options={"asymmetric_quantize_inputs": asymmetric})
    assert_matches_litert_over_invokes(rnn_model(spec, op="RNN"), [
        [f] for f in sequence_feeds(spec, 3, step=True)], rtol=0)


def test_rnn_step_op_matches_litert():
    spec = LstmSpec(batch=2, n_cell=5)
    outs = assert_matches_litert_over_invokes(rnn_model(spec, op="RNN"), [
        [f] for f in sequence_feeds(spec, 3, step=True)])
    # The state carries: the same network on its second input remembers the first.
    fresh = Interpreter(model_content=rnn_model(spec, op="RNN"))
    fresh.allocate_tensors()
    fresh.set_tensor(fresh.get_input_details()[0]["index"],
                     sequence_feeds(spec, 3, step=True)[1])
    fresh.invoke()
    assert not np.allclose(fresh.get_tensor(fresh.get_output_details()[0]["index"]),
                           outs[1][0])


def _drop_input(sg, m):
    sg.operators[0].inputs = sg.operators[0].inputs[:4]


def _state_not_variable(sg, m):  # the hidden state as a graph input instead
    sg.tensors[sg.operators[0].inputs[4]].isVariable = False
    sg.inputs = list(sg.inputs) + [sg.operators[0].inputs[4]]


def _weights_shape(sg, m):  # the same bytes as [2, 8] instead of [4, 4]
    sg.tensors[sg.operators[0].inputs[2]].shape = [2, 8]


@pytest.mark.parametrize("change, error, text", [
    (_drop_input, ShapeError, "expects 5 inputs, the file gives 4"),
    (_state_not_variable, UnsupportedOpError,
     "the hidden state (input 4, tensor 'hidden_state') must be a variable tensor"),
    (_weights_shape, ShapeError, "recurrent weights 'recurrent_weights' have shape [2, 8]"),
])
def test_hostile_files_get_one_line(change, error, text):
    interp = Interpreter(model_content=edited(rnn_model(LstmSpec()), change))
    with pytest.raises(error) as info:
        interp.allocate_tensors()
    assert text in str(info.value) and "\n" not in str(info.value)
    assert "UNIDIRECTIONAL_SEQUENCE_RNN" in str(info.value)


def _per_channel(sg, m):
    t = sg.tensors[sg.operators[0].inputs[1]]
    t.quantization.scale = [0.01] * 4
    t.quantization.zeroPoint = [0] * 4


def _mixed_weights(sg, m):  # float recurrent weights beside int8 input weights
    t = sg.tensors[sg.operators[0].inputs[2]]
    t.type = 0  # FLOAT32: 4 bytes per value
    m.buffers[t.buffer].data = np.zeros(16, np.float32).view(np.uint8)


@pytest.mark.parametrize("change, text", [
    (_per_channel, "weights tensor 'weights' is quantized per channel; LiteRT's hybrid RNN "
                   "takes one scale per tensor"),
    (_mixed_weights, "recurrent weights 'recurrent_weights' are float32; a hybrid RNN's "
                     "weights must all be int8"),
], ids=["per_channel", "mixed"])
def test_hybrid_refusals(change, text):
    model = edited(rnn_model(LstmSpec(hybrid=True)), change)
    with pytest.raises(UnsupportedOpError) as info:
        Interpreter(model_content=model).allocate_tensors()
    assert text in str(info.value) and "UNIDIRECTIONAL_SEQUENCE_RNN" in str(info.value)
