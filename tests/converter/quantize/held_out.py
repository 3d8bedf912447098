"""Scoring a quantized model against its float model on held-out data (shared by the tests
of the accuracy transforms)."""

from __future__ import annotations

import numpy as np

from edgelite.converter.quantize.metrics import sqnr
from edgelite.converter.runner import ModelRunner

# the logits of the models trained on the digits (before their softmax)
LOGITS = {"tf1_cnn": "fc/logits", "keras_cnn": "keras_cnn/logits/BiasAdd",
          "qat_cnn": "fc/act_quant"}


def held_out_sqnr(float_model: bytes, quant_model: bytes, x: np.ndarray, tensor: str):
    """SQNR of `tensor` and of the output on the held-out images (all samples together)."""
    f, q = ModelRunner(float_model, True), ModelRunner(quant_model, True)
    ref, out, ref_t, out_t = [], [], [], []
    for sample in x:
        ref.append(f.run({"input": sample}))
        out.append(q.run({"input": sample}))
        ref_t.append([f.tensor(tensor)])
        out_t.append([q.tensor(tensor)])
    return sqnr(ref_t, out_t), sqnr(ref, out)
