"""Keras files (models/keras/, written by models/builders/keras_files.py) converted without
TensorFlow: outputs within 1e-5 of Keras' own, LiteRT agreeing, op counts at most those of
TensorFlow's converter (from_keras_model, recorded when the files were built)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import edgelite
from edgelite.converter import ConvertOptions, convert_detailed
from tests.conftest import MODELS, litert_module
from tests.interpreter.oracle import assert_close, run_edgelite
KERAS = MODELS / "keras"
META = json.loads((KERAS / "keras_files.json").read_text())


def _golden(stem: str):
    g = np.load(KERAS / f"{stem}.golden.npz")
    ins = [g[k] for k in sorted(k for k in g.files if k.startswith("in_"))]
    outs = [g[f"out_{j}"] for j in range(sum(k.startswith("out_") for k in g.files))]
    return ins, outs


def run_litert(model: bytes, feeds):
    """LiteRT's default kernels (its reference resolver has no ELU)."""
    interp = litert_module().Interpreter(model_content=model)
    interp.allocate_tensors()
    for detail, value in zip(interp.get_input_details(), feeds):
        interp.set_tensor(detail["index"], value)
    interp.invoke()
    return [interp.get_tensor(d["index"]) for d in interp.get_output_details()]


@pytest.mark.parametrize("stem", sorted(META))
def test_matches_keras_and_litert(stem):
    result = convert_detailed(str(KERAS / META[stem]["file"]))
    ins, outs = _golden(stem)
    n_ops = sum(result.graph.op_counts().values())
    assert n_ops <= META[stem]["tf_ops"], (n_ops, result.graph.op_counts())
    for i in range(ins[0].shape[0]):
        feeds = [x[i:i + 1] for x in ins]
        ours = run_edgelite(result.model, feeds)
        assert len(ours) == len(outs)
        for got, want in zip(ours, outs):
            assert_close(got, want[i:i + 1], rtol=1e-5, atol_factor=1e-5)
        for got, ref in zip(ours, run_litert(result.model, feeds)):
            assert_close(got, ref, rtol=1e-5, atol_factor=1e-5)
