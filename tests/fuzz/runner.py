"""Run fuzz cases in worker processes with a time and an address-space limit per case.

Cases go to workers in batches (one interpreter start-up per batch). A worker announces each
case before running it, so when one dies from a signal or stops answering, the case at fault
is known: it is recorded ("crash" / "timeout"), the worker is killed and a fresh one takes the
rest of the batch. Pass condition for every case: "ok" (accepted) or "error" (an
EdgeliteError); "fail" (any other exception, MemoryError included), "crash" and "timeout" are
findings.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .mutate import KINDS, Case, build

WORKER = Path(__file__).with_name("worker.py")
ROOT = WORKER.parents[2]
GOOD = ("ok", "error")
STARTUP_SECONDS = 60.0  # a worker's imports, before its first case (generous: CI is slow)


@dataclass(frozen=True)
class Limits:
    timeout: float = 30.0           # seconds per case
    mem_bytes: int = 3 << 30        # RLIMIT_AS of a worker (3 GiB)
    jobs: int = 2                   # worker processes at a time
    batch: int = 40                 # cases per worker start-up


@dataclass
class Outcome:
    case: Case
    status: str                     # ok / error / fail / crash / timeout
    detail: dict = field(default_factory=dict)

    @property
    def good(self) -> bool:
        return self.status in GOOD

    @property
    def signature(self) -> str:
        """What identifies a distinct finding: the exception type and where it was raised."""
        if self.status == "fail":
            return f"{self.detail['exc']} at {self.detail['where']}"
        return self.status + (f" ({self.detail.get('signal')})" if "signal" in self.detail
                              else "")

    def reproducer(self) -> str:
        return (f"python bench/fuzz.py --kind {self.case.kind} --seed {self.case.seed} "
                "--cases 1 --show")


def make_cases(seed: int, count: int, kinds=KINDS) -> list[Case]:
    """`count` cases, alternating kinds, seeds seed, seed+1, ... (deterministic)."""
    return [Case(kinds[i % len(kinds)], seed + i // len(kinds)) for i in range(count)]


def run_cases(cases: list[Case], limits: Limits = Limits()) -> list[Outcome]:
    batches = [cases[i:i + limits.batch] for i in range(0, len(cases), limits.batch)]
    with ThreadPoolExecutor(max_workers=limits.jobs) as pool:
        results = pool.map(lambda b: _run_batch(b, limits), batches)
        return [o for batch in results for o in batch]


def _run_batch(cases: list[Case], limits: Limits) -> list[Outcome]:
    outcomes: list[Outcome] = []
    while len(outcomes) < len(cases):
        outcomes += _run_worker(cases[len(outcomes):], limits)
    return outcomes


def _run_worker(cases: list[Case], limits: Limits) -> list[Outcome]:
    """Run cases in one worker until they are done or the worker fails on one of them."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=str(ROOT))
    stdin = "".join(json.dumps({"kind": c.kind, "seed": c.seed}) + "\n" for c in cases)
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, str(WORKER), str(limits.mem_bytes)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                cwd=ROOT, env=env, start_new_session=True)
        proc.stdin.write(stdin.encode())
        proc.stdin.close()
        try:
            return _collect(proc, cases, limits, err)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            proc.stdout.close()


def _collect(proc, cases: list[Case], limits: Limits, err) -> list[Outcome]:
    outcomes: list[Outcome] = []
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    pending = b""
    started = time.monotonic()
    allowed = STARTUP_SECONDS + limits.timeout  # until the first "start" line
    while len(outcomes) < len(cases):
        case = cases[len(outcomes)]
        if time.monotonic() - started > allowed:
            outcomes.append(Outcome(case, "timeout", {"seconds": limits.timeout}))
            return outcomes
        if not sel.select(timeout=0.5):
            continue
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:  # the worker died
            code = proc.wait()
            err.seek(0)
            tail = err.read()[-400:].decode("utf-8", "replace")
            detail = {"signal": signal.Signals(-code).name} if code < 0 else {"exit": code}
            outcomes.append(Outcome(case, "crash", {**detail, "stderr": tail}))
            return outcomes
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            word, label, *rest = line.decode().split(" ", 2)
            if word == "start":
                started, allowed = time.monotonic(), limits.timeout
            elif word == "done":
                assert label == cases[len(outcomes)].label, (label, cases[len(outcomes)])
                result = json.loads(rest[0])
                outcomes.append(Outcome(cases[len(outcomes)], result.pop("status"), result))
    return outcomes


def summary(outcomes: list[Outcome], seconds: float | None = None) -> str:
    """Counts per status, each distinct finding with its cases and a reproducer, then the
    errors a catch-all made out of other exceptions (fine for users; a check is missing)."""
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    head = f"{len(outcomes)} cases" + (f" in {seconds:.1f} s" if seconds is not None else "")
    lines = [head + ": " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))]
    findings = _grouped([o for o in outcomes if not o.good], lambda o: o.signature)
    lines.append(f"{len(findings)} distinct finding(s)")
    for sig, cases in findings:
        lines.append(f"- {sig}: {len(cases)} case(s): {_labels(cases, 12)}")
        lines += ["    " + line for line in _explain(cases[0])]
    netted = _grouped([o for o in outcomes if "net" in o.detail], lambda o: o.detail["net"])
    if netted:
        lines.append(f"not findings: {sum(len(c) for _, c in netted)} error(s) came from a "
                     "catch-all turning another exception into an EdgeliteError:")
        lines += [f"   {len(cases)} x {site}: {_labels(cases, 6)}" for site, cases in netted]
    return "\n".join(lines)


def _grouped(outcomes: list[Outcome], key) -> list[tuple[str, list[Outcome]]]:
    """Outcomes grouped by key, biggest group first."""
    groups: dict[str, list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault(key(o), []).append(o)
    return sorted(groups.items(), key=lambda kv: -len(kv[1]))


def _labels(outcomes: list[Outcome], most: int) -> str:
    more = " ..." if len(outcomes) > most else ""
    return ", ".join(o.case.label for o in outcomes[:most]) + more


def _explain(o: Outcome) -> list[str]:
    """The exception (or stderr), the mutations and a reproducer of one finding."""
    lines = []
    if o.status == "fail":
        lines.append(f"{o.detail['exc']}: {o.detail['msg'][:200]!r}")
    elif o.detail.get("stderr"):
        lines.append(f"stderr: {o.detail['stderr'][-200:]!r}")
    if o.case.kind in KINDS:
        try:
            notes = "; ".join(build(o.case)[1])
        except Exception as e:  # noqa: BLE001 -- a harness bug is a finding too
            notes = f"(building the mutant failed: {type(e).__name__}: {e})"
        lines.append(f"mutations: {notes}"[:400])
    lines.append(f"reproduce: {o.reproducer()}")
    return lines
