"""--workers / --ray: run a command's shards in a process pool or on a Ray cluster, with
progress and timings on stderr (never in the report, so the report's bytes do not depend on
how it was computed)."""

from __future__ import annotations

import contextlib
import time

import click


def scale_options(fn):
    """--workers N and --ray [ADDRESS|local]."""
    for opt in reversed([
        click.option("--workers", type=click.IntRange(min=1), metavar="N",
                     help="Run the data's shards in N processes (each with its own "
                     "interpreter); the result is the same bytes as with one (calibration: "
                     "every --calib-method but moving-average); --calib-method auto scores "
                     "its 4 folds in up to N processes (default: one per core)."),
        click.option("--ray", is_flag=False, flag_value="local", default=None,
                     metavar="[ADDRESS|local]",
                     help="Run the shards as Ray tasks: 'local' (the default value) starts "
                     "a cluster here; ADDRESS (host:port) joins one. Needs edgelite[ray]."),
    ]):
        fn = opt(fn)
    return fn


@contextlib.contextmanager
def timed_run(what: str, workers: int | None, ray: str | None):
    """Ends with one timing line on stderr when --workers or --ray was given (progress is
    cli/progress.py's bar)."""
    start = time.perf_counter()
    yield
    if workers or ray:
        where = f"Ray ({ray})" if ray else f"{workers} worker process(es)"
        click.echo(f"{what}: {time.perf_counter() - start:.2f} s on {where}", err=True)
