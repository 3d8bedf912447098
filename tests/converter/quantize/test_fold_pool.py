"""auto's folds in worker processes (converter/quantize/fold_pool.py): the same sums, the
same choice and the same file as in one process; a worker that cannot start or dies
leaves its folds to this process."""

import pickle
import sys

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import QuantizeOptions
from edgelite.converter.quantize.auto import Candidate, folds, scoring_graph, scoring_options
from edgelite.converter.quantize.calibrate import graph_samples, usable_samples
from edgelite.converter.quantize.fold_pool import FoldPool, processes
from edgelite.converter.quantize.observers import CalibConfig, CalibMethod
from tests.conftest import MODELS

CALIB = str(MODELS / "digits_calib.npy")
MINMAX = Candidate(CalibConfig(CalibMethod.MINMAX))
ENTROPY_BC = Candidate(CalibConfig(CalibMethod.ENTROPY), frozenset({"bias_correction"}))


def _pool(workers: int, samples: int = 24, ready: bool = True,
          start_after: float = 0.0) -> FoldPool:
    """A pool over tf1_cnn's folds, its workers started at once (`ready`: and started, or
    failed to)."""
    graph = convert_detailed(MODELS / "tf1_cnn.pb").graph
    options = QuantizeOptions(calib=CALIB, calib_samples=samples)
    data = usable_samples(graph_samples(CALIB, graph, options.calibration.preprocess), samples)
    scored_graph, scored, outputs = scoring_graph(graph)
    pool = FoldPool(scored_graph, scoring_options(options), folds(data), scored, outputs,
                    workers, start_after)
    for worker in pool.workers if ready else ():
        worker.setup.join(60)
    return pool


@pytest.fixture(scope="module")
def alone():
    """The sums of two candidates, every fold in this process."""
    pool = _pool(1)
    assert pool.processes == 1 and not pool.workers
    return {c: pool.sums(c) for c in (MINMAX, ENTROPY_BC)}


def test_processes_are_one_per_core_at_most_one_per_fold(monkeypatch):
    assert processes(1, 4) == 1 and processes(3, 4) == 3 and processes(8, 4) == 4
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert processes(None, 4) == 2
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert processes(None, 4) == 4 and processes(None, 3) == 3


@pytest.mark.parametrize("first_took, started", [(1e9, False), (1e-9, True)])
def test_workers_start_only_after_a_slow_first_candidate(alone, first_took, started):
    """A search whose first candidate is quick ends before a worker would pay: none is
    started; after a slower one they are (and score the next candidates' folds)."""
    pool = _pool(2, start_after=first_took)
    try:
        assert not pool.workers and pool.wanted == 2
        assert pool.sums(MINMAX) == alone[MINMAX] and sorted(pool.local) == [0, 1, 2, 3]
        assert len(pool.workers) == int(started) and pool.start_after is None
        for worker in pool.workers:
            assert worker.ready.wait(60)
        assert pool.sums(ENTROPY_BC) == alone[ENTROPY_BC]
        assert all(w.alive for w in pool.workers)    # (asked, and answered)
    finally:
        pool.close()


def test_workers_give_the_same_sums_bit_for_bit(alone):
    pool = _pool(3)
    workers = list(pool.workers)
    try:
        assert pool.processes == 3 and [w.folds for w in workers] == [[1], [2]]
        assert all(w.ready.is_set() for w in workers)
        for cand, sums in alone.items():
            assert pool.sums(cand) == sums           # floats compared exactly
        assert sorted(pool.local) == [0, 3]          # fold f in process f % 3
    finally:
        pool.close()
    # the end of their stdin ended them
    assert [w.proc.returncode for w in workers] == [0, 0] and not pool.workers


def test_a_worker_that_dies_leaves_its_folds_here(alone):
    pool = _pool(2)
    try:
        assert pool.sums(MINMAX) == alone[MINMAX] and pool.processes == 2
        assert sorted(pool.local) == [0, 2]
        worker = pool.workers[0]
        worker.proc.kill()
        worker.proc.wait()
        assert pool.sums(ENTROPY_BC) == alone[ENTROPY_BC]
        assert pool.processes == 1 and sorted(pool.local) == [0, 1, 2, 3]
        assert pool.sums(MINMAX) == alone[MINMAX]
    finally:
        pool.close()


@pytest.mark.parametrize("executable", ["/nonexistent/python", "/bin/true", ""])
def test_a_worker_that_cannot_start_leaves_its_folds_here(alone, monkeypatch, executable):
    monkeypatch.setattr(sys, "executable", executable)
    pool = _pool(2)
    try:
        assert pool.sums(MINMAX) == alone[MINMAX]
        assert pool.processes == 1 and sorted(pool.local) == [0, 1, 2, 3]
    finally:
        pool.close()


def test_a_worker_not_ready_yet_leaves_the_candidate_here(alone):
    """The first candidate does not wait for a worker's start (about a second)."""
    pool = _pool(2, ready=False)
    worker = pool.workers[0]
    try:
        assert not worker.ready.is_set()
        assert pool.sums(MINMAX) == alone[MINMAX] and sorted(pool.local) == [0, 1, 2, 3]
        assert worker.ready.wait(60) and pool.processes == 2
        assert pool.sums(ENTROPY_BC) == alone[ENTROPY_BC]   # folds 1 and 3 there now
        assert pool.workers == [worker] and worker.alive     # (asked, and answered)
    finally:
        pool.close()
    assert worker.proc.returncode == 0


def test_options_cross_without_callbacks_or_data_sources():
    def samples():
        yield from np.load(CALIB)[:4]
    options = QuantizeOptions(calib=samples, calib_samples=4, log=lambda line: None,
                              progress=lambda n: None, calib_method="entropy")
    copy = pickle.loads(pickle.dumps(scoring_options(options)))
    assert copy.log is None and copy.calibration.data is None
    assert copy.calibration.progress is None and copy.calibration.samples == 4
    assert str(copy.calibration.method) == "entropy" and copy.mode is options.mode


def test_auto_chooses_the_same_and_writes_the_same_bytes_in_one_process(monkeypatch):
    from edgelite.converter.quantize import fold_pool
    answers = []
    receive = fold_pool._Worker.receive
    monkeypatch.setattr(fold_pool, "START_AFTER", 0.0)     # workers at once (a small model)
    monkeypatch.setattr(fold_pool._Worker, "receive",
                        lambda self: answers.append(receive(self)) or answers[-1])

    def convert(workers):
        q = QuantizeOptions(calib=CALIB, calib_samples=32, calib_method="auto",
                            workers=workers)
        return convert_detailed(MODELS / "keras_cnn.pb", ConvertOptions(quantize=q))
    one, two = convert(1), convert(2)
    assert answers and all(a is not None for a in answers)   # a worker scored folds
    assert one.model == two.model
    assert one.quantization.auto.table() == two.quantization.auto.table()
    assert [t.score for t in one.quantization.auto.tried] == \
        [t.score for t in two.quantization.auto.tried]
