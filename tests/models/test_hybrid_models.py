"""TensorFlow's dynamic-range (hybrid) files (models/builders/zoo_hybrid.py): a Keras CNN
converted with Optimize.DEFAULT and no representative dataset, per-channel and per-tensor
weights, asymmetric (TF's choice) and symmetric inputs. edgelite runs each against
LiteRT on both kernel sets: float outputs within LiteRT's own spread between its default
and reference kernels, or 1e-5 relative to the output's largest value where that spread
is smaller. Measured: bit-identical with BUILTIN_REF and within 5e-7 relative of the
default kernels, while LiteRT's own spread is about 1% (its reference input quantization
vs XNNPACK's qd8). The hybrid kernels themselves are bit-identical with LiteRT's:
tests/interpreter/kernels/test_hybrid.py.

A float kernel before a hybrid op matters: a 1-ulp difference in its output may move an
input across a quantization step. Hence every weighted layer is hybrid (the per-tensor
model's depthwise layer excepted)."""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.interpreter.loader.model import load_model
from tests.conftest import MODELS
from tests.support import KERNEL_SETS, run_edgelite, run_litert

FILES = {  # file -> (per-channel weights, asymmetric_quantize_inputs on FC / BATCH_MATMUL)
    "hybrid_cnn.tf_dr.tflite": (True, True),
    "hybrid_cnn.tf_dr_sym.tflite": (True, False),
    "hybrid_cnn_pt.tf_dr.tflite": (False, True),
    "hybrid_cnn_pt.tf_dr_sym.tflite": (False, False),
}
HYBRID_OPS = {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "BATCH_MATMUL"}
REL_TOL = 1e-5


def feeds(data: bytes, seed: int):
    interp = Interpreter(model_content=data)
    rng = np.random.default_rng(seed)
    out = []
    for d in interp.get_input_details():
        if d["dtype"] == np.int32:  # embedding ids
            out.append(rng.integers(0, 200, d["shape"]).astype(np.int32))
        else:
            out.append((rng.standard_normal(d["shape"]) * rng.uniform(0.5, 2)).astype(np.float32))
    return out


@pytest.mark.parametrize("name", sorted(FILES))
def test_file_is_hybrid(name):
    """What TF wrote: int8 weights on float ops (per channel or per tensor), the option."""
    per_channel, asymmetric = FILES[name]
    data = (MODELS / name).read_bytes()
    assert len(data) < 100_000
    sg = load_model(data).subgraphs[0]
    hybrid = []
    for op in sg.operators:
        if op.name not in HYBRID_OPS:
            continue
        x, w = sg.tensors[op.inputs[0]], sg.tensors[op.inputs[1]]
        if x.dtype == np.float32 and w.dtype == np.int8:
            hybrid.append(op.name)
            assert (len(w.quantization.scale) > 1) == (per_channel and op.name != "BATCH_MATMUL")
            if op.name in ("FULLY_CONNECTED", "BATCH_MATMUL"):
                assert op.options["asymmetric_quantize_inputs"] is asymmetric
    expected = ["CONV_2D"] * 4 + ["FULLY_CONNECTED", "BATCH_MATMUL", "FULLY_CONNECTED"]
    if per_channel:
        expected.insert(2, "DEPTHWISE_CONV_2D")
    assert hybrid == expected


@pytest.mark.parametrize("name", sorted(FILES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_runs_like_litert(name, seed):
    data = (MODELS / name).read_bytes()
    inputs = feeds(data, seed)
    litert = {k: run_litert(data, inputs, k) for k in KERNEL_SETS}
    for k in KERNEL_SETS:
        ours = run_edgelite(data, inputs, k)
        for i, (a, b) in enumerate(zip(ours, litert[k])):
            assert a.dtype == b.dtype and a.shape == b.shape
            spread = np.abs(litert["reference"][i].astype(np.float64) - litert["default"][i]).max()
            err = np.abs(a.astype(np.float64) - b).max()
            assert err <= max(spread, REL_TOL * np.abs(b).max()), (k, i, err, spread)
            # Measured tighter: every weighted layer is hybrid, so only the float MEAN
            # (and XNNPACK's float ops) round differently (<= 5e-7 relative).
            assert err <= REL_TOL * np.abs(b).max(), (k, i, err)
