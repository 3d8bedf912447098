"""BIDIRECTIONAL_SEQUENCE_RNN (interpreter/kernels/bidirectional_sequence_rnn.py): float32
within 1e-5 of LiteRT and hybrid (int8 weights, symmetric or asymmetric inputs)
bit-exact, on both kernel sets, over three invokes (both hidden states carry) and after
a reset, with and without merged outputs and in the auxiliary-input modes."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.errors import UnsupportedOpError
from tests.interpreter.lstm_models import (LstmSpec, _Weights,
                                           assert_matches_litert_over_invokes,
                                           sequence_feeds)
from tests.interpreter.tflite_builder import ModelBuilder


def bidirectional_rnn_model(spec: LstmSpec, merge: bool = False, aux: str = "",
                            bw_units: int = 3) -> bytes:
    """``spec.n_cell`` forward units, ``bw_units`` backward ones; ``aux``: "" none,
    "cross" an auxiliary input with weights, "stacked" one without."""
    b = ModelBuilder()
    rng = np.random.default_rng(spec.seed)
    x = b.tensor("input", spec.seq_shape(spec.n_input))
    ops, graph_inputs = [x], [x]
    for tag, units in (("fw_", spec.n_cell), ("bw_", bw_units)):
        w = _Weights(b, spec, rng, tag)
        ops += [w.matrix("weights", units, spec.n_input, 0.01),
                w.matrix("recurrent_weights", units, units, 0.01),
                w.vector("bias", units, np.int32, -100, 100, 1e-4),
                b.tensor(f"{tag}hidden_state", [spec.batch, units], is_variable=True)]
    aux_ops = [-1, -1, -1]
    if aux:
        a = b.tensor("aux_input", spec.seq_shape(spec.n_input))
        graph_inputs.append(a)
        aux_ops[0] = a
        if aux == "cross":
            for i, (tag, units) in enumerate((("fw_", spec.n_cell), ("bw_", bw_units))):
                aux_ops[1 + i] = _Weights(b, spec, rng, tag).matrix(
                    "aux_weights", units, spec.n_input, 0.02)
    fw_out = spec.n_cell + bw_units if merge else spec.n_cell
    outputs = [b.tensor("fw_output", spec.seq_shape(fw_out))]
    if not merge:
        outputs.append(b.tensor("bw_output", spec.seq_shape(bw_units)))
    b.op("BIDIRECTIONAL_SEQUENCE_RNN", ops + aux_ops, outputs, time_major=spec.time_major,
         fused_activation_function=spec.activation, merge_outputs=merge, **spec.options)
    return b.build(graph_inputs, outputs)


VARIANTS = {  # hybrid time-major forms run with one step only (see the refusals below)
    "two_outputs": (LstmSpec(), False, ""),
    "merged_time_major_one_step": (LstmSpec(time_major=True, steps=1), True, ""),
    "time_major_batch2_one_step": (LstmSpec(time_major=True, batch=2, steps=1), False, ""),
    "merged_batch_major_batch3_relu": (LstmSpec(batch=3, activation="RELU"), True, ""),
    "cross_links_batch2": (LstmSpec(batch=2), False, "cross"),
    "stacked_time_major_one_step": (LstmSpec(time_major=True, batch=2, n_cell=5, steps=1),
                                    False, "stacked"),
}


def test_float_time_major_over_several_steps():
    for merge, aux in ((True, ""), (False, "stacked"), (False, "cross")):
        spec = LstmSpec(time_major=True, batch=2, n_input=6)
        feeds = zip(sequence_feeds(spec, 3), sequence_feeds(spec, 3, seed=7))
        assert_matches_litert_over_invokes(bidirectional_rnn_model(spec, merge, aux),
                                           [[f, e] if aux else [f] for f, e in feeds])


@pytest.mark.parametrize("kind", ["float", "symmetric", "asymmetric"])
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_matches_litert(name, kind):
    spec, merge, aux = VARIANTS[name]
    spec = replace(spec, n_input=6)
    if kind != "float":
        spec = replace(spec, hybrid=True,
                       options={"asymmetric_quantize_inputs": kind == "asymmetric"})
    feeds = sequence_feeds(spec, 3)
    extra = sequence_feeds(spec, 3, seed=7)
    per_invoke = [[f, e] if aux else [f] for f, e in zip(feeds, extra)]
    outs = assert_matches_litert_over_invokes(bidirectional_rnn_model(spec, merge, aux),
                                              per_invoke, rtol=1e-5 if kind == "float" else 0)
    units = spec.n_cell + 3 if merge else spec.n_cell
    assert outs[0][0].shape == tuple(spec.seq_shape(units))
    np.testing.assert_array_equal(outs[0][0], outs[3][0])  # reset: as the first invoke


@pytest.mark.parametrize("spec, merge, aux, text", [
    (LstmSpec(n_input=6), False, "stacked",
     "batch-major sequence: LiteRT's kernel reads the input there instead"),
    (LstmSpec(n_input=6, time_major=True, hybrid=True), False, "",
     "runs both passes once per time step (max_time times over)"),
    (LstmSpec(n_input=6, time_major=True, batch=2, steps=1, hybrid=True), True, "",
     "merged time-major outputs and batch > 1 crashes LiteRT's kernel"),
], ids=["stacked_batch_major", "hybrid_time_major", "hybrid_merged_time_major_batch2"])
def test_forms_litert_mishandles_are_refused(spec, merge, aux, text):
    model = bidirectional_rnn_model(spec, merge, aux)
    with pytest.raises(UnsupportedOpError) as info:
        Interpreter(model_content=model).allocate_tensors()
    assert "BIDIRECTIONAL_SEQUENCE_RNN" in str(info.value) and text in str(info.value)
