"""Calibration over shards in worker processes or on Ray (`--workers` / `--ray`).

TFLite's global min / max merges exactly: the minimum of per-shard minima is the minimum, in
any order and grouping. The histogram methods (percentile, mse, entropy) take a second pass
(observers/histogram.py): each shard counts its values on the grid the merged first pass
fixed, and integer counts add exactly. So the ranges equal a one-process calibration's bit
for bit. This process reads the samples, skips the non-finite ones and applies the sample
limit exactly as calibrate.collect_ranges does, and sends batches of finite samples to the
workers; each worker runs the float model (built once per process) and returns its
observers. moving-average follows sample order, so it runs in one process.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

import numpy as np

from edgelite.errors import EdgeliteError
from ..runner import ModelRunner
from ..shards.execute import map_shards, worker_cache
from ..shards.source import PIECE_SAMPLES, Shard
from .lstm_replay import float_cells
from .observers import CalibConfig, CalibMethod, MinMaxObserver, Observer


@dataclass
class PassJob:
    """One calibration pass over a shard: minmax observers of every float tensor (`config`
    None), or `config`'s histogram observers of the tensors in `extremes` (their first-pass
    min / max)."""

    model: bytes
    config: CalibConfig | None = None
    extremes: dict[str, tuple[float, float]] | None = None
    key: str = ""

    def __post_init__(self) -> None:
        if not self.key:
            self.key = "calibrate:" + hashlib.sha256(self.model).hexdigest()

    def observer(self, name: str):
        if self.config is None:
            return MinMaxObserver()
        return self.config.observer(self.extremes[name]) if name in self.extremes else None

    def run(self, shard: Shard) -> dict[str, Observer]:
        cache = worker_cache(self.key)
        if "runner" not in cache:
            runner = ModelRunner(self.model, keep_all=True, label="the float model")
            cache["runner"] = runner
            cache["tensors"] = [d for d in runner.interp.get_tensor_details()
                                if d["dtype"] == np.float32]
        runner = cache["runner"]
        observed = [(d, o) for d in cache["tensors"] if (o := self.observer(d["name"]))]
        batch = shard.data
        for i in range(len(next(iter(batch.values())))):
            runner.feed({name: a[i] for name, a in batch.items()})
            runner.interp.invoke()
            for d, o in observed:
                o.observe(runner.stored(d["index"]))
        return {d["name"]: o for d, o in observed}


def check_parallel(model_runner: ModelRunner, method) -> None:
    """Refuse, in one line, what the parallel calibration cannot reproduce exactly."""
    config = CalibConfig.parse(method)
    if config.method is CalibMethod.MOVING_AVERAGE:
        raise EdgeliteError("--workers / --ray calibrate with minmax, percentile, mse or "
                            "entropy (their statistics merge exactly); moving-average "
                            "follows sample order: run it without --workers / --ray")
    interp = model_runner.interp
    if interp.num_subgraphs() > 1 or float_cells(interp.model):
        raise EdgeliteError("--workers / --ray calibrate models without control flow (WHILE "
                            "/ IF) or sequence LSTMs; calibrate this model without them")


def _batches(samples: Iterable[dict[str, np.ndarray]], limit: int | None,
             skipped: list[int]) -> Iterator[Shard]:
    """Shards of the finite samples (at most `limit`); the others' indices go to
    `skipped`, as collect_ranges counts them."""
    from .calibrate import finite_samples
    pending, index = [], 0
    for _, sample in finite_samples(samples, limit, skipped):
        pending.append(sample)
        if len(pending) == PIECE_SAMPLES:
            yield Shard(index, {n: np.stack([s[n] for s in pending]) for n in pending[0]})
            pending, index = [], index + 1
    if pending:
        yield Shard(index, {n: np.stack([s[n] for s in pending]) for n in pending[0]})


def parallel_ranges(model: bytes, read: Callable[[], Iterable[dict[str, np.ndarray]]],
                    limit: int | None, workers: int | None, ray: str | None,
                    progress: Callable[[int], None] | None = None,
                    config: CalibConfig = CalibConfig(), only: set[str] | None = None):
    """(ranges, used, skipped) of calibration over the samples `read()` gives, computed in
    shards: min / max, then for a histogram method a second pass (module doc)."""
    skipped: list[int] = []
    sizes: list[int] = []

    def counted(skipped: list[int]) -> Iterator[Shard]:
        for shard in _batches(read(), limit, skipped):
            sizes.append(len(next(iter(shard.data.values()))))
            yield shard

    first = _merged(map_shards(PassJob(model), counted(skipped), workers, ray))
    used = sum(sizes)
    if config.two_pass and used:
        extremes = {n: (o.lo, o.hi) for n, o in first.items() if only is None or n in only}
        first.update(_merged(map_shards(PassJob(model, config, extremes), counted([]),
                                        workers, ray)))
    if progress and used:
        progress(used)
    ranges = {n: r for n, o in first.items() if (r := o.range()) is not None}
    return ranges, used, skipped


def _merged(parts: list[dict[str, Observer]]) -> dict[str, Observer]:
    """Each tensor's observers over the shards, merged (in shard order; exact in any)."""
    merged: dict[str, Observer] = {}
    for part in parts:
        for name, o in part.items():
            if name in merged:
                merged[name].merge(o)
            else:
                merged[name] = o
    return merged
