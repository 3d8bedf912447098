"""Accuracy tools: where a quantized model loses precision, and how accurate models are.

    from edgelite.converter.accuracy import compare, evaluate
    report = compare("models/keras_cnn.pb", "keras_cnn_int8.tflite", "x.npy")
    print(report.table(top=10))          # tensors worst first (lowest SQNR)
    ev = evaluate(["m.pb", "m_int8.tflite"], "x.npy", "y.npy", top_k=3, max_drop=0.01)
    print(ev.table()); assert ev.passed

compare.py (per-tensor SQNR / cosine / error vs the float reference), classification.py
(accuracy, top-k, per class, CI thresholds), metrics.py, sources.py (models and data),
op_replay.py (one op run alone), report.py (tables, JSON, CSV), plot.py (SQNR per layer, needs
matplotlib). Models run in the converter's one model runner (runner.py).
"""

from .compare import CompareReport, OutputReport, TensorReport, base_name, compare
from .classification import Check, EvalReport, ModelAccuracy, evaluate
from .metrics import TensorStats, cosine, sqnr, top_k_hits
from .sources import LoadedModel, load_inputs, load_labels, load_model

__all__ = ["compare", "CompareReport", "TensorReport", "OutputReport", "base_name",
           "evaluate", "EvalReport", "ModelAccuracy", "Check", "sqnr", "cosine",
           "TensorStats", "top_k_hits", "LoadedModel", "load_model", "load_inputs",
           "load_labels"]
