"""The issue-13 test models (models/rnn_models.json, built by models/build_rnn.py): the committed
files are what the manifest says, LiteRT runs TensorFlow's .tflite files as recorded and so
does edgelite's interpreter (float within 1e-5 of LiteRT, integers bit-exact; the state of
fused LSTMs and resource variables carried across invokes as there), and edgelite's model
reader sees the ops the manifest lists (every subgraph)."""

import json

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.interpreter.loader.model import load_model
from edgelite.schema import graph_pb2
from tests.conftest import MODELS, litert_module

MANIFEST = json.loads((MODELS / "rnn_models.json").read_text())["models"]
FILES = sorted((f, size) for entry in MANIFEST.values() for f, size in entry["files"].items())
TFLITES = sorted((name, f) for name, entry in MANIFEST.items() for f in entry["tflite"]
                 if name != "kws_stream")
REL_TOL = 1e-4  # LiteRT on TF's float files vs TF, relative to max |reference|
EDGELITE_TOL = 1e-5  # edgelite on TF's float files vs LiteRT, relative to max |LiteRT|
RUNTIMES = ("litert", "edgelite")


def litert(model: bytes, runtime: str = "litert"):
    """LiteRT's builtin kernels without the default delegate (what the build recorded), or
    edgelite's interpreter."""
    if runtime == "edgelite":
        interp = Interpreter(model_content=model)
        interp.allocate_tensors()
        return interp
    mod = litert_module()
    interp = mod.Interpreter(model_content=model, experimental_op_resolver_type=(
        mod.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES))
    interp.allocate_tensors()
    return interp


def assert_as_recorded(y: np.ndarray, recorded: np.ndarray, runtime: str) -> None:
    """LiteRT: exactly its recorded outputs; edgelite: integers exactly, floats within
    EDGELITE_TOL x max |recorded|."""
    if runtime == "litert" or y.dtype.kind != "f":
        np.testing.assert_array_equal(y, recorded)
    else:
        assert np.max(np.abs(y - recorded)) <= EDGELITE_TOL * np.max(np.abs(recorded))


def test_manifest_lists_every_model_of_the_issue():
    assert {"rnn_lstm", "rnn_gru", "rnn_convlstm", "rnn_convlstm_seq", "rnn_bilstm",
            "rnn_simple_rnn", "rnn_tf1_dynamic_rnn", "rnn_tf1_cond", "rnn_cond",
            "rnn_partitioned_call", "rnn_grouped_conv", "kws_stream"} <= set(MANIFEST)
    assert sum(size for _, size in FILES) < 1_500_000  # the issue's budget for these files


@pytest.mark.parametrize("fname,size", FILES, ids=[f for f, _ in FILES])
def test_file_exists_with_recorded_size(fname, size):
    assert (MODELS / fname).stat().st_size == size


def test_graphs_have_the_recorded_control_flow_nodes():
    """Top-level node counts (edgelite's GraphDef subset has no function library)."""
    frames = {}
    for entry in MANIFEST.values():
        for fname, facts in entry.get("graphs", {}).items():
            gd = graph_pb2.GraphDef.FromString((MODELS / fname).read_bytes())
            counts = {}
            for node in gd.node:
                if node.op in facts["ops_of_interest"]["graph"]:
                    counts[node.op] = counts.get(node.op, 0) + 1
            assert counts == facts["ops_of_interest"]["graph"], fname
            assert len(gd.node) == facts["nodes"], fname
            frames[fname] = facts["frames"]
    assert frames["rnn_bilstm.pb"] == 2 and frames["rnn_tf1_dynamic_rnn.pb"] == 1
    assert frames["rnn_lstm.functional.pb"] == 0


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("name,fname", TFLITES, ids=[f for _, f in TFLITES])
def test_litert_and_edgelite_run_tf_tflite_as_recorded(name, fname, runtime):
    entry, info = MANIFEST[name], MANIFEST[name]["tflite"][fname]
    golden = np.load(MODELS / entry["golden"])
    suffix = fname[len(name) + 1:-len(".tflite")]
    x = golden.get(f"litert_{suffix}_x", golden[entry["inputs"][0]["name"]])
    interp = litert((MODELS / fname).read_bytes(), runtime)
    (inp,), (out,) = interp.get_input_details(), interp.get_output_details()
    ys = []
    for i in range(len(x)):
        interp.reset_all_variables()  # TF's fused LSTM keeps h / c in variable tensors
        interp.set_tensor(inp["index"], x[i:i + 1])
        interp.invoke()
        ys.append(interp.get_tensor(out["index"])[0])
    y = np.stack(ys)
    assert_as_recorded(y, golden[f"litert_{suffix}"], runtime)
    if "litert_rel_err" in info:  # float: TF's numbers
        ref = golden["output"]
        assert np.max(np.abs(y - ref)) <= REL_TOL * np.max(np.abs(ref))


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_kws_stream_state_persists_and_survives_reset_as_in_litert(runtime):
    entry = MANIFEST["kws_stream"]
    golden = np.load(MODELS / entry["golden"])
    assert len(golden["frame"]) == entry["golden_invokes"] >= 12
    for fname in entry["tflite"]:
        suffix = fname[len("kws_stream."):-len(".tflite")]
        x = golden.get(f"litert_{suffix}_x", golden["frame"])
        interp = litert((MODELS / fname).read_bytes(), runtime)
        (inp,), (out,) = interp.get_input_details(), interp.get_output_details()
        for key in (f"litert_{suffix}", f"litert_{suffix}_after_reset"):
            ys = []
            for f in x:
                interp.set_tensor(inp["index"], f)
                interp.invoke()
                ys.append(interp.get_tensor(out["index"])[0].copy())
            assert_as_recorded(np.stack(ys), golden[key], runtime)
            interp.reset_all_variables()
        y = golden[f"litert_{suffix}"]
        assert not np.array_equal(y[0], y[1])  # frames 0 and 1 are the same frame
        # reset_all_variables() leaves resource variables alone in LiteRT
        assert not np.array_equal(y, golden[f"litert_{suffix}_after_reset"])


@pytest.mark.parametrize("name,fname", TFLITES + [("kws_stream", f) for f in
                                                  MANIFEST["kws_stream"]["tflite"]],
                         ids=[f for _, f in TFLITES] + list(MANIFEST["kws_stream"]["tflite"]))
def test_edgelite_reads_the_recorded_ops(name, fname):
    info = MANIFEST[name]["tflite"][fname]
    model = load_model((MODELS / fname).read_bytes())
    assert [[op.name for op in sg.operators] for sg in model.subgraphs] == info["ops"]
    assert len(model.subgraphs) == info["subgraphs"]


def test_tf_files_have_the_ops_the_issue_names():
    def ops(fname):
        name = fname.split(".")[0]
        return {op for sg in MANIFEST[name]["tflite"][fname]["ops"] for op in sg}

    assert "UNIDIRECTIONAL_SEQUENCE_LSTM" in ops("rnn_lstm.tf_int8.tflite")
    assert "WHILE" in ops("rnn_gru.tf_float.tflite") and "WHILE" in ops("rnn_lstm.tf_frozen.tflite")
    assert "IF" in ops("rnn_cond.tf_int8.tflite")
    assert {"CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"} <= ops(
        "kws_stream.tf_int8.tflite")
