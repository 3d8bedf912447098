"""`edgelite eval`: accuracy of one or several models side by side, with CI thresholds."""

from __future__ import annotations

import sys

import click

from edgelite.names import quoted
from .progress import limited, progress_bar, sample_count
from .scale_options import timed_run


def fraction(ctx, param, value: str | None) -> float | None:
    """click callback: '0.9' or '90%' -> 0.9."""
    if value is None:
        return None
    text = value.strip()
    try:
        x = float(text[:-1]) / 100.0 if text.endswith("%") else float(text)
    except ValueError:
        raise click.BadParameter(f"{quoted(value)}: expected a fraction (0.9) or a "
                                 "percentage (90%)") from None
    if not 0.0 <= x <= 1.0:
        raise click.BadParameter(f"{quoted(value)} is not in [0, 1]: write 0.9 or 90%")
    return x


def run_eval(models, data: str, labels: str, top_k: int, samples: int | None,
             min_accuracy: float | None, max_drop: float | None, as_json: bool,
             output: str | None, inputs, outputs, input_shapes, workers: int | None = None,
             ray: str | None = None) -> None:
    from ..converter.accuracy import evaluate
    from ..converter.accuracy.report import dumps
    from ..converter.files import check_not_input, check_writable, shown_path, write_atomic

    if output:
        check_writable(output)  # before the (long) run
        check_not_input(output, [*models, data, labels])
    per_model = limited(sample_count(data, shards=True), samples)
    with progress_bar("evaluating", per_model) as update, timed_run("eval", workers, ray):
        report = evaluate(list(models), data, labels, top_k, samples, min_accuracy, max_drop,
                          inputs=inputs, outputs=outputs, input_shapes=input_shapes,
                          progress=update, workers=workers, ray=ray)
    text = dumps(report.to_dict()) if as_json else report.table()
    if output:
        write_atomic(output, (text + "\n").encode())
        click.echo(f"wrote {shown_path(output)}: {len(report.models)} model(s) on "
                   f"{report.samples} sample(s)", err=as_json)
    else:
        click.echo(text)
    for check in report.checks:
        if check.ok and not as_json:
            click.echo(f"ok: {check.message}")
    failures = report.failures
    for check in failures:
        click.echo(f"FAIL: {check.message}", err=True)
    if failures:
        sys.exit(1)
