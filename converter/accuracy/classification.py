"""Classification accuracy of one or several models side by side, with CI thresholds.

Each model (a .pb/.pbtxt converted to float, or a float / int8 / uint8 .tflite) runs on the
same samples (batch 1 each; integer inputs are quantized with the input's own parameters);
its first output (or `output`) gives the class scores. Accuracies are fractions in [0, 1];
`max_drop` is an absolute drop in accuracy relative to the FIRST model (0.01 = one point).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from edgelite.errors import EdgeliteError
from edgelite.names import quoted
from ..files import shown_path
from ..runner import ModelRunner
from ..sample_data import names_list
from ..shards.execute import map_shards
from ..shards.source import PIECE_SAMPLES, shards_of
from .eval_job import EvalJob, merge
from .report import eval_table, eval_to_dict
from .sources import DataSource, LoadedModel, ModelSource, load_model


@dataclass
class ModelAccuracy:
    label: str
    precision: str               # float / int8 / uint8 / int16 / dynamic / float16
    accuracy: float
    top_k_accuracy: float
    per_class: list[float]       # accuracy (recall) per class, in EvalReport.classes order


@dataclass
class Check:
    model: str
    kind: str                    # "min_accuracy" or "max_drop"
    value: float                 # the model's accuracy, or its drop from the first model
    threshold: float
    ok: bool
    message: str


@dataclass
class EvalReport:
    samples: int
    top_k: int
    classes: list[int]
    class_counts: list[int]
    models: list[ModelAccuracy]
    checks: list[Check] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]

    def table(self) -> str:
        return eval_table(self)

    def to_dict(self) -> dict:
        return eval_to_dict(self)


def evaluate(models: Sequence[ModelSource | LoadedModel], data: DataSource, labels: DataSource,
             top_k: int = 1, samples: int | None = None, min_accuracy: float | None = None,
             max_drop: float | None = None, output: str | int = 0, inputs=None, outputs=None,
             input_shapes=None, progress: Callable[[int], None] | None = None,
             workers: int | None = None, ray: str | None = None,
             shard_samples: int = PIECE_SAMPLES) -> EvalReport:
    """Accuracy, top-k accuracy and per-class accuracy of every model on (data, labels), and
    the threshold checks (see module doc).

    `data` / `labels` are anything shards.shards_of takes (files, folders of shards paired
    by sorted name, arrays, iterables of batches; `labels` None when `data` yields (x, y)
    batches). Counts are taken per shard and merged exactly (eval_job.py), so `workers`
    (a process pool) and `ray` ("local" or a cluster address) give the same report.
    `progress` is called with the number of samples each finished shard held."""
    if not models:
        raise EdgeliteError("evaluate: give at least one model")
    if top_k < 1:
        raise EdgeliteError(f"top_k must be >= 1, got {top_k}")
    if samples is not None and samples < 1:
        raise EdgeliteError(f"samples must be >= 1, got {samples}")
    for name, v in (("min_accuracy", min_accuracy), ("max_drop", max_drop)):
        if v is not None and not 0.0 <= v <= 1.0:
            raise EdgeliteError(f"{name} is a fraction in [0, 1] (0.9 = 90%), got {v}")
    loaded = [m if isinstance(m, LoadedModel) else load_model(m, None, inputs, outputs,
                                                              input_shapes) for m in models]
    job = EvalJob([m.content for m in loaded], [m.label for m in loaded], output, top_k)
    shards = shards_of(data, labels, shard_samples, samples)
    total = merge(map_shards(job, shards, workers, ray, progress), len(loaded))
    n = total.samples
    if n == 0:
        raise EdgeliteError("the data holds no samples")
    classes = sorted(total.counts)
    rows = np.stack([total.counts[c] for c in classes])
    results = []
    for m, model in enumerate(loaded):
        hits1, hitsk = rows[:, 1 + m], rows[:, 1 + len(loaded) + m]
        per_class = [int(h) / int(c) for h, c in zip(hits1, rows[:, 0])]
        results.append(ModelAccuracy(model.label, total.precisions[m], int(hits1.sum()) / n,
                                     int(hitsk.sum()) / n, per_class))
    report = EvalReport(n, top_k, classes, [int(c) for c in rows[:, 0]], results)
    report.checks = threshold_checks(results, min_accuracy, max_drop)
    return report


def output_index(runner: ModelRunner, output: str | int) -> int:
    names = [d["name"] for d in runner.outputs]
    if isinstance(output, int):
        if not 0 <= output < len(names):
            raise EdgeliteError(f"{shown_path(runner.label)} has {len(names)} output(s) "
                                f"{names_list(names)}; no output {output}")
        return output
    from .compare import base_name
    for k, name in enumerate(names):
        if output in (name, base_name(name)):
            return k
    raise EdgeliteError(f"{shown_path(runner.label)} has no output {quoted(output)}; "
                         "outputs are "
                         f"{names_list(names)}")


def precision(runner: ModelRunner) -> str:
    """What the model computes in: the integer type of its quantized activations, else
    "dynamic" (int8 weights, float activations), "float16" (float16 weights) or "float"."""
    sg = runner.interp.model.subgraphs[0]
    acts, consts = set(), set()
    # an integer tensor only QUANTIZE writes and DEQUANTIZE reads is a float model's
    # quantize-dequantize (a QAT graph's FakeQuant, as TF's converter writes it in float mode)
    computed = {i for op in sg.operators if op.name not in ("QUANTIZE", "DEQUANTIZE")
                for i in (*op.inputs, *op.outputs)}
    for k, t in enumerate(sg.tensors):
        if t.dtype is None:
            continue
        quantized = t.quantization is not None and t.quantization.scale.size > 0
        if t.is_constant:
            consts.add(t.dtype.name)
        elif quantized and t.dtype.kind in "iu" and k in computed:
            acts.add(t.dtype.name)
    for name in ("int8", "uint8", "int16"):
        if name in acts:
            return name
    return "dynamic" if "int8" in consts else "float16" if "float16" in consts else "float"


def threshold_checks(results: list[ModelAccuracy], min_accuracy: float | None,
                     max_drop: float | None) -> list[Check]:
    """min_accuracy for every model; max_drop for every model after the first, against
    the first."""
    checks = []
    if min_accuracy is not None:
        for m in results:
            ok = m.accuracy >= min_accuracy
            checks.append(Check(m.label, "min_accuracy", m.accuracy, min_accuracy, ok,
                                f"{shown_path(m.label)}: accuracy {100 * m.accuracy:.2f}% is "
                                f"{'at least' if ok else 'below'} the minimum "
                                f"{100 * min_accuracy:.2f}%"))
    if max_drop is not None:
        first = results[0]
        for m in results[1:]:
            drop = first.accuracy - m.accuracy
            ok = drop <= max_drop + 1e-12
            checks.append(Check(m.label, "max_drop", drop, max_drop, ok,
                                f"{shown_path(m.label)}: accuracy {100 * m.accuracy:.2f}% is "
                                f"{100 * drop:.2f} point(s) below {shown_path(first.label)} "
                                f"({100 * first.accuracy:.2f}%); allowed drop "
                                f"{100 * max_drop:.2f}"))
    return checks
