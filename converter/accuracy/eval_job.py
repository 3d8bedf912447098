"""`evaluate` per shard: integer counts per class and model, merged exactly.

A shard's partial holds, per class present in it, the number of samples and, per model, the
top-1 and top-k hits. Sums of integers do not depend on order or grouping, and accuracies
are divided only once at the end (hits / n, the same double numpy's mean of the hit flags
gives), so any sharding, worker count or Ray run yields the same report bit for bit.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from edgelite.errors import EdgeliteError, ShapeError
from edgelite.names import quoted
from ...interpreter import blas
from ..files import shown_path
from ..runner import BATCH, ModelRunner
from ..shards.execute import worker_cache
from ..shards.source import Shard
from .metrics import top_k_hits
from .sources import load_inputs, load_labels, sample_at


@dataclass
class EvalPartial:
    """Counts of one shard (or of several merged): class -> [n, hits1 per model, hitsk per
    model] as int64 rows."""
    models: int
    counts: dict[int, np.ndarray] = field(default_factory=dict)
    precisions: list[str] = field(default_factory=list)

    def add(self, other: "EvalPartial") -> None:
        for c, row in other.counts.items():
            mine = self.counts.get(c)
            self.counts[c] = row.copy() if mine is None else mine + row
        self.precisions = self.precisions or other.precisions

    @property
    def samples(self) -> int:
        return int(sum(int(row[0]) for row in self.counts.values()))


def merge(partials: list[EvalPartial], models: int) -> EvalPartial:
    total = EvalPartial(models)
    for p in partials:
        total.add(p)
    return total


@dataclass
class EvalJob:
    """What each shard computes (picklable: model bytes travel once per worker)."""
    models: list[bytes]
    labels: list[str]
    output: str | int
    top_k: int
    key: str = ""

    def __post_init__(self) -> None:
        if not self.key:
            digest = hashlib.sha256()
            for m in self.models:
                digest.update(hashlib.sha256(m).digest())
            self.key = "eval:" + digest.hexdigest()

    def runners(self) -> list:
        cache = worker_cache(self.key)
        if "runners" not in cache:
            # batched where exact (runner.batch_exact: integer models), else one sample per
            # invoke -- one interpreter per model either way
            cache["runners"] = [ModelRunner(content, label=label, batch=BATCH)
                                for label, content in zip(self.labels, self.models)]
        return cache["runners"]

    def run(self, shard: Shard) -> EvalPartial:
        from .classification import output_index, precision
        data, labels, what = shard.load()
        if labels is None:
            raise EdgeliteError(f"{what} comes without labels: give labels (a file, a "
                                "folder of label shards, or (x, y) batches)")
        y = load_labels(labels)
        n = len(y)
        classes = np.unique(y)
        rows = np.zeros((len(classes), 1 + 2 * len(self.models)), np.int64)
        rows[:, 0] = [(y == c).sum() for c in classes]
        partial = EvalPartial(len(self.models))
        for m, runner in enumerate(self.runners()):
            arrays = load_inputs(data, runner.input_names, what, runner.aliases)
            count = len(next(iter(arrays.values())))
            if count != n:
                raise ShapeError(f"{what} holds {count} samples but the labels {n}")
            k_out = output_index(runner, self.output)
            # the interpreters run BLAS on one thread (Settings.blas_threads): one section
            # for the shard instead of one per invoke
            with blas.threads(1):
                outs = runner.run_many([sample_at(arrays, i) for i in range(n)])
            s = np.stack([out[k_out].reshape(-1) for out in outs])
            if s.shape[1] < 2 or int(y.max()) >= s.shape[1] or int(y.min()) < 0:
                raise EdgeliteError(
                    f"{shown_path(runner.label)}: output "
                    f"{quoted(runner.outputs[k_out]['name'])} has {s.shape[1]} score(s) per "
                    f"sample; labels range over {int(y.min())}..{int(y.max())}: need one "
                    "score per class")
            hits1, hitsk = top_k_hits(s, y, 1), top_k_hits(s, y, self.top_k)
            for r, c in enumerate(classes):
                rows[r, 1 + m] = hits1[y == c].sum()
                rows[r, 1 + len(self.models) + m] = hitsk[y == c].sum()
            partial.precisions.append(precision(runner))
        partial.counts = {int(c): rows[r] for r, c in enumerate(classes)}
        return partial
