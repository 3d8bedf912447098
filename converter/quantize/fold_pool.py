"""auto's folds scored at once, in this process and in worker processes (auto.py).

auto quantizes and scores every candidate once per fold (auto.Fold), and the folds do not
depend on each other: with n processes, fold f is scored in process f % n (0: this one),
so on 2 cores two folds are scored at a time and a candidate takes about half the wall
time. (Threads would not do: the folds' Python -- rewrites, exports, AdaRound's step loop
-- holds the GIL; two fold threads gained 12 % of the wall time for 30 % more CPU.)

A worker is a fresh Python (`sys.executable -c`, not multiprocessing: nothing of the
caller's ``__main__`` runs again) that unpickles its folds from its stdin -- the scoring
graph, the scoring options (auto.scoring_options: no callbacks or data sources), each
fold's samples -- and keeps
them, with their float reference outputs and calibrations, for the whole search; it says
when it is ready (about a second: until then this process scores its folds, so a small
model's search never waits for it), then for each candidate it gets the candidate and
answers its folds' sums on its stdout. The sums
come back per fold and are added up in fold order (auto._Scorer.score): the same numbers,
and so the same choice and file, as in one process.

Anything a worker cannot do -- start (no usable `sys.executable`), unpickle, score (an
error, or killed) -- moves its folds to this process, which scores them as it would have
alone: the same results, the same errors, the same messages. Its processes are ended by
close() (auto uses the pool as a context manager) or, if this process dies, by the end of
their stdin.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
import time

from ..export import export_tflite
from ..ir import Graph

# the worker's bootstrap: the parent's import path first (edgelite may come from it)
_BOOT = ("import pickle, sys; sys.path[:0] = pickle.load(sys.stdin.buffer); "
         "from edgelite.converter.quantize.fold_pool import serve; serve()")


def _pickled(value) -> bytes | None:
    """`value` pickled, or None if something in it does not pickle."""
    try:
        return pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
    except Exception:
        return None


def processes(workers: int | None, folds: int) -> int:
    """How many processes score the folds: `workers` (--workers) or one per core this
    process may run on, at most one per fold."""
    if workers is None:
        try:
            workers = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):      # not Linux
            workers = os.cpu_count() or 1
    return max(1, min(workers, folds))


# A worker costs a second or two of CPU to start (a fresh Python importing edgelite), and a
# busy second process slows this one (10-25 % on the 2-vCPU machine of bench/RESULTS.md).
# So the first candidate (min/max) is scored here, and workers start only if its folds took
# this long: a whole search is about 25 such candidates, and one below it ends before a
# worker would pay (aud_dscnn, 10 ops: 0.16 s, its search 5.4 s alone, 6-8 s with a worker
# from the start; MobileNetV2-digits: 1.4 s).
START_AFTER = 0.5   # seconds


class FoldPool:
    """The folds' sums for each candidate, in fold order (module doc). `start_after`
    (default START_AFTER): workers start at once when 0, else after a first candidate that
    took this long."""

    def __init__(self, graph: Graph, options, parts: list[tuple[list, list]],
                 scored: list[int], outputs: list[int], workers: int | None,
                 start_after: float | None = None) -> None:
        start_after = START_AFTER if start_after is None else start_after
        self.graph, self.options, self.parts = graph, options, parts
        self.scored, self.outputs = scored, outputs
        self._model: bytes | None = None
        self.local: dict = {}       # fold index -> auto.Fold scored here (made when needed)
        self.workers: list[_Worker] = []
        self.wanted = processes(workers, len(parts))
        # seconds the first candidate must take before the workers start; None: decided
        self.start_after = start_after if start_after > 0 and self.wanted > 1 else None
        if start_after <= 0 and self.wanted > 1:
            self._start()

    def _start(self) -> None:
        """The workers: fold f in process f % n (0: this one); what they all get is
        pickled once."""
        n, parts = self.wanted, self.parts
        shared = _pickled((self.graph, self.options, self.scored, self.outputs))
        if shared is None:           # something of the graph does not pickle: no workers
            return
        for w in range(1, n):
            mine = [f for f in range(len(parts)) if f % n == w]
            worker = _Worker.start(shared, [(f, *parts[f]) for f in mine])
            if worker is not None:
                self.workers.append(worker)

    @property
    def processes(self) -> int:
        """Processes that may score folds now (this one included)."""
        return 1 + len(self.workers)

    def fold(self, f: int):
        """Fold `f` scored here (made on first use)."""
        if f not in self.local:
            from .auto import Fold
            if self._model is None:
                self._model = export_tflite(self.graph)
            fit, held = self.parts[f]
            self.local[f] = Fold(self.graph, self._model, self.options, fit, held,
                                 self.scored, self.outputs)
        return self.local[f]

    def sums(self, cand) -> list[tuple[float, float, float, float]]:
        """Each fold's auto.Fold.sums for `cand`, in fold order. A worker not ready yet
        (starting: about a second) leaves this candidate's folds to this process, so a
        small model's search does not wait for it."""
        for w in self.workers:
            if not w.ready.is_set() and not w.setup.is_alive():
                w.stop()                         # it never got ready: it did not start
        asked = [w for w in self.workers if w.ready.is_set() and w.send(cand)]
        away = {f for w in asked for f in w.folds}
        began = time.perf_counter()
        found = {f: self.fold(f).sums(cand) for f in range(len(self.parts)) if f not in away}
        if self.start_after is not None:
            if time.perf_counter() - began >= self.start_after:
                self._start()
            self.start_after = None
        for worker in asked:
            answer = worker.receive()
            if answer is None:                   # it failed: its folds are scored here
                for f in worker.folds:
                    found[f] = self.fold(f).sums(cand)
            else:
                found.update(zip(worker.folds, answer))
        self.workers = [w for w in self.workers if w.alive]
        return [found[f] for f in range(len(self.parts))]

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()
        self.workers = []


class _Worker:
    """One worker process and the folds it scores; `ready` is set once it has its folds
    (a thread writes them and waits for its word, while this process goes on)."""

    def __init__(self, proc: subprocess.Popen, folds: list[int]) -> None:
        self.proc, self.folds, self.alive = proc, folds, True
        self.ready = threading.Event()
        self.setup: threading.Thread | None = None

    @classmethod
    def start(cls, shared: bytes, parts: list) -> "_Worker | None":
        """A worker scoring `parts` ((fold, fit, held) each) with what all workers get
        (`shared`, FoldPool._start), or None where none starts."""
        setup = _pickled(parts)
        if setup is None or not sys.executable or getattr(sys, "frozen", False):
            return None              # (no Python to start)
        try:
            proc = subprocess.Popen([sys.executable, "-c", _BOOT], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except (OSError, ValueError):
            return None
        worker = cls(proc, [f for f, _, _ in parts])
        worker.setup = threading.Thread(target=worker._handshake, daemon=True,
                                        args=(_pickled(list(sys.path)) + shared + setup,))
        worker.setup.start()
        return worker

    def _handshake(self, setup: bytes) -> None:
        """(The setup thread.) Its folds written; `ready` set when it says so."""
        if self._write(setup) and self._read() == "ready":
            self.ready.set()

    def _write(self, data: bytes) -> bool:
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
            return True
        except (OSError, ValueError):
            return False

    def _read(self):
        try:
            return pickle.load(self.proc.stdout)
        except Exception:            # it died (EOF) or wrote something else
            return None

    def send(self, cand) -> bool:
        if self.alive and self._write(pickle.dumps(cand, pickle.HIGHEST_PROTOCOL)):
            return True
        self.stop()
        return False

    def receive(self) -> list | None:
        """Its folds' sums for the candidate sent, or None (it failed; now stopped)."""
        answer = self._read()
        if not isinstance(answer, tuple) or not answer[0]:
            self.stop()
            return None
        return answer[1]

    def stop(self) -> None:
        if not self.alive:
            return
        self.alive = False
        if self.setup is not None and self.setup.is_alive():
            self.proc.kill()         # the setup thread may be blocked on it: unblock it
            self.setup.join()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def serve() -> None:
    """A worker's loop (module doc): setup, then one answer per candidate until its stdin
    ends. Every failure is answered (False, None) -- the parent then scores the folds
    itself and shows any error -- and an interrupt ends the worker quietly."""
    inp = sys.stdin.buffer
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)                    # anything printed goes to stderr, not the answers
    try:
        graph, options, scored, outputs = pickle.load(inp)   # (after _BOOT's sys.path)
        parts = pickle.load(inp)
        pool = FoldPool(graph, options, [(fit, held) for _, fit, held in parts],
                        scored, outputs, workers=1)
        for f in range(len(parts)):
            pool.fold(f)            # its reference outputs, before it says it is ready
        pickle.dump("ready", out)
        out.flush()
        while True:
            try:
                cand = pickle.load(inp)
            except EOFError:
                return
            try:
                answer = (True, pool.sums(cand))
            except Exception:
                answer = (False, None)
            pickle.dump(answer, out, pickle.HIGHEST_PROTOCOL)
            out.flush()
    except (KeyboardInterrupt, BrokenPipeError, EOFError):
        return
