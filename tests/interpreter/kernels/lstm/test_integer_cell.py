"""UNIDIRECTIONAL_SEQUENCE_LSTM and LSTM in int8 / int16 (interpreter/kernels/lstm/integer_cell.py):
bit-exact with LiteRT's two kernel sets over three consecutive invokes and again after a
reset; the int8 state starts at its zero point."""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from tests.interpreter.lstm_models import (LstmSpec, assert_matches_litert_over_invokes,
                                           lstm_model, sequence_feeds)

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
