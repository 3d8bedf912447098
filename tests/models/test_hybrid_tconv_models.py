"""TensorFlow's dynamic-range (hybrid) TRANSPOSE_CONV files (models/builders/
zoo_hybrid_tconv.py): a Keras decoder of three Conv2DTranspose layers converted with
Optimize.DEFAULT, per-channel and per-tensor int8 weights. Every layer is hybrid and the
RELU between them exact, so edgelite's outputs are bit-identical with LiteRT's on both
kernel sets (the default set: XNNPACK's qd8 deconvolution for two layers, the builtin
hybrid kernel for the 1x1 stride-2 SAME one XNNPACK declines)."""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.interpreter.loader.model import load_model
from tests.conftest import MODELS
from tests.support import KERNEL_SETS, run_edgelite, run_litert

FILES = {"hybrid_tconv.tf_dr.tflite": True, "hybrid_tconv_pt.tf_dr.tflite": False}
X_SHAPE = (2, 6, 6, 16)
# (padding: SAME 0 / VALID 1, stride, output channels) of the three TRANSPOSE_CONVs
LAYERS = [(0, 2, 32), (0, 2, 40), (1, 2, 8)]


@pytest.mark.parametrize("name", sorted(FILES))
def test_file_is_hybrid(name):
    """What TF wrote: TRANSPOSE_CONV with int8 weights (per channel or per tensor), float
    input and output, no bias; a RELU after the first."""
    sg = load_model((MODELS / name).read_bytes()).subgraphs[0]
    assert [op.name for op in sg.operators] == ["TRANSPOSE_CONV", "RELU", "TRANSPOSE_CONV",
                                                "TRANSPOSE_CONV"]
    convs = [op for op in sg.operators if op.name == "TRANSPOSE_CONV"]
    found = []
    for op in convs:
        w, x = sg.tensors[op.inputs[1]], sg.tensors[op.inputs[2]]
        assert (w.dtype, x.dtype, len(op.inputs)) == (np.int8, np.float32, 3)
        assert len(w.quantization.scale) == (w.shape[0] if FILES[name] else 1)
        found.append((op.options["padding"], op.options["stride_h"], w.shape[0]))
    assert found == LAYERS


@pytest.mark.parametrize("name", sorted(FILES))
@pytest.mark.parametrize("kind", ["normal", "positive", "one_zero_image"])
def test_runs_like_litert(name, kind):
    data = (MODELS / name).read_bytes()
    rng = np.random.default_rng(len(kind))
    x = (rng.standard_normal(X_SHAPE) * rng.uniform(0.5, 2)).astype(np.float32)
    if kind == "positive":
        x = np.abs(x)
    elif kind == "one_zero_image":
        x[1] = 0
    for kernels in KERNEL_SETS:
        (ours,), (theirs,) = run_edgelite(data, [x], kernels), run_litert(data, [x], kernels)
        assert ours.dtype == theirs.dtype == np.float32 and ours.shape == (2, 50, 50, 8)
        assert np.array_equal(ours, theirs), (kernels, float(np.abs(ours - theirs).max()))
