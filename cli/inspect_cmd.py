"""`edgelite inspect`: a readable summary of a .tflite file.

Every name comes from the file, so every name is escaped and cut (``shown`` / ``fit``):
tensor, subgraph and op names, custom codes, the description, signature keys and their
input / output names, metadata names, string options. Any well-formed file is described;
a model edgelite cannot run (custom or unknown ops, hybrid or sparse weights, ...) gets no
arena line but a support section listing every problem, each with its kind and what to
do (interpreter/support.py).
"""

from __future__ import annotations

from ..converter.files import shown_path
from ..interpreter import Interpreter, load_model
from ..interpreter.loader.model import read_model_file
from edgelite.errors import EdgeliteError
from edgelite.names import quoted, shown
from ..interpreter.support import report
from ..schema.ops import ACTIVATION_NAME, PADDING_NAME
from .text import fit

_ENUM_NAMES = {"padding": PADDING_NAME, "fused_activation_function": ACTIVATION_NAME}
OP_WIDTH = 22
NAME_WIDTH = 40
LIST_ITEMS = 8  # signature inputs / outputs, metadata entries shown before "and N more"


def _options(options) -> str:
    parts = []
    for k, v in options.items():
        if v is None:
            continue
        value = _ENUM_NAMES[k].get(v, v) if k in _ENUM_NAMES else v
        parts.append(f"{k}={shown(value) if isinstance(value, (str, bytes)) else value}")
    return ", ".join(parts)


def _shape(shape, signature) -> str:
    dims = [str(d) if s >= 0 else f"{d}(?)" for d, s in zip(shape, signature)]
    return "[" + ", ".join(dims) + "]"


def _quant(q) -> str:
    if q is None or q.scale.size == 0:
        return ""
    if q.scale.size == 1:
        return f"scale={q.scale[0]:.6g} zp={int(q.zero_point[0]) if q.zero_point.size else 0}"
    return (f"per-channel(axis {q.quantized_dimension}, {q.scale.size} scales "
            f"{q.scale.min():.3g}..{q.scale.max():.3g})")


def _op_name(op) -> str:
    return f"CUSTOM {shown(op.custom_code)}" if op.name == "CUSTOM" else op.name


def _listed(items: list[str]) -> str:
    more = len(items) - LIST_ITEMS
    return ", ".join(items[:LIST_ITEMS]) + (f" and {more} more" if more > 0 else "")


def _signatures(model) -> list[str]:
    lines = []
    for s in model.signature_defs:
        ins = _listed([f"{shown(n)} -> {i}" for n, i in s.inputs.items()])
        outs = _listed([f"{shown(n)} -> {i}" for n, i in s.outputs.items()])
        lines.append(f"  {shown(s.key)} (subgraph {s.subgraph_index}): inputs {ins}; "
                     f"outputs {outs}")
    return ["signatures:", *lines] if lines else []


def _arena(path: str) -> tuple[str | None, str | None]:
    """("arena: N bytes ...", None) when the model allocates, else (None, the error)."""
    try:
        interp = Interpreter(model_path=path)
        interp.allocate_tensors()
    except EdgeliteError as e:
        return None, (str(e).splitlines()[0].rstrip(":") if str(e) else type(e).__name__)
    return (f"arena: {interp.arena_size} bytes (activations, planned with reuse, 64-byte "
            "aligned)"), None


def _support(model, error: str | None) -> list[str]:
    """The support section: every problem of every subgraph (support.report), or the
    allocation error no op explains."""
    if error is None:
        return []
    problems = report(model)
    if not problems:
        return [f"\nsupport: allocate_tensors() fails: {shown(error)}"]
    kinds = ", ".join(sorted({p.kind for p in problems}))
    return [f"\nsupport: edgelite cannot run this model ({len(problems)} problem(s): "
            f"{kinds}):", *(f"  {p.line()}" for p in problems)]


def _subgraph_lines(sg) -> tuple[list[str], int]:
    """The ops and tensors of one subgraph, and its constant bytes."""
    lines = []
    counts: dict[str, int] = {}
    for op in sg.operators:
        name = fit(_op_name(op), NAME_WIDTH)
        counts[name] = counts.get(name, 0) + 1
    lines.append(f"\nops ({len(sg.operators)}): " +
                 ", ".join(f"{k} x{v}" for k, v in sorted(counts.items())))
    for op in sg.operators:
        ins = ", ".join(str(i) for i in op.inputs)
        outs = ", ".join(str(o) for o in op.outputs)
        lines.append(f"  {op.index:>3} {fit(_op_name(op), OP_WIDTH):<{OP_WIDTH}} in [{ins}] "
                     f"-> out [{outs}]  {_options(op.options)}")
    lines.append(f"\ntensors ({len(sg.tensors)}):")
    lines.append(f"  {'idx':>3} {'name':<{NAME_WIDTH}} {'dtype':<8} {'shape':<18} "
                 f"{'bytes':>9}  quantization")
    const_bytes = 0
    for t in sg.tensors:
        nbytes = t.data.nbytes if t.data is not None else 0
        const_bytes += nbytes
        role = " (input)" if t.index in sg.inputs else " (output)" if t.index in sg.outputs \
            else ""
        name = fit(t.name, NAME_WIDTH - len(role)) + role
        lines.append(f"  {t.index:>3} {name:<{NAME_WIDTH}} {t.type_name.lower():<8} "
                     f"{_shape(t.shape, t.shape_signature):<18} "
                     f"{nbytes if t.data is not None else '-':>9}  {_quant(t.quantization)}")
    return lines, const_bytes


def describe(path: str) -> str:
    """Subgraph 0's ops and tensors; with several subgraphs, each other one after it,
    headed by its inputs and outputs (tensor indices of that subgraph)."""
    model = load_model(read_model_file(path))
    lines = [f"{shown_path(path)}: schema v{model.version}, {len(model.subgraphs)} subgraph(s), "
             f"description {quoted(model.description)}"]
    if len(model.subgraphs) > 1:
        lines.append("subgraphs: " + _listed([f"{g.index} {shown(g.name)} "
                                              f"({len(g.operators)} ops)"
                                              for g in model.subgraphs]))
    lines += _signatures(model)
    if model.metadata:
        lines.append("metadata: " + _listed([f"{shown(k)} ({len(v)} bytes)"
                                             for k, v in model.metadata.items()]))
    const_bytes = 0
    for sg in model.subgraphs:
        if sg.index:
            lines.append(f"\nsubgraph {sg.index} {quoted(sg.name)}: inputs "
                         f"[{_listed([str(t) for t in sg.inputs])}], outputs "
                         f"[{_listed([str(t) for t in sg.outputs])}]")
        body, nbytes = _subgraph_lines(sg)
        lines += body
        const_bytes += nbytes
    arena, error = _arena(path)
    lines.append(f"\nconstant data: {const_bytes} bytes" + (f"; {arena}" if arena else ""))
    lines += _support(model, error)
    return "\n".join(lines)


def micro_arena_line(path: str) -> str:
    """`inspect --target micro`: the tensor arena TFLite Micro needs (micro_arena.py)."""
    from ..interpreter.micro.arena import micro_arena_report
    model = load_model(read_model_file(path))
    r32, host = (micro_arena_report(model, t) for t in ("32bit", "host"))
    return "\n".join([f"micro arena: {r32.total} bytes (32-bit target), {host.total} bytes "
                      "(64-bit host)", *r32.lines()[1:], *host.lines()])


FOOTPRINT_HEADER = (f"{'idx':>4} {'op':<{OP_WIDTH}} {'output':<{NAME_WIDTH}} {'MACs':>12} "
                    f"{'weights (B)':>12} {'activations (B)':>16}")


def footprint_text(path: str, as_json: bool = False) -> str:
    """`inspect --footprint`: per-op MACs, weight bytes (flash), live activation bytes in
    TFLM's plan (RAM), the peak and the totals (micro/footprint.py); ``as_json``: the same
    data as JSON (names as in the file)."""
    import json

    from ..interpreter.micro.footprint import footprint
    fp = footprint(read_model_file(path))
    if as_json:
        return json.dumps(fp.as_dict(), indent=1)
    lines = [FOOTPRINT_HEADER]
    for x in fp.layers:
        mark = "  <- peak" if x.index == fp.peak_op else ""
        lines.append(f"{x.index:>4} {fit(x.op, OP_WIDTH):<{OP_WIDTH}} "
                     f"{fit(x.output, NAME_WIDTH):<{NAME_WIDTH}} {x.macs:>12} "
                     f"{x.weight_bytes:>12} {x.activation_bytes:>16}{mark}")
    lines += [f"total: {fp.macs} MACs, {fp.weight_bytes} weight bytes (flash), peak "
              f"activations {fp.peak_activation_bytes} bytes at op {fp.peak_op} (RAM)",
              f"micro arena: {fp.arena_32bit} bytes (32-bit target), {fp.arena_host} bytes "
              "(64-bit host)"]
    return "\n".join(lines)
