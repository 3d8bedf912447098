"""signatures.py / export.export_tflite with several entry graphs: one file, subgraph k is
signature k, the graphs they call follow with their indices remapped; each signature runs
as its own single-signature file does, in edgelite and LiteRT."""

from __future__ import annotations

import numpy as np
import pytest

import edgelite
from edgelite.converter import convert_detailed
from edgelite.converter.export import export_tflite
from edgelite.converter.savedmodel import SignatureIO
from edgelite.interpreter.loader.model import load_model
from tests.conftest import MODELS

LOOPS = {"branch": MODELS / "rnn_cond.functional.pb", "loop": MODELS / "rnn_while_loop.pb"}


def _entry(key: str, path) -> tuple:
    graph = convert_detailed(path).graph
    graph.signature = SignatureIO(key, tuple((t.name, t.name) for t in graph.inputs),
                                  tuple((t.name, t.name) for t in graph.outputs))
    return graph, export_tflite(graph)


def _feeds(interp, key: str, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    runner = interp.get_signature_runner(key)
    feeds = {}
    for name, d in runner.get_input_details().items():
        feeds[name] = rng.uniform(-1, 1, d["shape"]).astype(d["dtype"])
    return feeds


def test_graphs_with_control_flow_share_one_file(litert):
    entries = {key: _entry(key, path) for key, path in LOOPS.items()}
    model = export_tflite([g for g, _ in entries.values()])
    loaded = load_model(model)
    singles = {key: load_model(single) for key, (_, single) in entries.items()}
    assert len(loaded.subgraphs) == sum(len(m.subgraphs) for m in singles.values()) == 6
    assert [(s.key, s.subgraph_index) for s in loaded.signature_defs] == [("branch", 0),
                                                                          ("loop", 1)]
    # the WHILE of signature 1 calls the loop's own cond / body, now at 4 and 5
    (while_op,) = [op for op in loaded.subgraphs[1].operators if op.name == "WHILE"]
    assert (while_op.options["cond_subgraph_index"], while_op.options["body_subgraph_index"]) \
        == (4, 5)
    for key, (_, single) in entries.items():
        for make in (edgelite.Interpreter, litert.Interpreter):
            merged, alone = make(model_content=model), make(model_content=single)
            for seed in range(3):
                feeds = _feeds(alone, key, seed)
                expected = alone.get_signature_runner(key)(**feeds)
                got = merged.get_signature_runner(key)(**feeds)
                assert got.keys() == expected.keys()
                for name in got:
                    np.testing.assert_array_equal(got[name], expected[name])


def test_repeated_keys_are_refused():
    graph, _ = _entry("same", LOOPS["branch"])
    other, _ = _entry("same", LOOPS["loop"])
    with pytest.raises(edgelite.EdgeliteError, match="signature keys .* repeat"):
        export_tflite([graph, other])
