"""quantize/staged.py: the accuracy tools' op-by-op runner gives the model's own values."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, RnnState, convert_detailed
from edgelite.converter.export import export_tflite
from edgelite.converter.quantize import QuantizeOptions, quantize
from edgelite.converter.quantize.staged import run_staged
from edgelite.converter.runner import ModelRunner
from tests.conftest import MODELS


@pytest.mark.parametrize("lstm", ["integer", "weights-only"])
def test_staged_runs_give_the_models_outputs_sample_by_sample(tmp_path, lstm):
    """A token-id input (fed as it is) and a stateful LSTM (its state is no feed; every
    sample starts from zero state), integer or weights-only (its weights' DEQUANTIZE ops
    run once, and the LSTM takes their values as constants): the outputs of the exported
    model, run afresh."""
    g = convert_detailed(MODELS / "rnn_lstm.pb", ConvertOptions(rnn_state=RnnState.KEEP)).graph
    calib = tmp_path / "calib.npz"
    np.savez(calib, tokens=np.random.default_rng(0).integers(0, 20, (8, 6)).astype(np.int32))
    quantize(g, QuantizeOptions(calib=str(calib), lstm=lstm))
    assert sum(op.type == "DEQUANTIZE" for op in g.ops) == (1 if lstm == "integer" else 10)
    windows = np.random.default_rng(1).integers(0, 20, (4, 6))
    samples = [{g.inputs[0].name: w} for w in windows]
    staged = run_staged(g, samples)
    model = export_tflite(g)
    for sample, outs in zip(samples, staged):
        fresh = ModelRunner(model)   # zero state
        fresh.feed(sample)
        fresh.interp.invoke()
        np.testing.assert_array_equal(outs[0], fresh.stored(fresh.outputs[0]["index"]))
    assert not np.array_equal(staged[0][0], staged[1][0])


def test_integer_ops_run_every_sample_in_one_invoke_with_the_same_values(monkeypatch):
    """The int8 digits CNN op by op: each integer op (CONV_2D, DEPTHWISE_CONV_2D, MEAN, ...)
    in one invoke over the samples, its float QUANTIZE input and edges as they are; the
    outputs equal a whole-model run sample by sample, and a run forced to batch 1."""
    from edgelite.converter.quantize import QuantMode, staged
    q = QuantizeOptions(mode=QuantMode.INT8, calib=str(MODELS / "digits_calib.npy"))
    g = convert_detailed(MODELS / "keras_cnn.pb", ConvertOptions(quantize=q)).graph
    x = np.load(MODELS / "digits_test.npz")["x"][:9]
    samples = [{g.inputs[0].name: s} for s in x]
    invokes = []
    real = staged.ModelRunner

    def counting(*args, batch=1, **kw):
        runner = real(*args, batch=batch, **kw)
        invokes.append(runner.batch)
        return runner
    monkeypatch.setattr(staged, "ModelRunner", counting)
    batched = run_staged(g, samples)
    assert invokes.count(9) >= 5                      # the integer ops: 9 samples at once
    monkeypatch.setattr(staged, "ModelRunner", lambda *a, batch=1, **kw: real(*a, **kw))
    single = run_staged(g, samples)
    model = ModelRunner(export_tflite(g))
    for sample, b, s in zip(samples, batched, single):
        np.testing.assert_array_equal(b[0], s[0])
        np.testing.assert_array_equal(b[0], model.run(sample)[0])
