"""BIDIRECTIONAL_SEQUENCE_LSTM (interpreter/kernels/bidirectional_sequence_lstm.py):
float32 within 1e-5 of LiteRT and hybrid (int8 weights, symmetric or asymmetric inputs)
bit-exact, over three invokes (both directions' states carry) and after a reset, in its output and
auxiliary-input modes."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.errors import UnsupportedOpError
from tests.interpreter.lstm_models import (LstmSpec, assert_matches_litert_over_invokes,
                                           bidirectional_model, sequence_feeds,
                                           with_zero_steps)

VARIANTS = {
    "two_outputs": (LstmSpec(), False, ""),
    "merged_time_major_batch2": (LstmSpec(time_major=True, batch=2), True, ""),
    "merged_batch_major": (LstmSpec(steps=4), True, ""),
    "cifg_peephole_projection": (LstmSpec(cifg=True, peephole=True, projection=True,
                                          n_output=3, cell_clip=0.8, proj_clip=0.5), False, ""),
    "aux_cross_links": (LstmSpec(time_major=True, batch=2), False, "cross"),
    "aux_stacked": (LstmSpec(), True, "stacked"),
    # NONE: see test_lstm.py's LINEAR_VARIANTS; the auxiliary input counts as an input
    "linear_cross": (LstmSpec(activation="NONE", batch=2, time_major=True), True, "cross"),
    "linear_stacked": (LstmSpec(activation="NONE", batch=2), False, "stacked"),
}


@pytest.mark.parametrize("hybrid", ["float", "symmetric", "asymmetric"])
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_matches_litert(name, hybrid):
    spec, merge, aux = VARIANTS[name]
    if hybrid != "float":
        spec = replace(spec, hybrid=True,
                       options={"asymmetric_quantize_inputs": hybrid == "asymmetric"})
    feeds = with_zero_steps(spec, sequence_feeds(spec, 3))
    extra = sequence_feeds(spec, 3, seed=9)
    for e in extra:  # step 2 of the auxiliary input is zero
        (e[2] if spec.time_major else e[:, 2])[...] = 0
    per_invoke = [[f, e] if aux else [f] for f, e in zip(feeds, extra)]
    outs = assert_matches_litert_over_invokes(bidirectional_model(spec, merge, aux),
                                              per_invoke, rtol=0 if spec.hybrid else 1e-5)
    units = 2 * spec.outputs if merge else spec.outputs
    assert outs[0][0].shape == tuple(spec.seq_shape(units))
    np.testing.assert_array_equal(outs[0][0], outs[3][0])  # reset: as the first invoke


@pytest.mark.parametrize("hybrid", ["symmetric", "asymmetric"])
def test_hybrid_on_dequantized_inputs_matches_litert(hybrid):
    # inputs on an int8 grid (an embedding): the per-row quantization's rounding ties
    spec = replace(LstmSpec(n_input=16, n_cell=12, steps=9, batch=2), hybrid=True,
                   options={"asymmetric_quantize_inputs": hybrid == "asymmetric"})
    feeds = sequence_feeds(spec, 4, seed=6, grid=True)
    assert_matches_litert_over_invokes(bidirectional_model(spec, False, ""),
                                       [[f] for f in feeds], rtol=0)


def test_merged_batch_major_batches_are_refused():
    # LiteRT's EvalFloat offsets batch row b's states by b * (fw + bw units): out of bounds.
    interp = Interpreter(model_content=bidirectional_model(LstmSpec(batch=2), True))
    with pytest.raises(UnsupportedOpError, match="reads and writes the states out of bounds"):
        interp.allocate_tensors()
