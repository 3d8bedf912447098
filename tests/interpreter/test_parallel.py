"""num_threads: big convolutions split their output rows over threads (parallel.py) and
compute exactly what one thread computes; the thread pool itself, which never spins and
never waits for a worker that has not started; the default."""

import os
import threading
import time

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.interpreter import native as native_backend
from edgelite.interpreter import parallel
from edgelite.interpreter.kernels.common import native_split
from tests.support import assert_bit_exact

from .kernels.test_conv import conv_model as float_conv_model
from .kernels.test_conv import quant_conv_model


_tasks_made: list[int] = []  # native_split.tasks' answers while an interpreter allocates


@pytest.fixture(autouse=True)
def _record_native_tasks(monkeypatch):
    real = native_split.tasks

    def tasks(*args, **kw):
        _tasks_made.append(real(*args, **kw))
        return _tasks_made[-1]

    monkeypatch.setattr(native_split, "tasks", tasks)


def _run(model: bytes, feeds, threads):
    interp = Interpreter(model_content=model, num_threads=threads)
    _tasks_made.clear()
    interp.allocate_tensors()
    interp.native_tasks = max(_tasks_made, default=1)
    for d, x in zip(interp.get_input_details(), feeds):
        interp.set_tensor(d["index"], x)
    interp.invoke()
    return interp, [interp.get_tensor(d["index"]) for d in interp.get_output_details()]


def _slices(interp) -> int:
    """How many pieces the one op's work is split into (0: not split): a native step splits
    into the tasks native_split chose (run on the C pool, inside the step), a native kernel
    with a Python eval lists its ranges, a numpy kernel its slices."""
    (eval_fn, record, _, _), = interp._steps
    if eval_fn is getattr(native_backend.module, "run_native_step", None):
        return interp.native_tasks if interp.native_tasks > 1 else 0
    native = getattr(record, "native", None)
    if native is not None and hasattr(native, "ranges"):
        count = len(native.ranges)
    elif hasattr(record, "ranges"):  # the native depthwise record
        count = len(record.ranges)
    else:
        count = len(record.slices)
    return count if count > 1 else 0


# Outputs of 128 * 128 * 16 = 2^18 values: the smallest that is split.
FLOAT_CASES = [
    ("CONV_2D", (1, 128, 128, 8), (16, 1, 1, 8), (1, 1)),  # pointwise
    ("CONV_2D", (1, 256, 256, 3), (16, 3, 3, 3), (2, 2)),  # im2col, stride 2
    ("CONV_2D", (4, 64, 64, 8), (16, 3, 3, 8), (1, 1)),  # batch 4: split along N
    ("DEPTHWISE_CONV_2D", (1, 128, 128, 16), (1, 3, 3, 16), (1, 1)),
    ("DEPTHWISE_CONV_2D", (1, 255, 257, 16), (1, 3, 3, 16), (2, 2)),
]


@pytest.mark.parametrize("op,x_shape,w_shape,stride", FLOAT_CASES)
def test_float_split_equals_one_thread(rng, op, x_shape, w_shape, stride):
    x = rng.uniform(-1, 1, x_shape).astype(np.float32)
    w = rng.uniform(-1, 1, w_shape).astype(np.float32)
    bias = rng.uniform(-1, 1, w_shape[0] if op == "CONV_2D" else w_shape[3]).astype(np.float32)
    extra = {"depth_multiplier": 1} if op == "DEPTHWISE_CONV_2D" else {}
    model = float_conv_model(x_shape, w, bias, op=op, stride=stride, act="RELU6", **extra)
    one, (expected,) = _run(model, [x], 1)
    two, (actual,) = _run(model, [x], 2)
    if op == "CONV_2D" and type(two._steps[0][1]).__name__ == "NativeStep":
        # native_conv_blas: fixed blocks of pixels on the C pool inside the step, whatever
        # the thread count (tests/interpreter/kernels/common/test_native_conv_blas.py)
        np.testing.assert_array_equal(actual, expected)
        return
    # numpy: float CONV_2D of one image stays one BLAS product (conv.py); a batch splits
    # by image
    split = op == "DEPTHWISE_CONV_2D" or x_shape[0] > 1
    assert _slices(one) == 0 and (_slices(two) >= 2) == split
    # The same arithmetic on each output row; OpenBLAS may pick another micro-kernel for a
    # GEMM with fewer rows (seen on AVX-512), which reorders float32 sums: a few ulp of the partial sums.
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op,x_shape,w_shape,stride", FLOAT_CASES)
def test_int8_split_is_bit_exact(rng, op, x_shape, w_shape, stride):
    model, feeds = quant_conv_model(rng, np.int8, x_shape, w_shape, op=op, stride=stride,
                                    act="RELU6")
    ref = assert_bit_exact(model, feeds, kernels=["default"])["default"]
    two, actual = _run(model, feeds, 2)
    assert _slices(two) >= 2
    np.testing.assert_array_equal(actual[0], ref[0])


def test_small_ops_are_not_split(rng):
    model, feeds = quant_conv_model(rng, np.int8, (1, 8, 8, 4), (8, 3, 3, 4))
    interp, _ = _run(model, feeds, 4)
    assert _slices(interp) == 0


def test_row_ranges_and_slices_cover_the_rows():
    assert parallel.row_ranges(10, 3) == [(0, 3), (3, 6), (6, 10)]
    assert parallel.row_ranges(2, 4) == [(0, 1), (1, 2)]
    assert parallel.output_slices(1, 5, 2) == [(slice(None), slice(0, 2)),
                                               (slice(None), slice(2, 5))]
    assert parallel.output_slices(3, 5, 2) == [(slice(0, 1),), (slice(1, 3),)]
    assert parallel.worth_splitting(2, 2**18) == 2
    assert parallel.worth_splitting(2, 2**18 - 1) == 1
    assert parallel.worth_splitting(1, 2**20) == 1


def test_pool_runs_every_slice_and_reraises():
    seen = []
    parallel.run_slices(3, lambda i: seen.append(i), [(i,) for i in range(5)])
    assert sorted(seen) == [0, 1, 2, 3, 4]

    def fail(i):
        if i == 1:
            raise ValueError("slice 1")

    with pytest.raises(ValueError, match="slice 1"):
        parallel.run_slices(2, fail, [(0,), (1,)])
    # The pool still works after an error.
    seen.clear()
    parallel.run_slices(2, lambda i: seen.append(i), [(0,), (1,)])
    assert sorted(seen) == [0, 1]


def test_interpreters_share_the_pool_from_several_threads(rng):
    # Two threads invoking at once: the one that finds the pool busy runs its slices
    # itself; both get the right answer.
    model, feeds = quant_conv_model(rng, np.int8, (1, 128, 128, 8), (16, 1, 1, 8))
    _, (expected,) = _run(model, feeds, 1)
    results, errors = [], []

    def work():
        try:
            for _ in range(5):
                results.append(_run(model, feeds, 2)[1][0])
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 10
    for r in results:
        np.testing.assert_array_equal(r, expected)


def _thread_state(thread: threading.Thread) -> str:
    """The kernel's scheduling state of a thread: "S" sleeping (blocked), "R" running."""
    with open(f"/proc/self/task/{thread.native_id}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


@pytest.mark.skipif(not hasattr(time, "pthread_getcpuclockid") or
                    not os.path.exists("/proc/self/task"), reason="Linux thread clocks")
def test_idle_workers_block_instead_of_spinning(rng):
    """Between invokes edgelite's workers are blocked in the kernel and use no CPU (OpenBLAS's
    own threads busy-wait after a call: what collapses latency on a shared CPU)."""
    model, feeds = quant_conv_model(rng, np.int8, (1, 128, 128, 8), (16, 1, 1, 8))
    interp, _ = _run(model, feeds, 3)
    interp.invoke()
    workers = [w.thread for w in parallel.pool(3).workers]
    clocks = [time.pthread_getcpuclockid(t.ident) for t in workers]
    before = [time.clock_gettime(c) for c in clocks]
    time.sleep(0.2)
    used = [time.clock_gettime(c) - b for c, b in zip(clocks, before)]
    assert [_thread_state(t) for t in workers] == ["S", "S"]
    # A spinning worker would use ~0.2 s each; a blocked one nothing but its wake-ups.
    assert max(used) < 0.005, used


def test_the_caller_runs_slices_no_worker_has_started():
    """A worker that has no core yet (here: busy elsewhere) is not waited for: the caller
    takes the slices nobody started, so a loaded CPU never makes a split op wait."""
    pool = parallel.Pool(2)
    hold, held = threading.Event(), threading.Event()

    class Occupied:  # what a worker busy with another run looks like
        def work(self, by_worker):
            held.set()
            hold.wait(10)

    pool.workers[0].runs.put(Occupied())
    assert held.wait(10)
    ran_on = []
    pool.run(lambda i: ran_on.append((i, threading.get_ident())), [(0,), (1,), (2,)])
    assert sorted(ran_on) == [(i, threading.get_ident()) for i in range(3)]
    hold.set()
    # Once free, the worker takes its share again (its stale wake-up found nothing to do).
    seen = set()
    for _ in range(50):
        pool.run(lambda i: (seen.add(threading.get_ident()), time.sleep(0.002)), [(0,), (1,)])
    assert pool.workers[0].thread.ident in seen


def test_default_threads_and_validation(monkeypatch):
    model, _ = quant_conv_model(np.random.default_rng(0), np.int8, (1, 8, 8, 4), (8, 3, 3, 4))
    assert Interpreter(model_content=model).num_threads == parallel.default_threads()
    with pytest.raises(ValueError, match="num_threads should >= 1"):  # as LiteRT
        Interpreter(model_content=model, num_threads=-1)
    assert Interpreter(model_content=model, num_threads=3).num_threads == 3
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert parallel.default_threads() == 1  # never more threads than cores
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    assert parallel.default_threads() == parallel.DEFAULT_THREADS
    for bad in ({"num_threads": 0}, {"blas_threads": 0}):
        with pytest.raises(ValueError, match="should (be )?>= 1"):
            Interpreter(model_content=model, **bad)
