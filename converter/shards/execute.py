"""Run a job over shards: in this process, in a process pool, or as Ray tasks.

A job is a picklable object with `key` (a string naming its models) and `run(shard)` -> a
partial result. The partials come back in shard-index order whatever order the shards
finished in, so a reduction over them is the same in every mode. Each worker process keeps
what a job builds once (its interpreters) in `worker_cache(key)`, so models are prepared
once per process, not per shard; the job itself travels once per worker (the pool's
initializer) or once per run (Ray's object store), not with every shard.

At most a few shards per worker are in flight, so a lazily produced shard stream (a Python
iterable of batches) is never held whole.
"""

from __future__ import annotations

import socket
from typing import Any, Callable, Iterable

from edgelite.errors import EdgeliteError
from .source import Shard

IN_FLIGHT_PER_WORKER = 2
RAY_RETRIES = 3           # a task whose worker died runs again, up to this many times
RAY_CONNECT_TIMEOUT = 10  # seconds to reach a cluster's address before saying it cannot be

Progress = Callable[[int], None]  # called with the samples a shard just finished held


def _report(progress: Progress | None, partial: Any) -> None:
    """A shard is done: its samples (a partial's `samples`; 1 where it keeps no count) to
    the progress callback, as increments a progress bar adds up."""
    if progress:
        progress(int(getattr(partial, "samples", 1)))

_cache: dict[str, dict] = {}
_job: Any = None


def worker_cache(key: str) -> dict:
    """A dict that lives as long as this process, one per job key (the job's interpreters)."""
    if key not in _cache:
        _cache.clear()  # one job's models at a time
        _cache[key] = {}
    return _cache[key]


def map_shards(job: Any, shards: Iterable[Shard], workers: int | None = None,
               ray: str | None = None, progress: Progress | None = None) -> list:
    """job.run(shard) for every shard, in shard-index order (see module doc): here when
    `workers` is None or 1 and `ray` is None, in `workers` processes, or on Ray (`ray`:
    "local" for a cluster started here, or a cluster's address)."""
    if workers is not None and workers < 1:
        raise EdgeliteError(f"workers must be >= 1, got {workers}")
    try:
        if ray is not None:
            done = _on_ray(job, shards, ray, workers, progress)
        elif workers is not None and workers > 1:
            done = _on_pool(job, shards, workers, progress)
        else:
            done = {}
            for shard in shards:
                done[shard.index] = job.run(shard)
                _report(progress, done[shard.index])
    finally:
        _cache.clear()  # this process's interpreters go with the run
    return [done[i] for i in sorted(done)]


def _install(job: Any) -> None:
    global _job
    _job = job


def _run_installed(shard: Shard) -> Any:
    return _job.run(shard)


def _on_pool(job: Any, shards: Iterable[Shard], workers: int, progress) -> dict:
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    done, pending = {}, {}
    context = multiprocessing.get_context("spawn")  # no fork of a threaded (BLAS) process
    try:
        with ProcessPoolExecutor(workers, context, _install, (job,)) as pool:
            for shard in shards:
                pending[pool.submit(_run_installed, shard)] = shard.index
                if len(pending) >= workers * IN_FLIGHT_PER_WORKER:
                    _collect(wait(pending, return_when=FIRST_COMPLETED).done, pending, done,
                             progress)
            while pending:
                _collect(wait(pending, return_when=FIRST_COMPLETED).done, pending, done,
                         progress)
    except BrokenProcessPool as e:
        raise EdgeliteError(f"a worker process died ({e}); run again with fewer --workers "
                            "or without them to see the error") from None
    return done


def _collect(finished, pending: dict, done: dict, progress) -> None:
    for future in finished:
        index = pending.pop(future)
        done[index] = future.result()  # a worker's error is raised here
        _report(progress, done[index])


def _run_task(job: Any, shard: Shard) -> Any:
    return job.run(shard)


def import_ray():
    """The ray module, or one clear line saying how to install it."""
    try:
        import ray
    except ImportError:
        raise EdgeliteError("--ray needs Ray, which is not installed: pip install "
                            "'edgelite[ray]' (or pip install ray)") from None
    return ray


def connect_ray(address: str, workers: int | None = None):
    """The ray module, connected: "local" starts a cluster in this machine (`workers` CPUs,
    default all); anything else is an existing cluster's address (host:port or ray://...)."""
    ray = import_ray()
    if ray.is_initialized():
        return ray
    if address != "local":
        _reachable(address)
    options = dict(include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        if address == "local":
            ray.init(num_cpus=workers, **options)
        else:
            ray.init(address=address, **options)
    except Exception as e:  # noqa: BLE001 -- ray raises ConnectionError, RuntimeError, ...
        where = "start a local Ray cluster" if address == "local" else \
            f"connect to the Ray cluster at {address}"
        raise EdgeliteError(f"cannot {where}: {type(e).__name__}: "
                            f"{str(e).splitlines()[0] if str(e) else ''}") from None
    return ray


def _reachable(address: str) -> None:
    """Fail fast, in one line, when a host:port address does not answer."""
    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise EdgeliteError(f"--ray {address}: give 'local' or a cluster address HOST:PORT "
                            "(or ray://HOST:PORT)")
    try:
        socket.create_connection((host, int(port)), RAY_CONNECT_TIMEOUT).close()
    except OSError as e:
        raise EdgeliteError(f"cannot reach the Ray cluster at {address} "
                            f"({e.strerror or e}); start it with `ray start --head` or give "
                            "--ray local") from None


def _on_ray(job: Any, shards: Iterable[Shard], address: str, workers: int | None,
            progress) -> dict:
    ray = connect_ray(address, workers)
    task = ray.remote(max_retries=RAY_RETRIES)(_run_task)
    job_ref = ray.put(job)  # the models go to the object store once
    window = IN_FLIGHT_PER_WORKER * max(1, int(ray.cluster_resources().get("CPU", 1)))
    done, pending = {}, {}

    def collect(refs) -> None:
        for ref in refs:
            index = pending.pop(ref)
            try:
                done[index] = ray.get(ref)
            except ray.exceptions.RayTaskError as e:
                cause = getattr(e, "cause", None)  # the task's own exception
                if isinstance(cause, EdgeliteError):
                    raise cause.with_traceback(None) from None
                raise
            _report(progress, done[index])

    for shard in shards:
        pending[task.remote(job_ref, shard)] = shard.index
        if len(pending) >= window:
            collect(ray.wait(list(pending), num_returns=1)[0])
    while pending:
        collect(ray.wait(list(pending), num_returns=1)[0])
    return done

