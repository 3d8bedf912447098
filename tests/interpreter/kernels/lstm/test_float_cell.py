"""UNIDIRECTIONAL_SEQUENCE_LSTM and LSTM in float32 (interpreter/kernels/lstm/float_cell.py):
within 1e-5 of LiteRT's two kernel sets over three consecutive invokes (the state carries)
and again after a reset."""

from __future__ import annotations

import numpy as np
import pytest

from tests.interpreter.lstm_models import (LstmSpec, assert_matches_litert_over_invokes,
                                           lstm_model, sequence_feeds, with_zero_steps)

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
# all-zero input step (lstm.float_cell._linear_cell_gate); the feeds have such steps.
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
