"""`edgelite compare`: where a quantized model loses precision against its float reference."""

from __future__ import annotations

import click

from ..converter.files import check_not_input, check_writable, shown_path, write_atomic
from edgelite.names import quoted, shown
from .progress import limited, progress_bar, sample_count
from .scale_options import timed_run


def run_compare(reference: str, quantized: str, data: str, samples: int | None, fmt: str,
                output: str | None, plot: str | None, top: int | None, sort: str,
                inputs, outputs, input_shapes, workers: int | None = None,
                ray: str | None = None) -> None:
    from ..converter.accuracy import compare
    from ..converter.accuracy.report import compare_csv, compare_json

    for path, what in ((output, "output"), (plot, "plot")):
        if path:
            check_writable(path, what)  # before the (long) run
            check_not_input(path, [reference, quantized, data], what)
    total = limited(sample_count(data, shards=True), samples)
    with progress_bar("comparing", total) as update, timed_run("compare", workers, ray):
        report = compare(reference, quantized, data, samples, inputs, outputs, input_shapes,
                         update, workers, ray)
    if fmt == "json":
        text = compare_json(report, top, sort)
    elif fmt == "csv":
        text = compare_csv(report, top, sort)
    else:
        text = report.table(top, sort)
    if output:
        write_atomic(output, (text.rstrip("\n") + "\n").encode())
        culprit = report.culprit()
        click.echo(f"wrote {shown_path(output)}: {len(report.tensors)} tensors on "
                   f"{report.samples} sample(s); output SQNR {report.output_sqnr_db:.2f} dB" +
                   (f"; worst op: {shown(culprit.op)} ({culprit.op_index}) writing "
                    f"{quoted(culprit.name)}" if culprit else ""), err=fmt != "table")
        if culprit is not None and culprit.advice is not None:
            click.echo(f"what to do: {culprit.advice.text}", err=fmt != "table")
    else:
        click.echo(text.rstrip("\n"))
    if plot:  # after the table: without matplotlib the run still shows its figures
        from ..converter.accuracy.plot import plot_sqnr
        plot_sqnr(report, plot)
        click.echo(f"wrote {shown_path(plot)}", err=True)
