"""quantize/sequence_head.py: an int8 sequence model's output softmax and the op computing
its logits run 16x8; other models, and the other ops, keep TensorFlow's int8."""

import numpy as np

from edgelite.converter import ConvertOptions, RnnState, convert_detailed
from edgelite.converter.quantize import QuantizeOptions, quantize
from edgelite.converter.quantize.sequence_head import head_ops
from tests.conftest import MODELS


def _graph(name):
    return convert_detailed(MODELS / f"{name}.pb", ConvertOptions(rnn_state=RnnState.KEEP)).graph


def _types(g, names):
    return sorted(op.type for op in g.ops if op.outputs[0].name in names)


def test_the_output_softmax_and_its_logits():
    g = _graph("text_lstm")   # attention softmax over time (inside), classifier softmax (output)
    head = head_ops(g)
    assert head == {"probs", "text_lstm/dense_1/BiasAdd"}
    assert _types(g, head) == ["FULLY_CONNECTED", "SOFTMAX"]
    assert head_ops(_graph("license_lstm")) == {"probs", "license_lstm/dense/BiasAdd"}


def test_no_head_without_an_output_softmax_or_a_sequence_lstm():
    assert head_ops(_graph("rnn_lstm")) == frozenset()   # outputs the LSTM's last h
    assert head_ops(_graph("keras_cnn")) == frozenset()   # a CNN classifier: TF's int8


def test_the_head_runs_16x8_unless_asked_int8(tmp_path):
    calib = tmp_path / "calib.npz"
    np.savez(calib, tokens=np.load(MODELS / "license_lstm.calib.npz")["tokens"][:8])
    for head, dtype in (("int16", np.int16), ("int8", np.int8)):
        g = _graph("license_lstm")
        quantize(g, QuantizeOptions(calib=str(calib), sequence_head=head))
        softmax = next(op for op in g.ops if op.type == "SOFTMAX")
        fc = next(op for op in g.ops if op.type == "FULLY_CONNECTED")
        assert softmax.outputs[0].dtype == fc.outputs[0].dtype == dtype
        assert fc.inputs[1].dtype == np.int8   # the same int8 weights
        lstm = next(op for op in g.ops if op.type == "UNIDIRECTIONAL_SEQUENCE_LSTM")
        assert lstm.outputs[0].dtype == np.int8
