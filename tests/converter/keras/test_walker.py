"""Keras files (models/keras/, written by models/builders/keras_files.py and
keras_applications.py) converted without TensorFlow: outputs within 1e-5 of Keras' own,
LiteRT agreeing, op counts at most those of TensorFlow's converter (from_keras_model,
recorded when the files were built); int8 models bit-exact with LiteRT."""

from __future__ import annotations

import json

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, QuantizeOptions, convert_detailed
from edgelite.interpreter.model import load_model
from tests.conftest import MODELS
from tests.interpreter.op_models import run_litert_default
from tests.interpreter.oracle import assert_close, run_edgelite
from tests.interpreter.oracle import run_litert as run_litert_ref
KERAS = MODELS / "keras"
META = {**json.loads((KERAS / "keras_files.json").read_text()),
        **json.loads((KERAS / "keras_applications.json").read_text())}


def _golden(stem: str):
    g = np.load(KERAS / f"{stem}.golden.npz")
    ins = [g[k] for k in sorted(k for k in g.files if k.startswith("in_"))]
    outs = [g[f"out_{j}"] for j in range(sum(k.startswith("out_") for k in g.files))]
    return ins, outs


@pytest.mark.parametrize("stem", sorted(META))
def test_matches_keras_and_litert(stem):
    result = convert_detailed(str(KERAS / META[stem]["file"]))
    ins, outs = _golden(stem)
    n_ops = sum(len(sg.operators) for sg in load_model(result.model).subgraphs)
    assert n_ops <= META[stem]["tf_ops"], (n_ops, result.graph.op_counts())
    for i in range(ins[0].shape[0]):
        feeds = [x[i:i + 1] for x in ins]
        ours = run_edgelite(result.model, feeds)
        assert len(ours) == len(outs)
        for got, want in zip(ours, outs):
            assert_close(got, want[i:i + 1], rtol=1e-5, atol_factor=1e-5)
        for got, ref in zip(ours, run_litert_default(result.model, feeds)):
            assert_close(got, ref, rtol=1e-5, atol_factor=1e-5)


INPUT_NAMES = {"mobilenetv2_035": ["input_layer"], "cnn_legacy": ["image"],
               "merge_multi_io": ["a", "b"], "fer_emotion": ["input_1"], "rnn_lstm": ["seq"],
               "attention": ["seq"]}


@pytest.mark.parametrize("stem", sorted(INPUT_NAMES))
def test_int8_runs_in_litert_bit_exact(stem, tmp_path):
    ins, outs = _golden(stem)
    path = tmp_path / "calib.npz"   # arrays named after the input layers
    names = INPUT_NAMES.get(stem, ["input"])
    np.savez(path, **dict(zip(names, ins)))
    options = ConvertOptions(quantize=QuantizeOptions(calib=str(path)))
    result = convert_detailed(str(KERAS / META[stem]["file"]), options)
    assert result.graph.op_counts().get("DEQUANTIZE", 0) <= len(outs)
    for i in range(ins[0].shape[0]):
        feeds = [x[i:i + 1] for x in ins]
        ours = run_edgelite(result.model, feeds, kernels="reference")
        for got, ref, want in zip(ours, run_litert_ref(result.model, feeds), outs):
            np.testing.assert_array_equal(got, ref)
            # int8 of a calibrated model follows the float outputs
            cos = float(np.dot(got.ravel(), want[i].ravel()) /
                        (np.linalg.norm(got) * np.linalg.norm(want[i]) + 1e-12))
            assert cos > 0.95, cos
