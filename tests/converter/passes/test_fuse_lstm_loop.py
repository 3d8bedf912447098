"""fuse_lstm_loop on the issue-13 models: exact op counts (no more than TensorFlow's Keras-path
file), float results against TensorFlow's goldens in edgelite and LiteRT, loops that are not an
LSTM over the whole sequence left alone, and the switch."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert, convert_detailed
from edgelite.converter.passes import fuse_lstm_loop
from edgelite.interpreter import Interpreter
from edgelite.interpreter.model import load_model
from tests.conftest import MODELS, litert_module

LSTM = "UNIDIRECTIONAL_SEQUENCE_LSTM"
ONE_LAYER = {"GATHER": 1, LSTM: 1, "STRIDED_SLICE": 1}
BIDIRECTIONAL = {"REVERSE_V2": 1, LSTM: 2, "STRIDED_SLICE": 2, "CONCATENATION": 1}
FUSED = {
    "rnn_lstm.pb": ONE_LAYER,
    "rnn_lstm.functional.pb": ONE_LAYER,
    "rnn_bilstm.pb": BIDIRECTIONAL,
    "rnn_bilstm.functional.pb": BIDIRECTIONAL,
    "rnn_tf1_dynamic_rnn.pb": {LSTM: 1},   # the stacking GATHER and TRANSPOSE absorbed
}
# golden file and input name of each model
GOLDEN = {"rnn_lstm": "tokens", "rnn_bilstm": "x", "rnn_tf1_dynamic_rnn": "x"}
REL_TOL = 1e-4   # the float tolerance, relative to max |TensorFlow's output|
NO_FUSION = ConvertOptions(disabled_passes=frozenset({"fuse_lstm_loop"}))


def _ops(path) -> dict[str, int]:
    return convert_detailed(MODELS / path).graph.op_counts()


@pytest.mark.parametrize("path", sorted(FUSED))
def test_lstm_loops_become_fused_lstms(path):
    assert _ops(path) == FUSED[path]


@pytest.mark.parametrize("model", ["rnn_lstm", "rnn_bilstm"])
def test_no_more_ops_than_tensorflows_keras_path_file(model):
    tf_file = load_model((MODELS / f"{model}.tf_float.tflite").read_bytes())
    assert sum(_ops(f"{model}.pb").values()) <= len(tf_file.subgraphs[0].operators)


@pytest.mark.parametrize("path", ["rnn_gru.pb", "rnn_convlstm.pb", "rnn_convlstm_seq.pb",
                                  "rnn_simple_rnn.pb"])
def test_other_recurrent_loops_stay_loops(path):
    ops = _ops(path)
    assert ops["WHILE"] == 1 and LSTM not in ops


def _runtimes(model: bytes):
    mod = litert_module()
    yield "litert", mod.Interpreter(model_content=model, experimental_op_resolver_type=(
        mod.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES))
    yield "edgelite", Interpreter(model_content=model)


@pytest.mark.parametrize("path", sorted(FUSED))
def test_fused_model_matches_tensorflow(path):
    model = path.split(".")[0]
    golden = np.load(MODELS / f"{model}.golden.npz")
    x, ref = golden[GOLDEN[model]], golden["output"]
    for runtime, interp in _runtimes(convert(MODELS / path)):
        interp.allocate_tensors()
        inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
        for k in range(len(ref)):
            # The fused op keeps h and c between invokes, as TensorFlow's does: each
            # sequence starts from zero state after a reset.
            interp.reset_all_variables()
            interp.set_tensor(inp["index"], x[k:k + 1].astype(inp["dtype"]))
            interp.invoke()
            err = np.max(np.abs(interp.get_tensor(out["index"]) - ref[k:k + 1]))
            assert err <= REL_TOL * np.max(np.abs(ref)), (runtime, k, err)


def test_state_carries_across_invokes_as_in_litert():
    model = convert(MODELS / "rnn_lstm.pb")
    tokens = np.load(MODELS / "rnn_lstm.golden.npz")["tokens"][:1].astype(np.int32)
    seen = {}
    for runtime, interp in _runtimes(model):
        interp.allocate_tensors()
        ys = []
        for _ in range(2):
            interp.set_tensor(interp.get_input_details()[0]["index"], tokens)
            interp.invoke()
            ys.append(interp.get_tensor(interp.get_output_details()[0]["index"]).copy())
        seen[runtime] = ys
    assert np.max(np.abs(seen["edgelite"][0] - seen["edgelite"][1])) > 1e-3  # state kept
    np.testing.assert_allclose(seen["edgelite"][1], seen["litert"][1], atol=1e-5)


def _unfused(path="rnn_lstm.pb"):
    """The converted graph with its WHILE, and the loop's body."""
    graph = convert_detailed(MODELS / path, NO_FUSION).graph
    loop = next(op for op in graph.ops if op.type == "WHILE")
    return graph, loop, loop.subgraphs["body"]


def _cell_tanh(body):
    """The TANH of c' (the one whose input the body also returns: the new c)."""
    return next(op for op in body.ops if op.type == "TANH" and body.is_output(op.inputs[0]))


def test_the_unchanged_loop_fuses():
    graph, _, _ = _unfused()
    assert fuse_lstm_loop.run(graph) == 1


def test_another_cell_activation_is_not_fused():
    graph, _, body = _unfused()
    _cell_tanh(body).type = "RELU"   # Keras LSTM(activation="relu")
    assert fuse_lstm_loop.run(graph) == 0


def _read_by(body, type_):
    """The position of the loop variable the body reads with an op of type_ (h: the
    recurrent FULLY_CONNECTED, c: the forget gate's MUL)."""
    return next(k for k, t in enumerate(body.inputs)
                if any(op.type == type_ for op in body.consumers(t)))


def test_c_read_after_the_loop_is_not_fused():
    graph, loop, body = _unfused()
    graph.outputs = [*graph.outputs, loop.outputs[_read_by(body, "MUL")]]  # return_state
    assert fuse_lstm_loop.run(graph) == 0


def test_nonzero_initial_state_is_not_fused():
    graph, loop, body = _unfused()
    h = _read_by(body, "FULLY_CONNECTED")
    loop.inputs[h] = graph.const("h0", np.full(loop.inputs[h].shape, 0.5, np.float32))
    assert fuse_lstm_loop.run(graph) == 0


def test_switch_keeps_the_loop():
    ops = convert_detailed(MODELS / "rnn_lstm.pb", NO_FUSION).graph.op_counts()
    assert ops == {"GATHER": 1, "TRANSPOSE": 1, "WHILE": 1, "STRIDED_SLICE": 1}
