"""Text tables, JSON-ready dicts and CSV for compare and eval reports.

JSON is one line (a script reads the last line of the output; no timings in it, so one
process, --workers and --ray print the same bytes). Non-finite numbers are written as the
strings "inf", "-inf" and "nan" (SQNR is +inf when a tensor matches its reference exactly),
so the output is strict JSON.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import asdict
from typing import TYPE_CHECKING

from edgelite.names import shown
from ..files import shown_path

if TYPE_CHECKING:
    from .compare import CompareReport
    from .classification import EvalReport

NAME_WIDTH = 48
OP_WIDTH = 28  # the op column: a CUSTOM op shows its custom code, which comes from the file
CSV_NAME_CHARS = 100_000  # CSV keeps whole names (escaped); only absurd ones are cut
CSV_FIELDS = ["rank", "order", "name", "quant_name", "op", "op_index", "dtype", "scale",
              "op_sqnr_db", "sqnr_db", "cosine", "max_abs_error", "max_error_lsb",
              "mean_error", "advice"]
ADVICE_LINES = 5  # the table's "what to do" lines: the worst tensors' advice


def json_number(x):
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def _clean(obj):
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return json_number(obj)


def dumps(obj) -> str:
    """`obj` as strict JSON on one line."""
    return json.dumps(_clean(obj), allow_nan=False)


def db(x: float) -> str:
    return "inf" if x == math.inf else "-inf" if x == -math.inf else f"{x:.2f}"


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}%"


def short(name: str, width: int = NAME_WIDTH) -> str:
    """A tensor name for tables: escaped (names come from files), TFLite's fused "a;b;c"
    names shown as "a;...", long names cut from the left."""
    if ";" in name:
        name = name.split(";")[0] + ";..."
    name = shown(name, 4 * width)
    return name if len(name) <= width else "..." + name[-(width - 3):]


def _rows(header: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max([len(header[i])] + [len(r[i]) for r in rows]) for i in range(len(header))]
    out = []
    for r in [header, *rows]:
        cells = [c.rjust(w) if i in right else c.ljust(w)
                 for i, (c, w) in enumerate(zip(r, widths))]
        out.append("  ".join(cells).rstrip())
    return out


# -- compare -------------------------------------------------------------------------------

def compare_to_dict(report: "CompareReport", top: int | None = None, by: str = "op") -> dict:
    worst = report.worst(top, by)
    return {
        "reference": report.reference,
        "quantized": report.quantized,
        "samples": report.samples,
        "output_sqnr_db": report.output_sqnr_db,
        "top1_agreement": report.top1_agreement,
        "outputs": [asdict(o) for o in report.outputs],
        "sorted_by": by,
        "tensors": [dict(rank=k + 1, **asdict(t)) for k, t in enumerate(worst)],
        "unmatched": list(report.unmatched),
    }


def compare_json(report: "CompareReport", top: int | None = None, by: str = "op") -> str:
    return dumps(compare_to_dict(report, top, by))


def compare_csv(report: "CompareReport", top: int | None = None, by: str = "op") -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    for k, t in enumerate(report.worst(top, by)):
        row = {f: getattr(t, f) for f in CSV_FIELDS[1:]}
        row["rank"] = k + 1
        row["advice"] = None if t.advice is None else t.advice.text
        for f in ("name", "quant_name"):  # escaped (not cut): CSV goes to terminals too
            row[f] = row[f] if row[f] is None else shown(row[f], CSV_NAME_CHARS)
        writer.writerow({f: "" if v is None else json_number(v) for f, v in row.items()})
    return buf.getvalue()


def compare_table(report: "CompareReport", top: int | None = None, by: str = "op") -> str:
    lines = [f"reference: {shown_path(report.reference)}",
             f"quantized: {shown_path(report.quantized)}",
             f"samples:   {report.samples}", ""]
    agree = report.top1_agreement
    lines.append(f"output SQNR {db(report.output_sqnr_db)} dB" +
                 (f", top-1 agreement {pct(agree)}" if agree is not None else ""))
    if len(report.outputs) > 1:
        for o in report.outputs:
            lines.append(f"  {shown(o.name)}: SQNR {db(o.sqnr_db)} dB, cosine {o.cosine:.5f}" +
                         (f", top-1 agreement {pct(o.top1_agreement)}"
                          if o.top1_agreement is not None else ""))
    worst = report.worst(top, by)
    count = f"worst {len(worst)} of {len(report.tensors)}" if len(worst) < len(
        report.tensors) else f"{len(worst)}"
    order = {"op": "worst first by op SQNR (the error each op adds by itself)",
             "sqnr": "worst first by SQNR against the float model",
             "graph": "in graph order"}[by]
    lines += ["", f"tensors, {order} ({count}):"]
    header = ["#", "tensor", "op", "dtype", "op SQNR", "SQNR dB", "cosine", "max err (LSB)",
              "mean err"]
    rows = [[str(k + 1), short(t.name),
             f"{shown(t.op, OP_WIDTH)} ({t.op_index})" if t.op_index >= 0 else "input",
             t.dtype, "-" if t.op_sqnr_db is None else db(t.op_sqnr_db),
             db(t.sqnr_db), f"{t.cosine:.5f}",
             "-" if t.max_error_lsb is None else f"{t.max_error_lsb:.1f}",
             f"{t.mean_error:+.3g}"] for k, t in enumerate(worst)]
    lines += ["  " + line for line in _rows(header, rows, {0, 4, 5, 6, 7, 8})]
    lines += _advice_lines(worst)
    if report.unmatched:  # one name a line: names are long, a joined line would not be
        lines += ["", f"{len(report.unmatched)} reference tensor(s) with no counterpart in "
                  "the quantized model:"]
        lines += [f"  {short(n)}" for n in report.unmatched[:8]]
        if len(report.unmatched) > 8:
            lines.append(f"  and {len(report.unmatched) - 8} more")
    return "\n".join(lines)


def _advice_lines(worst: list) -> list[str]:
    """One "what to do" line for each of the first ADVICE_LINES tensors that have advice
    (names inside the advice text are quoted by advice.py)."""
    picked = [(k, t) for k, t in enumerate(worst) if t.advice is not None][:ADVICE_LINES]
    if not picked:
        return []
    return ["", "what to do:"] + [f"  {k + 1}. {t.advice.text}" for k, t in picked]


# -- eval ----------------------------------------------------------------------------------

def eval_to_dict(report: "EvalReport") -> dict:
    return {
        "samples": report.samples,
        "top_k": report.top_k,
        "models": [{
            "model": m.label, "precision": m.precision, "accuracy": m.accuracy,
            f"top{report.top_k}_accuracy": m.top_k_accuracy,
            "per_class": {str(c): {"n": n, "accuracy": a}
                          for c, n, a in zip(report.classes, report.class_counts,
                                             m.per_class)},
        } for m in report.models],
        "checks": [asdict(c) for c in report.checks],
        "passed": report.passed,
    }


def eval_table(report: "EvalReport") -> str:
    k = report.top_k
    header = ["model", "precision", "accuracy"] + ([f"top-{k}"] if k > 1 else [])
    if len(report.models) > 1:
        header.append("vs first")
    rows = []
    first = report.models[0].accuracy
    for i, m in enumerate(report.models):
        row = [shown_path(m.label), m.precision, pct(m.accuracy)]
        if k > 1:
            row.append(pct(m.top_k_accuracy))
        if len(report.models) > 1:
            row.append("" if i == 0 else f"{100 * (m.accuracy - first):+.2f}")
        rows.append(row)
    lines = [f"{report.samples} samples, {len(report.classes)} classes", ""]
    lines += _rows(header, rows, set(range(2, len(header))))
    lines += ["", "per-class accuracy:"]
    names = [f"[{i + 1}]" for i in range(len(report.models))] if len(report.models) > 1 \
        else ["accuracy"]
    rows = [[str(c), str(n)] + [pct(m.per_class[j]) for m in report.models]
            for j, (c, n) in enumerate(zip(report.classes, report.class_counts))]
    lines += ["  " + line for line in _rows(["class", "n", *names], rows,
                                             set(range(len(names) + 2)))]
    if len(report.models) > 1:
        lines += ["  " + ", ".join(f"[{i + 1}] {shown_path(m.label)}"
                                   for i, m in enumerate(report.models))]
    return "\n".join(lines)
