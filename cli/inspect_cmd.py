"""`edgelite inspect`: a readable summary of a .tflite file."""

from __future__ import annotations

from ..interpreter import Interpreter
from ..schema.ops import ACTIVATION_NAME, PADDING_NAME

_ENUM_NAMES = {"padding": PADDING_NAME, "fused_activation_function": ACTIVATION_NAME}


def _options(options) -> str:
    shown = []
    for k, v in options.items():
        if v is None:
            continue
        shown.append(f"{k}={_ENUM_NAMES[k].get(v, v) if k in _ENUM_NAMES else v}")
    return ", ".join(shown)


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


def describe(path: str) -> str:
    interp = Interpreter(model_path=path)
    model = interp.model
    sg = model.subgraphs[0]
    interp.allocate_tensors()
    lines = [f"{path}: schema v{model.version}, {len(model.subgraphs)} subgraph(s), "
             f"description {model.description!r}"]
    if model.signature_defs:
        lines.append("signatures: " + ", ".join(s.key for s in model.signature_defs))
    counts: dict[str, int] = {}
    for op in sg.operators:
        counts[op.name] = counts.get(op.name, 0) + 1
    lines.append(f"\nops ({len(sg.operators)}): " +
                 ", ".join(f"{k} x{v}" for k, v in sorted(counts.items())))
    for op in sg.operators:
        ins = ", ".join(str(i) for i in op.inputs)
        outs = ", ".join(str(o) for o in op.outputs)
        opts = _options(op.options)
        lines.append(f"  {op.index:>3} {op.name:<22} in [{ins}] -> out [{outs}]  {opts}")
    lines.append(f"\ntensors ({len(sg.tensors)}):")
    lines.append(f"  {'idx':>3} {'name':<40} {'dtype':<8} {'shape':<18} {'bytes':>9}  quantization")
    const_bytes = 0
    for t in sg.tensors:
        nbytes = t.data.nbytes if t.data is not None else 0
        const_bytes += nbytes
        role = " (input)" if t.index in sg.inputs else " (output)" if t.index in sg.outputs \
            else ""
        lines.append(f"  {t.index:>3} {(t.name + role)[:40]:<40} {t.type_name.lower():<8} "
                     f"{_shape(t.shape, t.shape_signature):<18} "
                     f"{nbytes if t.data is not None else '-':>9}  {_quant(t.quantization)}")
    lines.append(f"\nconstant data: {const_bytes} bytes; arena: {interp.arena_size} bytes "
                 f"(activations, planned with reuse, 64-byte aligned)")
    return "\n".join(lines)
