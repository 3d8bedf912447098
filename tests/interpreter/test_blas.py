"""numpy's BLAS thread count inside invoke() (blas.py): limited inside, restored outside,
shared correctly by interpreters invoking at once, and optional (threadpoolctl missing)."""

import sys
import threading

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, blas
from edgelite.interpreter import interpreter as interpreter_module

from .kernels.test_conv import conv_model

pytestmark = pytest.mark.skipif(not blas.available(), reason=blas.status())

OUTSIDE = 3  # a count no default gives, set before each test; BLAS allows more than cores


@pytest.fixture(autouse=True)
def outside_count():
    """numpy's BLAS at OUTSIDE threads around each test (the caller's own setting), put
    back afterwards. Set without holding threadpoolctl's control (see blas._set)."""
    libs = blas._find()
    before = [lib.get_num_threads() for lib in libs]
    for lib in libs:
        blas._set(lib, OUTSIDE)
    yield
    for lib, n in zip(libs, before):
        blas._set(lib, n)


def _model(rng, x_shape=(1, 16, 16, 8)):
    """A float CONV_2D (im2col + one BLAS matmul) and a float input for it."""
    w = rng.uniform(-1, 1, (16, 3, 3, x_shape[-1])).astype(np.float32)
    model = conv_model(x_shape, w, np.zeros(16, np.float32))
    return model, rng.uniform(-1, 1, x_shape).astype(np.float32)


def _hook_first_step(interp: Interpreter, hook) -> None:
    """Call ``hook()`` inside invoke(), just before the first op runs."""
    (fn, record, ins, outs), *rest = interp._steps

    def hooked(r, i, o):
        hook()
        fn(r, i, o)
    interp._steps = ((hooked, record, ins, outs), *rest)


def _ready(model: bytes, x: np.ndarray, **kw) -> Interpreter:
    interp = Interpreter(model_content=model, **kw)
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    return interp


def test_invoke_limits_blas_inside_and_restores_it(rng):
    model, x = _model(rng)
    seen = []
    for blas_threads, inside in ((1, 1), (2, 2), (None, OUTSIDE)):
        interp = _ready(model, x, blas_threads=blas_threads)
        _hook_first_step(interp, lambda: seen.append(blas.get_threads()))
        interp.invoke()
        assert seen.pop() == inside
        assert blas.get_threads() == OUTSIDE
        assert interp.blas_limit == blas_threads
    with blas.threads(2):  # nested limits: the smallest applies, each level restores
        with blas.threads(1):
            assert blas.get_threads() == 1
        assert blas.get_threads() == 2
    assert blas.get_threads() == OUTSIDE


def test_allocate_profile_and_batch_workers_run_under_the_limit(rng, monkeypatch):
    model, _ = _model(rng, (1, 64, 64, 8))  # 384 KB of arena per sample: split by sample
    seen = {}
    real_allocate = interpreter_module.allocate

    def allocate(*args, **kw):  # allocate_tensors() folds constants with kernels
        seen.setdefault("allocate", set()).add(blas.get_threads())
        return real_allocate(*args, **kw)
    monkeypatch.setattr(interpreter_module, "allocate", allocate)
    interp = Interpreter(model_content=model, num_threads=2)
    interp.resize_tensor_input(0, [4, 64, 64, 8])
    interp.allocate_tensors()
    assert interp.batch_split == (2, 2)
    run_range = interp._split.run_range

    def worker(*args):
        seen.setdefault("workers", []).append(blas.get_threads())
        run_range(*args)
    interp._split.run_range = worker
    interp.invoke()
    _hook_first_step(interp, lambda: seen.setdefault("profile", set()).add(
        blas.get_threads()))
    interp.profile(runs=1, warmup=0)
    assert seen["allocate"] == {1} and seen["profile"] == {1}
    assert seen["workers"] == [1, 1]  # two tasks, on whichever threads took them
    assert blas.get_threads() == OUTSIDE


def test_two_interpreters_invoking_at_once_share_the_limit(rng):
    """A enters, B enters, A leaves while B still runs: BLAS stays limited for B, and only
    B's leaving restores the caller's count (threadpoolctl alone would restore A's
    saved count while B runs, then B's saved "1" for good)."""
    model, x = _model(rng)
    a, b = _ready(model, x), _ready(model, x)
    b_inside, a_left, seen = threading.Event(), threading.Event(), {}

    def in_a():
        assert b_inside.wait(10)
        seen["a"] = blas.get_threads()

    def in_b():
        b_inside.set()
        assert a_left.wait(10)
        seen["b after a left"] = blas.get_threads()
    _hook_first_step(a, in_a)
    _hook_first_step(b, in_b)
    thread = threading.Thread(target=b.invoke)
    thread.start()
    a.invoke()
    seen["between"] = blas.get_threads()
    a_left.set()
    thread.join(10)
    assert seen == {"a": 1, "between": 1, "b after a left": 1}
    assert blas.get_threads() == OUTSIDE


def test_no_library_call_when_the_count_already_matches(rng, monkeypatch):
    model, x = _model(rng)
    interp = _ready(model, x)
    calls = []
    real_set = blas._set
    monkeypatch.setattr(blas, "_set", lambda lib, n: (calls.append(n), real_set(lib, n)))
    interp.invoke()
    assert calls == [1] * len(blas._find()) + [OUTSIDE] * len(blas._find())  # and restore
    calls.clear()
    with blas.threads(1):
        calls.clear()
        interp.invoke()  # already 1: nothing to set or restore
    assert calls == [OUTSIDE] * len(blas._find())  # only the outer block's restore


def test_without_threadpoolctl_blas_is_left_alone(rng, monkeypatch):
    model, x = _model(rng)
    expected = _ready(model, x)
    expected.invoke()
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # import fails
    blas.reset()
    try:
        assert not blas.available() and blas.get_threads() is None
        assert "threadpoolctl is not installed" in blas.status()
        interp = _ready(model, x)
        assert interp.blas_limit is None
        interp.invoke()
        out = interp.get_output_details()[0]["index"]
        np.testing.assert_array_equal(interp.get_tensor(out), expected.get_tensor(out))
    finally:
        monkeypatch.undo()
        blas.reset()
    assert blas.available()


class FakeLib:
    """A BLAS library controller as threadpoolctl gives them: a process-wide count, or one
    per thread (OpenBLAS built on OpenMP)."""

    def __init__(self, threading_layer: str, count: int) -> None:
        self.threading_layer = threading_layer
        self.counts = threading.local() if threading_layer == "openmp" else None
        self.default = count
        self.calls = 0

    def get_num_threads(self) -> int:
        return getattr(self.counts, "n", self.default) if self.counts else self.default

    def set_num_threads(self, n: int) -> None:
        self.calls += 1
        if self.counts:
            self.counts.n = n
        else:
            self.default = n


def test_process_wide_and_per_thread_libraries(monkeypatch):
    shared, per_thread = FakeLib("pthreads", 4), FakeLib("openmp", 4)
    monkeypatch.setattr(blas, "_libs", [shared, per_thread])
    monkeypatch.setattr(blas, "_shared", [shared])
    monkeypatch.setattr(blas, "_per_thread", [per_thread])
    seen = {}

    def other_thread():
        with blas.threads(2):
            seen["other"] = (shared.get_num_threads(), per_thread.get_num_threads())

    with blas.threads(1):
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join(10)
        seen["here"] = (shared.get_num_threads(), per_thread.get_num_threads())
    # The shared count is the smallest limit entered (1, this thread's); the per-thread
    # count is each thread's own limit.
    assert seen == {"other": (1, 2), "here": (1, 1)}
    assert shared.get_num_threads() == 4 and per_thread.get_num_threads() == 4
    assert shared.calls == 2  # set 1 on entering, 4 on leaving: the nested block set none
