"""fuse_lstm_loop on the issue-13 models: exact op counts (no more than TensorFlow's Keras-path
file with --rnn-state keep, than TensorFlow's frozen-graph file by default), float results
against TensorFlow's goldens in edgelite and LiteRT for samples run one after another (no
reset: the default file starts every invoke from zero state), loops that are not an LSTM over
the whole sequence left alone, and the switch."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, RnnState, convert, convert_detailed
from edgelite.converter.passes import fuse_lstm_loop
from edgelite.interpreter import Interpreter
from edgelite.interpreter.loader.model import load_model
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
KEEP = ConvertOptions(rnn_state=RnnState.KEEP)


def _ops(path, options=None) -> dict[str, int]:
    return convert_detailed(MODELS / path, options).graph.op_counts()


@pytest.mark.parametrize("path", sorted(FUSED))
def test_lstm_loops_become_fused_lstms(path):
    assert _ops(path, KEEP) == FUSED[path]
    # by default each LSTM's h and c are zeroed in front of it: one SUB(z, z) each
    assert _ops(path) == {**FUSED[path], "SUB": 2 * FUSED[path][LSTM]}


@pytest.mark.parametrize("model", ["rnn_lstm", "rnn_bilstm"])
def test_no_more_ops_than_tensorflows_files(model):
    # the stateful form against TF's Keras-path file (stateful too); the default, stateless
    # form against TF's file of the frozen graph (stateless: it keeps the loop)
    def count(suffix):
        f = load_model((MODELS / f"{model}.{suffix}.tflite").read_bytes())
        return sum(len(sg.operators) for sg in f.subgraphs)
    assert sum(_ops(f"{model}.pb", KEEP).values()) <= count("tf_float")
    assert sum(_ops(f"{model}.pb").values()) <= count("tf_frozen")


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


@pytest.mark.parametrize("reset", [False, True], ids=["in_a_row", "reset_between"])
@pytest.mark.parametrize("path", sorted(FUSED))
def test_fused_model_matches_tensorflow(path, reset):
    model = path.split(".")[0]
    golden = np.load(MODELS / f"{model}.golden.npz")
    x, ref = golden[GOLDEN[model]], golden["output"]
    for runtime, interp in _runtimes(convert(MODELS / path)):
        interp.allocate_tensors()
        inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
        for k in range(len(ref)):
            # the samples one after another: each invoke starts from zero state, as the
            # graph does, with or without a reset in between
            if reset:
                interp.reset_all_variables()
            interp.set_tensor(inp["index"], x[k:k + 1].astype(inp["dtype"]))
            interp.invoke()
            err = np.max(np.abs(interp.get_tensor(out["index"]) - ref[k:k + 1]))
            assert err <= REL_TOL * np.max(np.abs(ref)), (runtime, k, err)


@pytest.mark.parametrize("path", sorted(FUSED))
def test_micro_runs_the_stateless_file_sample_after_sample(path):
    from tests.support import run_micro_samples
    model = path.split(".")[0]
    golden = np.load(MODELS / f"{model}.golden.npz")
    x, ref = golden[GOLDEN[model]], golden["output"]
    dtype = np.int32 if model == "rnn_lstm" else np.float32
    ys = run_micro_samples(convert(MODELS / path), [[x[k:k + 1].astype(dtype)]
                                                    for k in range(len(ref))])
    for k, (y,) in enumerate(ys):
        assert np.max(np.abs(y - ref[k:k + 1])) <= REL_TOL * np.max(np.abs(ref)), k


def test_state_carries_across_invokes_as_in_litert_with_rnn_state_keep():
    model = convert(MODELS / "rnn_lstm.pb", rnn_state="keep")
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
    # unfused, the loop writes no list any more (prune_loop_vars: the caller reads the
    # state): the fusion finds the step from h' alone and matches TensorFlow
    graph, _, _ = _unfused()
    assert fuse_lstm_loop.run(graph) == 1
    from edgelite.converter.export import export_tflite
    from edgelite.converter.passes import reset_state
    reset_state.run(graph)
    golden = np.load(MODELS / "rnn_lstm.golden.npz")
    interp = Interpreter(model_content=export_tflite(graph))
    interp.allocate_tensors()
    for k in range(len(golden["output"])):
        interp.set_tensor(interp.get_input_details()[0]["index"], golden["tokens"][k:k + 1])
        interp.invoke()
        got = interp.get_tensor(interp.get_output_details()[0]["index"])
        assert np.abs(got - golden["output"][k:k + 1]).max() <= 1e-5


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
    # (Keras' time-major TRANSPOSE of a batch of 1 is a RESHAPE: transpose_as_reshape)
    assert ops == {"GATHER": 1, "RESHAPE": 1, "WHILE": 1}   # the state read, no list
