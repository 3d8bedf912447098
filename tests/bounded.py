"""Run a snippet of Python in a child process with bounded memory (RLIMIT_AS) and time:
a hostile input that would allocate gigabytes fails the child with MemoryError, one that
would hang hits the timeout -- either fails the test instead of the host."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from tests.conftest import ROOT

MEMORY = 1536 << 20   # 1.5 GiB of address space: numpy + protobuf + a small model fit
TIMEOUT = 60.0


def _limit(mem_bytes: int):
    def apply():
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))
    return apply


def run_bounded(code: str, *args: str, mem_bytes: int = MEMORY,
                timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    """Run ``code`` (dedented) as ``python -c`` with ``args`` in sys.argv[1:], from the
    repository root; subprocess.TimeoutExpired propagates (the test fails)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env,
                          preexec_fn=_limit(mem_bytes))


def run_cli_bounded(*args: str, mem_bytes: int = MEMORY,
                    timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    """The edgelite CLI in a bounded child process."""
    return run_bounded("from edgelite.cli.main import main\nmain(prog_name='edgelite')",
                       *args, mem_bytes=mem_bytes, timeout=timeout)
