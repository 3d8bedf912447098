"""kernels="micro" int8 UNIDIRECTIONAL_SEQUENCE_LSTM against TFLite Micro (lstm/micro.py).

Random single-op files (lstm_models.py, laid out as TensorFlow's quantizer writes them),
three invokes each so the states carry over; TFLM is the oracle.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from edgelite.errors import UnsupportedOpError
from tests.interpreter.lstm_models import LstmSpec, edited, lstm_model, sequence_feeds
from tests.support import (assert_micro_exact_samples, micro_refusal, run_edgelite_samples,
                          run_micro_samples)

VARIANTS = {
    "plain": LstmSpec(integer=True),
    "time_major_batch2": LstmSpec(integer=True, time_major=True, batch=2, n_cell=6, seed=1),
    "batch_major_batch3": LstmSpec(integer=True, batch=3, input_zp=-20, output_zp=40, seed=2),
    "cell_clip": LstmSpec(integer=True, cell_clip=0.5, seed=3),
    "cell_scale_2^-9": LstmSpec(integer=True, cell_log2=-9, seed=4),
    "cell_scale_2^-13": LstmSpec(integer=True, cell_log2=-13, seed=5),  # tanh(c): 3x >> 1
    "cell_scale_2^-15": LstmSpec(integer=True, cell_log2=-15, seed=6),
    "wide": LstmSpec(integer=True, n_cell=17, n_input=9, steps=7, seed=7),
}


def _samples(spec: LstmSpec):
    return [[f] for f in sequence_feeds(spec, 3, seed=spec.seed + 1)]


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_int8_sequence_bit_exact_with_micro(name):
    spec = VARIANTS[name]
    outs = assert_micro_exact_samples(lstm_model(spec), _samples(spec))
    values = np.concatenate([o[0].reshape(-1) for o in outs])
    assert len(np.unique(values)) > 8  # not saturated to a few levels


def test_micro_differs_from_litert_reference_on_these_files():
    """The micro path is needed: LiteRT's arithmetic misses TFLM on most variants."""
    differing = 0
    for spec in VARIANTS.values():
        model, samples = lstm_model(spec), _samples(spec)
        theirs = run_micro_samples(model, samples)
        ours = run_edgelite_samples(model, samples, kernels="reference")
        differing += any(not np.array_equal(a[0], b[0]) for a, b in zip(ours, theirs))
    assert differing >= len(VARIANTS) // 2, differing


def _gates_driven_hard(sg, m):
    """Weight scales 0.02 (input) and 0.05 (recurrent): the recurrent term R . h alone
    often leaves int16 at 2^-12 (|z| > 8) while the input term pulls the sum back in, as
    in trained LSTMs whose gates are driven hard."""
    for i in range(1, 9):
        sg.tensors[sg.operators[0].inputs[i]].quantization.scale = [0.02 if i < 5 else 0.05]


def test_recurrent_term_saturates_on_its_own_as_in_micro():
    """TFLM saturates each gate FULLY_CONNECTED's int16 output before adding the two;
    LiteRT adds the rescaled recurrent sum to the input term and saturates once."""
    spec = replace(VARIANTS["wide"], seed=11)
    model, samples = edited(lstm_model(spec), _gates_driven_hard), _samples(spec)
    outs = assert_micro_exact_samples(model, samples)
    theirs = run_micro_samples(model, samples)
    litert_arithmetic = run_edgelite_samples(model, samples, kernels="reference")
    assert any(not np.array_equal(a[0], b[0]) for a, b in zip(litert_arithmetic, theirs))
    assert len(np.unique(np.concatenate([o[0].reshape(-1) for o in outs]))) > 8


def _hidden_intermediate_moved(sg, m):
    """Intermediate 4 (the hidden value LiteRT requantizes to) off the output's
    parameters: TFLM requantizes to the output state's own and never reads it."""
    q = sg.tensors[sg.operators[0].intermediates[4]].quantization
    q.scale, q.zeroPoint = [0.013], [9]


def test_micro_ignores_the_hidden_intermediate():
    spec = VARIANTS["plain"]
    model = edited(lstm_model(spec), _hidden_intermediate_moved)
    assert_micro_exact_samples(model, _samples(spec))


@pytest.mark.parametrize("feature, kw", [
    ("CIFG", dict(cifg=True)),
    ("peephole", dict(peephole=True)),
    ("layer norm", dict(layer_norm=True, n_cell=8)),
    ("projection", dict(projection=True, n_output=3)),
])
def test_cells_tflm_lacks_are_refused_like_tflm(feature, kw):
    spec = LstmSpec(integer=True, **kw)
    model, feeds = lstm_model(spec), [sequence_feeds(spec, 1)[0]]
    assert "failed to prepare" in micro_refusal(model, feeds)
    with pytest.raises(UnsupportedOpError, match=f"TFLite Micro's integer LSTM has no {feature};"):
        run_edgelite_samples(model, [feeds])
