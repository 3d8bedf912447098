"""Calibration over shards in worker processes or on Ray (`--workers` / `--ray`).

TFLite's global min / max merges exactly: the minimum of per-shard minima is the minimum, in
any order and grouping, so the ranges equal a one-process calibration's bit for bit. This
process reads the samples, skips the non-finite ones and applies the sample limit exactly
as calibrate.collect_ranges does, and sends batches of finite samples to the workers; each
worker runs the float model (built once per process) and returns per-tensor minima and
maxima. The histogram methods (percentile, mse, entropy) grow their bins with the data seen
and moving-average follows sample order, so they run in one process.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

import numpy as np

from edgelite.errors import EdgeliteError
from ..runner import ModelRunner
from ..shards.execute import map_shards, worker_cache
from ..shards.source import PIECE_SAMPLES, Shard
from .lstm_replay import float_cells
from .observers import CalibConfig, CalibMethod


@dataclass
class MinMaxJob:
    model: bytes
    key: str = ""

    def __post_init__(self) -> None:
        if not self.key:
            self.key = "calibrate:" + hashlib.sha256(self.model).hexdigest()

    def run(self, shard: Shard) -> dict[str, tuple[float, float]]:
        cache = worker_cache(self.key)
        if "runner" not in cache:
            runner = ModelRunner(self.model, keep_all=True, label="the float model")
            cache["runner"] = runner
            cache["tensors"] = [d for d in runner.interp.get_tensor_details()
                                if d["dtype"] == np.float32]
        runner, tensors = cache["runner"], cache["tensors"]
        lo = {d["name"]: math.inf for d in tensors}
        hi = {d["name"]: -math.inf for d in tensors}
        batch = shard.data
        for i in range(len(next(iter(batch.values())))):
            runner.feed({name: a[i] for name, a in batch.items()})
            runner.interp.invoke()
            for d in tensors:
                x = runner.stored(d["index"])
                if x.size:
                    name = d["name"]
                    lo[name], hi[name] = min(lo[name], float(x.min())), max(hi[name],
                                                                            float(x.max()))
        return {n: (lo[n], hi[n]) for n in lo}


def check_parallel(model_runner: ModelRunner, method) -> None:
    """Refuse, in one line, what the parallel calibration cannot reproduce exactly."""
    config = CalibConfig.parse(method)
    if config.method is not CalibMethod.MINMAX:
        raise EdgeliteError(f"--workers / --ray calibrate with --calib-method minmax (global "
                            f"min / max merges exactly); {config.method.value} builds its "
                            "statistics in sample order: run it without --workers / --ray")
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


def parallel_ranges(model: bytes, samples: Iterable[dict[str, np.ndarray]],
                    limit: int | None, workers: int | None, ray: str | None,
                    progress: Callable[[int], None] | None = None):
    """(ranges, used, skipped) of TFLite's min / max over the samples, computed in shards."""
    skipped: list[int] = []
    sizes: list[int] = []

    def counted() -> Iterator[Shard]:
        for shard in _batches(samples, limit, skipped):
            sizes.append(len(next(iter(shard.data.values()))))
            yield shard

    parts = map_shards(MinMaxJob(model), counted(), workers, ray)
    used = sum(sizes)
    if progress and used:
        progress(used)
    lo: dict[str, float] = {}
    hi: dict[str, float] = {}
    for part in parts:
        for name, (a, b) in part.items():
            lo[name] = min(lo.get(name, math.inf), a)
            hi[name] = max(hi.get(name, -math.inf), b)
    ranges = {n: (lo[n], hi[n]) for n in lo if math.isfinite(lo[n])}
    return ranges, used, skipped
