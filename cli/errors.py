"""One line for every failure of the ``edgelite`` command, never a raw traceback.

Exit status:

* 0   success;
* 1   bad input (an EdgeliteError: a malformed file, an unknown name, ...), a file the OS
      refuses (OSError), out of memory, or a check that failed (``check``, ``eval``);
* 2   a bad command line (click: unknown option, missing argument, bad value);
* 3   an internal error: a bug in edgelite. The line names the exception; run again with
      EDGELITE_DEBUG=1 for the traceback, and please report it;
* 124 the --timeout of run / compare / eval / bench passed (deadline.py), as coreutils'
      ``timeout`` reports it;
* 130 interrupted (Ctrl-C), as shells report SIGINT.

Every message goes through ``text.terminal_text``: control characters are escaped, whatever
their origin. With EDGELITE_DEBUG=1 the traceback is printed before the line, for any error.
"""

from __future__ import annotations

import os
import sys
import traceback

import click

from edgelite.errors import EdgeliteError
from edgelite.names import quoted
from .deadline import CommandTimeout
from .text import terminal_text

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_TIMEOUT = 124
EXIT_INTERRUPTED = 130
DEBUG_VARIABLE = "EDGELITE_DEBUG"
_CLICK_OWN = (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort)


def fail(message: str, status: int, keep_lines: bool = False):
    """Print ``error: <message>`` (escaped) on stderr and exit with ``status``."""
    if os.environ.get(DEBUG_VARIABLE) and sys.exc_info()[0] is not None:
        traceback.print_exc()
    try:
        click.echo(f"error: {terminal_text(message, keep_lines)}", err=True)
    except OSError:
        pass  # stderr is gone: the status still tells
    sys.exit(status)


def handle(e: BaseException, words: list[str] | None = None):
    """Turn an exception from a command into one line and an exit status (never returns).
    ``words``: the command line after ``edgelite`` (what was being done, for the
    out-of-memory line)."""
    if isinstance(e, EdgeliteError):
        fail(str(e), EXIT_ERROR, keep_lines=True)
    if isinstance(e, KeyboardInterrupt):
        fail("interrupted", EXIT_INTERRUPTED)
    if isinstance(e, CommandTimeout):
        fail(f"timed out after {e.seconds:g} s (--timeout): stopped; a loop of the model "
             "may never end -- or allow more time", EXIT_TIMEOUT)
    if isinstance(e, BrokenPipeError):
        _quiet_stdout()  # `edgelite inspect m.tflite | head`: the reader left, not an error
        sys.exit(0)
    if isinstance(e, MemoryError):
        detail = f" ({e})" if str(e) else ""
        fail(f"out of memory{_doing(words or [])}{detail}; use a smaller model, batch or data "
             "file", EXIT_ERROR)
    if isinstance(e, OSError):
        where = f"{quoted(e.filename)}: " if e.filename is not None else ""
        fail(f"{where}{e.strerror or type(e).__name__}", EXIT_ERROR)
    fail(f"internal error: {type(e).__name__}: {e} (a bug in edgelite: run again with "
         f"{DEBUG_VARIABLE}=1 to see the traceback, and please report it)", EXIT_INTERNAL)


def _doing(words: list[str]) -> str:
    """" while running 'edgelite convert' on 'g.pb', 'calib.npy'": the command and the
    files it named (at most 3)."""
    if not words:
        return ""
    files = []
    for w in words[1:]:
        path = w.partition("=")[2] if "=" in w and not os.path.exists(w) else w
        if not path.startswith("-") and os.path.exists(path):
            files.append(quoted(path))
    named = f" on {', '.join(files[:3])}" if files else ""
    return f" while running {quoted('edgelite ' + words[0])}{named}"


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


class EdgeliteGroup(click.Group):
    """The command group: every subcommand's failure becomes one line (see module doc)."""

    def invoke(self, ctx: click.Context):
        words = [*getattr(ctx, "_protected_args", ()), *ctx.args]  # before click consumes them
        try:
            return super().invoke(ctx)
        except _CLICK_OWN:
            raise  # usage errors: formatted by main() below
        except SystemExit:
            raise
        except BaseException as e:  # noqa: BLE001 -- every other failure gets its one line
            handle(e, words)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True,
             **extra):
        """Like click's main, with click's own errors as one ``error:`` line too. With
        ``standalone_mode=False`` (embedding) click's behaviour is unchanged."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, False, **extra)
        except click.exceptions.UsageError as e:
            hint = f"; see '{e.ctx.command_path} --help'" if e.ctx is not None else ""
            fail(e.format_message().rstrip(".") + hint, e.exit_code)
        except click.ClickException as e:
            fail(e.format_message(), e.exit_code)
        except click.exceptions.Abort as e:  # click turns a Ctrl-C while parsing into Abort
            if isinstance(e.__cause__, KeyboardInterrupt):
                fail("interrupted", EXIT_INTERRUPTED)
            fail("aborted", EXIT_ERROR)
        except (KeyboardInterrupt, EOFError):
            fail("interrupted", EXIT_INTERRUPTED)
        sys.exit(rv if isinstance(rv, int) else 0)
