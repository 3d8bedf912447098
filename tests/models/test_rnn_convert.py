"""edgelite converts every issue-13 GraphDef (models/rnn_models.json): Keras LSTM / GRU /
ConvLSTM2D / Bidirectional / SimpleRNN frozen both ways, TF1 dynamic_rnn (TensorArrayV3) and
static_rnn, data-dependent conds, calls. Float: edgelite's file matches TensorFlow's golden
within 1e-4 x max |ref| in edgelite and in LiteRT, the samples run one after another in one
interpreter without a reset (each invoke computes the graph's function from zero state). int8 (calibrated through the loops):
LiteRT runs it bit for bit as edgelite does, on both kernel sets, close to the float model."""

import json

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, QuantizeOptions, convert_detailed
from edgelite.interpreter import Interpreter
from tests.conftest import MODELS, litert_module

MANIFEST = json.loads((MODELS / "rnn_models.json").read_text())["models"]
GRAPHS = sorted((name, g) for name, entry in MANIFEST.items() for g in entry.get("graphs", {}))
REL_TOL = 1e-4
VOCAB = 20           # models/builders/rnn.py: token ids of rnn_lstm's Embedding
MIN_SQNR_DB = 24.0   # int8 vs the float file, 16 calibration samples: lowest 25.1 dB (unrolled)


def _samples(entry: dict, n: int, seed: int) -> dict[str, np.ndarray]:
    """Inputs drawn as the builder draws them: token ids, or uniform in [-1, 1]."""
    rng = np.random.default_rng(seed)
    out = {}
    for spec in entry["inputs"]:
        shape = [n, *spec["shape"][1:]]
        out[spec["name"]] = rng.integers(0, VOCAB, shape).astype(np.int32) \
            if spec["dtype"] == "int32" else rng.uniform(-1, 1, shape).astype(np.float32)
    return out


def _run(interp, feeds: dict[str, np.ndarray]) -> np.ndarray:
    interp.allocate_tensors()
    n = len(next(iter(feeds.values())))
    outs = []
    for k in range(n):   # one after another, no reset: the model must not carry state
        for d in interp.get_input_details():
            interp.set_tensor(d["index"], feeds[d["name"]][k:k + 1].astype(d["dtype"]))
        interp.invoke()
        outs.append(interp.get_tensor(interp.get_output_details()[0]["index"]).copy())
    return np.concatenate(outs)


def _litert(model: bytes, reference: bool = False):
    mod = litert_module()
    resolver = mod.OpResolverType.BUILTIN_REF if reference else mod.OpResolverType.AUTO
    return mod.Interpreter(model_content=model, experimental_op_resolver_type=resolver)


@pytest.mark.parametrize("name, graph", GRAPHS, ids=[g for _, g in GRAPHS])
def test_float_matches_tensorflow_in_edgelite_and_litert(name, graph):
    entry = MANIFEST[name]
    golden = np.load(MODELS / entry["golden"])
    feeds = {spec["name"]: golden[spec["name"]] for spec in entry["inputs"]}
    ref = golden["output"]
    model = convert_detailed(MODELS / graph, ConvertOptions()).model
    for interp in (Interpreter(model_content=model), _litert(model)):
        y = _run(interp, feeds).reshape(ref.shape)
        assert np.max(np.abs(y - ref)) <= REL_TOL * np.max(np.abs(ref))


@pytest.mark.parametrize("name, graph", GRAPHS, ids=[g for _, g in GRAPHS])
def test_int8_runs_bit_exact_in_litert(name, graph, tmp_path):
    entry = MANIFEST[name]
    np.savez(tmp_path / "calib.npz", **_samples(entry, 16, 1))
    model = convert_detailed(MODELS / graph, ConvertOptions(
        quantize=QuantizeOptions(calib=str(tmp_path / "calib.npz")))).model
    test = _samples(entry, 6, 2)
    ours = _run(Interpreter(model_content=model), test)
    np.testing.assert_array_equal(_run(_litert(model), test), ours)
    np.testing.assert_array_equal(
        _run(_litert(model, reference=True), test),
        _run(Interpreter(model_content=model, kernels="reference"), test))
    ref = _run(Interpreter(model_content=convert_detailed(MODELS / graph).model), test)
    sqnr = 10 * np.log10(np.sum(ref.astype(np.float64) ** 2) / np.sum((ref - ours) ** 2.0))
    assert sqnr >= MIN_SQNR_DB
