"""map_shards: results in shard order in every mode; a Ray task whose worker died runs
again."""

import os
from dataclasses import dataclass

import numpy as np
import pytest

from edgelite.converter.shards import map_shards, shards_of, worker_cache
from edgelite.errors import EdgeliteError

from .ray_session import ray_session  # noqa: F401 -- a fixture


@dataclass
class SumJob:
    """Sum of each shard, the process that ran it, and how often that process built its
    state (worker_cache: once per process, not per shard)."""
    key: str = "sum"
    die_once: str = ""  # a marker path: the first task to see it missing kills its worker

    def run(self, shard):
        if self.die_once and not os.path.exists(self.die_once):
            open(self.die_once, "w").close()
            os._exit(1)  # the worker process dies mid-task
        cache = worker_cache(self.key)
        cache["built"] = cache.get("built", 0) + (0 if "built" in cache else 1)
        x, _, _ = shard.load()
        return shard.index, int(x.sum()), os.getpid(), cache["built"]


def _shards():
    return shards_of(np.arange(1000).reshape(100, 10), piece=7)


def test_serial_and_pool_give_results_in_shard_order():
    serial = map_shards(SumJob(), _shards())
    pool = map_shards(SumJob(), _shards(), workers=2)
    assert [r[:2] for r in serial] == [r[:2] for r in pool]
    assert [r[0] for r in pool] == list(range(15))
    assert sum(r[1] for r in pool) == 999 * 1000 // 2
    assert {r[3] for r in pool} == {1}  # state built once per process
    assert os.getpid() not in {r[2] for r in pool} and len({r[2] for r in pool}) <= 2
    with pytest.raises(EdgeliteError, match="workers must be >= 1"):
        map_shards(SumJob(), _shards(), workers=0)


def test_ray_retries_a_task_whose_worker_died(ray_session, tmp_path):  # noqa: F811
    marker = tmp_path / "died"
    results = map_shards(SumJob(die_once=str(marker)), _shards(), ray="local")
    assert marker.exists()
    assert [r[:2] for r in results] == [r[:2] for r in map_shards(SumJob(), _shards())]
