"""kernels/common/native_split.py and the C pool under it (native/threadpool.c): which ops
split, and that a split op stays a native step whose tasks run on the pool's C workers --
the same bytes as numpy, after a fork, from two Python threads at once, with no worker
burning CPU while idle."""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, native
from edgelite.interpreter.kernels.common import native_split

from tests.conftest import missing
from ...test_native import needs_native


def test_tasks_threshold_and_count():
    """One task below SPLIT_MACS, on one thread, or with one unit of work; else up to
    TASKS_PER_THREAD tasks per thread worth running (a thread per SPLIT_MACS / 2), never
    more than the units."""
    big = 100 * native_split.SPLIT_MACS
    assert native_split.tasks(1, big, 100) == 1
    assert native_split.tasks(2, native_split.SPLIT_MACS - 1, 100) == 1
    assert native_split.tasks(2, big, 1) == 1
    assert native_split.tasks(2, big, 100) == 2 * native_split.TASKS_PER_THREAD
    assert native_split.tasks(4, native_split.SPLIT_MACS, 100) == 2 * native_split.TASKS_PER_THREAD
    assert native_split.tasks(64, big, 5) == 5
    values = native_split.SPLIT_ELEMENTS  # element-wise ops: their own threshold
    assert native_split.tasks(2, values - 1, values // 64, values) == 1
    assert native_split.tasks(2, values, values // 64, values) == 2 * native_split.TASKS_PER_THREAD


def _models():
    """(model, feeds) of the split kernels, each well over SPLIT_MACS: int8 CONV_2D 3x3,
    uint8 CONV_2D 1x1 with few rows (split by channel panels), int8 FULLY_CONNECTED, int8
    and float32 DEPTHWISE_CONV_2D."""
    from ..test_conv import conv_model, quant_conv_model
    from ..test_fully_connected import quant_fc_model

    rng = np.random.default_rng(26)
    x = rng.standard_normal((1, 64, 64, 64)).astype(np.float32)
    filt = rng.standard_normal((1, 3, 3, 64)).astype(np.float32)
    return [quant_conv_model(rng, np.int8, (1, 40, 40, 32), (32, 3, 3, 32)),
            quant_conv_model(rng, np.uint8, (1, 7, 7, 320), (1280, 1, 1, 320)),
            quant_fc_model(rng, np.int8, (4, 2048), 1000, out_q=(3.0, 0)),
            quant_conv_model(rng, np.int8, (1, 56, 56, 144), (1, 3, 3, 144),
                             op="DEPTHWISE_CONV_2D"),
            (conv_model(x.shape, filt, rng.standard_normal(64).astype(np.float32),
                        op="DEPTHWISE_CONV_2D", act="RELU6", depth_multiplier=1), [x])]


def _interpreter(model: bytes, feeds, **kw) -> Interpreter:
    it = Interpreter(model_content=model, **kw)
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), feeds):
        it.set_tensor(d["index"], x)
    return it


def _output(it: Interpreter) -> np.ndarray:
    return it.get_tensor(it.get_output_details()[0]["index"]).copy()


def _expected(model: bytes, feeds) -> np.ndarray:
    it = _interpreter(model, feeds, native=False)
    it.invoke()
    return _output(it)


@needs_native
def test_split_ops_are_native_steps_run_on_the_c_pool():
    """With 2 threads each op is one native step (no Python eval) and its tasks start the
    C pool's worker; outputs equal numpy's bit for bit (floats: the same sums)."""
    for model, feeds in _models():
        it = _interpreter(model, feeds, num_threads=2)
        assert it._steps and all(s[0] is native.module.run_native_step
                                 and isinstance(s[1], native.module.NativeStep)
                                 for s in it._steps)
        native.module.pool_shutdown()
        assert native.module.pool_workers() == 0
        it.invoke()
        assert native.module.pool_workers() == 1
        np.testing.assert_array_equal(_output(it), _expected(model, feeds))


@needs_native
def test_two_interpreters_share_the_pool_from_two_threads():
    """Two interpreters (2 threads each, one shared C pool) invoked from two Python threads
    at once, many times: the one that finds the pool busy runs its tasks itself, nobody
    waits for the other, every output is right."""
    (m1, f1), (m2, f2) = _models()[0], _models()[3]
    want = [_expected(m1, f1), _expected(m2, f2)]
    its = [_interpreter(m1, f1, num_threads=2), _interpreter(m2, f2, num_threads=2)]
    bad, start = [], threading.Barrier(2)

    def work(i):
        start.wait()
        for _ in range(25):
            its[i].invoke()
            if not np.array_equal(_output(its[i]), want[i]):
                bad.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "an invoke hung"
    assert not bad


@needs_native
@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_fork_after_a_split_invoke():
    """A child forked after a 2-thread invoke has none of the parent's workers (the pool
    forgets them: pthread_atfork) and invokes fine on new ones, the same bytes."""
    model, feeds = _models()[0]
    want = _expected(model, feeds)
    it = _interpreter(model, feeds, num_threads=2)
    it.invoke()
    assert native.module.pool_workers() >= 1
    pid = os.fork()
    if pid == 0:  # the child: exit status 0 only if everything held
        try:
            ok = native.module.pool_workers() == 0
            it.invoke()
            ok = ok and native.module.pool_workers() == 1 and np.array_equal(_output(it), want)
        finally:
            os._exit(0 if ok else 1)
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung")
        time.sleep(0.01)
    assert os.waitstatus_to_exitcode(status) == 0
    it.invoke()  # and the parent's pool still works
    np.testing.assert_array_equal(_output(it), want)


def _pool_cpu_ticks() -> dict[str, int]:
    """utime + stime (clock ticks) of this process's C pool workers, by thread id."""
    ticks = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            if (task / "comm").read_text().strip() != "edgelite-pool":
                continue
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended
            continue
        ticks[task.name] = int(fields[11]) + int(fields[12])
    return ticks


@needs_native
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="Linux /proc only")
def test_idle_workers_use_no_cpu():
    """After invokes, the workers sleep: their CPU time does not grow over 0.2 s of
    idleness (no spinning, no busy-wait). They did work before (the check can fail)."""
    model, feeds = _models()[0]
    it = _interpreter(model, feeds, num_threads=2)
    native.module.pool_shutdown()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # until the worker has run tasks for a tick or more
        for _ in range(10):
            it.invoke()
        before = _pool_cpu_ticks()
        if sum(before.values()) > 2:
            break
    assert len(before) == 1 and sum(before.values()) > 2, before
    time.sleep(0.2)
    assert _pool_cpu_ticks() == before


# --------------------------------------------------------------------------- both C builds
# native/threadpool.c compiled on its own, in both of its builds: with pthreads (Linux,
# macOS) and without (``EL_NO_THREADS``: what a Windows or atomics-less compiler gets). The
# extension in the tree is the pthreads build; the other one is compiled only here, so a
# change that breaks it fails a test instead of a user's install. A small C driver runs
# el_pool_run over a range of thread and task counts and checks that every task ran exactly
# once, that worker ids stay in [0, threads), and -- without pthreads -- that the caller
# (worker 0) ran them all and no worker was started.

NATIVE = Path(__file__).resolve().parents[4] / "interpreter" / "native"

DRIVER = r"""
#define _DEFAULT_SOURCE /* usleep */
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include "threadpool.h"

#define MAX_TASKS 1000
static int runs[MAX_TASKS];
static int bad_worker, off_caller;
static int threads_now, slow;

static void task(void *ctx, int64_t t, int worker)
{
    (void)ctx;
    if (slow) usleep(500); /* long enough for a sleeping worker to wake and take tasks */
    __atomic_fetch_add(&runs[t], 1, __ATOMIC_RELAXED);
    if (worker < 0 || worker >= threads_now) __atomic_store_n(&bad_worker, 1, __ATOMIC_RELAXED);
    if (worker != 0) __atomic_store_n(&off_caller, 1, __ATOMIC_RELAXED);
}

int main(void)
{
    const int threads[] = {1, 2, 3, 8};
    const int64_t counts[] = {0, 1, 2, 7, 64, MAX_TASKS};
    printf("init %d\n", el_pool_init());
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 6; j++)
            for (int rep = 0; rep < 5; rep++) {
                for (int t = 0; t < MAX_TASKS; t++) runs[t] = 0;
                threads_now = threads[i];
                slow = threads[i] == 2 && counts[j] == 64 && rep == 0;
                el_pool_run(threads[i], counts[j], task, NULL);
                for (int64_t t = 0; t < MAX_TASKS; t++)
                    if (runs[t] != (t < counts[j])) {
                        printf("task %lld ran %d times (threads %d, tasks %lld)\n",
                               (long long)t, runs[t], threads[i], (long long)counts[j]);
                        return 1;
                    }
            }
    printf("bad_worker %d\noff_caller %d\nworkers %d\n", bad_worker, off_caller,
           el_pool_workers());
    el_pool_shutdown();
    printf("after_shutdown %d\n", el_pool_workers());
    return 0;
}
"""


def _compiler() -> list[str]:
    cc = (sysconfig.get_config_var("CC") or "cc").split()
    if shutil.which(cc[0]) is None:
        missing(f"a C compiler ({cc[0]}) to build native/threadpool.c")
    return cc


def _build_and_run(tmp_path: Path, defines: list[str]) -> dict[str, int]:
    driver = tmp_path / "driver.c"
    driver.write_text(DRIVER)
    exe = tmp_path / "pool"
    cmd = [*_compiler(), "-std=c11", "-O1", "-Wall", "-Werror", *defines, f"-I{NATIVE}",
           str(driver), str(NATIVE / "threadpool.c"), "-o", str(exe), "-lpthread"]
    built = subprocess.run(cmd, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return {k: int(v) for k, v in (line.split() for line in ran.stdout.splitlines())}


def test_pthreads_build_runs_every_task_once(tmp_path):
    got = _build_and_run(tmp_path, [])
    assert got["init"] == 0
    assert got["bad_worker"] == 0
    assert got["off_caller"] == 1          # workers took tasks (64 x 0.5 ms on 2 threads)
    assert got["workers"] == 0 + 1 + 2 + 7  # one pool per thread count: threads - 1 workers each
    assert got["after_shutdown"] == 0


@pytest.mark.parametrize("define", ["-DEL_NO_THREADS"])
def test_build_without_pthreads_runs_every_task_on_the_caller(tmp_path, define):
    got = _build_and_run(tmp_path, [define])
    assert got == {"init": -1, "bad_worker": 0, "off_caller": 0, "workers": 0,
                   "after_shutdown": 0}
