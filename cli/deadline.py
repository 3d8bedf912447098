"""``--timeout SECONDS`` for the commands that run models (run, compare, eval, bench).

A model whose WHILE loop never ends (one changed byte in a start value gives 2^31
iterations) would otherwise hold the command until Ctrl-C. The deadline is a real-time
timer (SIGALRM) whose handler raises ``CommandTimeout`` in the main thread, between two
Python steps -- as Ctrl-C raises KeyboardInterrupt -- so every ``finally`` runs (a temp
file being written is removed) and errors.handle prints one line and exits 124, the status
coreutils' ``timeout`` uses. Where the OS has no SIGALRM (Windows) a timer thread
interrupts the main thread instead.
"""

from __future__ import annotations

import _thread
import contextlib
import functools
import signal
import threading

import click


class CommandTimeout(BaseException):
    """The --timeout deadline passed. A BaseException, like KeyboardInterrupt, so that no
    ``except Exception`` on the way turns it into another error."""

    def __init__(self, seconds: float) -> None:
        super().__init__(seconds)
        self.seconds = seconds


@contextlib.contextmanager
def deadline(seconds: float | None):
    """Raise CommandTimeout in the main thread once ``seconds`` have passed (None: never)."""
    if seconds is None:
        yield
        return
    if hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
        def expire(signum, frame):
            raise CommandTimeout(seconds)
        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        return
    fired = threading.Event()

    def interrupt():
        fired.set()
        _thread.interrupt_main()
    timer = threading.Timer(seconds, interrupt)
    timer.start()
    try:
        yield
    except KeyboardInterrupt:
        if fired.is_set():
            raise CommandTimeout(seconds) from None
        raise
    finally:
        timer.cancel()


def timeout_option(fn):
    """Decorator for a click command: a ``--timeout SECONDS`` option around its body."""
    @click.option("--timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
                  help="Stop with one error line (exit status 124) when the command runs "
                  "longer than SECONDS, e.g. on a model whose loop never ends.")
    @functools.wraps(fn)
    def wrapper(*args, timeout=None, **kwargs):
        with deadline(timeout):
            return fn(*args, **kwargs)
    return wrapper
