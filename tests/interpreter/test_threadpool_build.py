"""native/threadpool.c compiled on its own, in both of its builds: with pthreads (Linux, macOS)
and without (``EL_NO_THREADS``: what a Windows or atomics-less compiler gets). The extension in
the tree is the pthreads build; the other one is compiled only here, so a change that breaks it
fails a test instead of a user's install.

A small C driver runs el_pool_run over a range of thread and task counts and checks that every
task ran exactly once, that worker ids stay in [0, threads), and -- without pthreads -- that
the caller (worker 0) ran them all and no worker was started."""

import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import missing

ROOT = Path(__file__).resolve().parents[2]
NATIVE = ROOT / "interpreter" / "native"

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
