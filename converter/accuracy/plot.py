"""SQNR per layer in graph order, as a PNG (or any format matplotlib writes; needs
matplotlib: `pip install matplotlib` or `pip install edgelite[plot]`)."""

from __future__ import annotations

import io
import math
import os

from edgelite.errors import EdgeliteError
from edgelite.names import shown
from ..files import quoted_path, write_atomic
from .compare import CompareReport


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise EdgeliteError("no plot written: --plot needs matplotlib (pip install "
                            "'edgelite[plot]' or pip install matplotlib); the figures are "
                            "in the table") from None
    return plt


LABEL_CHARS = 40  # a tick label: the last two parts of a tensor name, or an op type


def _text(name: str, limit: int = LABEL_CHARS) -> str:
    """A name from the file as plain plot text: escaped and cut, "$" kept literal (it would
    start matplotlib's math mode)."""
    return shown(name, limit).replace("$", r"\$")


def _label(name: str) -> str:
    parts = name.split(";")[0].split("/")
    return _text("/".join(parts[-2:]))


def plot_sqnr(report: CompareReport, path: str | os.PathLike) -> None:
    """Bars: op SQNR (error each op adds); line: SQNR against the float model. Infinite
    values (exact tensors) are drawn at the top of the axis and marked "inf"."""
    plt = _pyplot()
    tensors = sorted(report.tensors, key=lambda t: t.order)
    if not tensors:
        raise EdgeliteError("nothing to plot: no tensor of the quantized model matched the "
                            "reference")
    cumulative = [t.sqnr_db for t in tensors]
    local = [t.op_sqnr_db if t.op_sqnr_db is not None else math.nan for t in tensors]
    finite = [v for v in cumulative + local if math.isfinite(v)]
    top = (max(finite) if finite else 0.0) + 10.0
    bottom = min(0.0, min(finite) - 5.0) if finite else 0.0

    def clip(values):
        return [top if v == math.inf else bottom if v == -math.inf else v for v in values]

    x = list(range(len(tensors)))
    fig, ax = plt.subplots(figsize=(min(40.0, max(6.0, 0.45 * len(tensors) + 2.0)), 4.8))
    ax.bar(x, clip(local), color="#9ecae1", label="op SQNR (error the op adds)")
    ax.plot(x, clip(cumulative), "o-", color="#d62728", label="SQNR vs float model")
    for i, (c, lo) in enumerate(zip(cumulative, local)):
        if c == math.inf or lo == math.inf:
            ax.annotate("inf", (i, top), ha="center", va="bottom", fontsize=7)
    ax.set_ylim(bottom, top + 3.0)
    ax.set_xticks(x)
    ax.set_xticklabels([f"{_label(t.name)}\n{_text(t.op or 'input')}" for t in tensors],
                       rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("SQNR (dB)")
    ax.set_title(f"{_text(os.path.basename(report.quantized), 80)} vs "
                 f"{_text(os.path.basename(report.reference), 80)}"
                 f" ({report.samples} samples; output SQNR "
                 f"{report.output_sqnr_db:.1f} dB)", fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    buf = io.BytesIO()
    fmt = os.path.splitext(os.fspath(path))[1].lstrip(".").lower() or "png"
    try:
        fig.savefig(buf, format=fmt, dpi=120)
    except ValueError as e:
        raise EdgeliteError(f"cannot write plot {quoted_path(path)}: {shown(e)}") \
            from None
    finally:
        plt.close(fig)
    write_atomic(path, buf.getvalue())
