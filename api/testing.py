"""Accuracy checks as one pytest assertion each.

    import edgelite.testing

    def test_int8_model_keeps_its_accuracy():
        edgelite.testing.assert_accuracy("m_int8.tflite", x, y, reference="m.pb",
                                         max_drop=0.01, min_accuracy=0.95)
        edgelite.testing.assert_sqnr("m.pb", "m_int8.tflite", x, min_db=25)

Models are paths (.tflite, or .pb/.pbtxt converted to a float model) or bytes (e.g. what
edgelite.convert returns); x / y are arrays or .npy/.npz paths (see `edgelite eval`). On
failure the AssertionError carries the full table, so the pytest report says what went wrong;
on success the report is returned.
"""

from __future__ import annotations

import os
from typing import Union

from edgelite.converter.accuracy import CompareReport, EvalReport, compare, evaluate
from edgelite.converter.accuracy.classification import threshold_checks
from edgelite.converter.files import shown_path
from edgelite.converter.accuracy.sources import load_model

Model = Union[str, os.PathLike, bytes]


def _load(model: Model, role: str):
    label = f"{role} ({len(model)} bytes)" if isinstance(model, (bytes, bytearray)) else None
    return load_model(model, label)


def assert_accuracy(model: Model, x, y, min_accuracy: float | None = None,
                    max_drop: float | None = None, reference: Model | None = None,
                    top_k: int = 1, samples: int | None = None) -> EvalReport:
    """Assert that `model`'s top-1 accuracy on (x, y) is at least `min_accuracy` and/or at
    most `max_drop` below `reference`'s (fractions: 0.01 = one point)."""
    if min_accuracy is None and max_drop is None:
        raise ValueError("assert_accuracy: give min_accuracy and/or max_drop")
    if max_drop is not None and reference is None:
        raise ValueError("assert_accuracy: max_drop is measured against reference=; give one")
    models = ([_load(reference, "reference")] if reference is not None else []) + [
        _load(model, "model")]
    report = evaluate(models, x, y, top_k=top_k, samples=samples, max_drop=max_drop)
    if min_accuracy is not None:  # for `model` only, not the reference
        report.checks += threshold_checks([report.models[-1]], min_accuracy, None)
    failures = report.failures
    if failures:
        raise AssertionError("\n".join(c.message for c in failures) + "\n\n" + report.table())
    return report


def assert_sqnr(reference: Model, quantized: Model, x, min_db: float,
                samples: int | None = None, top: int = 10) -> CompareReport:
    """Assert that `quantized`'s outputs reach `min_db` of SQNR against `reference` on x; the
    failure message lists the `top` ops that lose the most precision."""
    report = compare(_load(reference, "reference"), _load(quantized, "quantized"), x, samples)
    if not report.output_sqnr_db >= min_db:
        raise AssertionError(
            f"output SQNR {report.output_sqnr_db:.2f} dB is below {min_db:.2f} dB "
            f"({shown_path(report.quantized)} vs {shown_path(report.reference)}, "
            f"{report.samples} samples)\n\n"
            + report.table(top))
    return report


__all__ = ["assert_accuracy", "assert_sqnr"]
