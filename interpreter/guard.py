"""One Interpreter, one thread at a time: the guard that refuses a concurrent call.

An Interpreter's tensors live in one arena that invoke() overwrites op by op, so two
threads invoking the same object at once corrupt each other's activations (measured
before this guard: up to 142 wrong outputs in 400 calls, most of them no input's answer,
and numpy errors from tensors resized under a running kernel). LiteRT refuses such a
call loudly (its Python wrapper's "reference to internal data" RuntimeError); edgelite
refuses it with an InterpreterStateError that says what to do instead.

* Calls that write the interpreter's state -- invoke(), allocate_tensors(),
  resize_tensor_input(), set_tensor(), profile() and a SignatureRunner call -- take a
  non-blocking re-entrant lock. A second thread gets the error at once: never a wait,
  never a wrong result. The same thread may nest them (a SignatureRunner call holds the
  guard across its resize / allocate / set / invoke / get, so that sequence is atomic).
* Reads (get_tensor(), get_dequantized_tensor(), tensor()'s function) take no lock:
  any number of threads may read at once. A read that overlaps another thread's write
  call -- one that could see a half-computed tensor -- is refused with the same error,
  checked before and after the copy (a sequence counter, like a seqlock), so a read
  either returns a tensor no write call touched while it was copied, or raises.

Handing an interpreter from thread to thread between calls is fine (set_tensor() in one
thread, invoke() in an executor, get_tensor() back in the first): the guard refuses
overlap, not hand-offs. It cannot know which thread's inputs a call meant, though, so
several threads sharing one interpreter must still serialize whole set/invoke/get
sequences with their own lock -- or use one Interpreter per thread, which is free of
contention and safe. Separate interpreters never share state (the BLAS thread limit
they share is process-wide but only changes speed; blas.py).

Cost: one lock acquire and release and a few attribute writes per write call (well
under a microsecond), a few attribute reads per read.
"""

from __future__ import annotations

import functools
import threading
from typing import Callable

from edgelite.errors import InterpreterStateError


class CallGuard:
    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._depth = 0  # nesting of write calls in the thread holding the lock
        self._writer: int | None = None  # that thread's ident
        self._what = ""  # the outermost write call it is running
        self._generation = 0  # write calls begun so far

    def _refusal(self, what: str, during: str | None = None) -> InterpreterStateError:
        if during is None:
            during = f"this Interpreter is already running {self._what or 'a call'} in " \
                     "another thread"
        return InterpreterStateError(
            f"{what} refused: {during}; use one Interpreter per thread (or serialize the "
            "calls with your own lock)"
        )

    def enter(self, what: str) -> None:
        """Start a write call named ``what`` ("invoke()", ...); raises at once when
        another thread is inside one. Pair with ``leave()`` in a finally block."""
        if not self._lock.acquire(blocking=False):
            raise self._refusal(what)
        if self._depth == 0:
            self._generation += 1
            self._writer = threading.get_ident()
            self._what = what
        self._depth += 1

    def leave(self) -> None:
        self._depth -= 1
        if self._depth == 0:
            self._writer = None
            self._what = ""
        self._lock.release()

    def read_begins(self, what: str) -> int:
        """Check that no other thread is inside a write call; returns the token to pass
        to ``read_ends`` after copying."""
        writer = self._writer
        if writer is not None and writer != threading.get_ident():
            raise self._refusal(what)
        return self._generation

    def read_ends(self, what: str, token: int) -> None:
        """Raise when a write call of another thread began or ran since ``read_begins``."""
        writer = self._writer
        if self._generation != token or (writer is not None and
                                          writer != threading.get_ident()):
            raise self._refusal(what, "another thread called this Interpreter while it "
                                      "copied the tensor")


def guarded(what: str) -> Callable:
    """Decorate a method of an object with a ``_guard`` (CallGuard) as a write call named
    ``what``."""
    def wrap(method: Callable) -> Callable:
        @functools.wraps(method)
        def call(self, *args, **kwargs):
            guard = self._guard
            guard.enter(what)
            try:
                return method(self, *args, **kwargs)
            finally:
                guard.leave()
        return call
    return wrap
