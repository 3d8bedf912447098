"""`--json` of convert, check, run and inspect: the facts the text output shows, as one JSON
document on stdout for scripts. Names from files are kept as they are (JSON escapes them);
numbers are plain JSON numbers (numpy values converted)."""

from __future__ import annotations

import json

import numpy as np


def dumps(doc) -> str:
    return json.dumps(doc, indent=2, default=_plain, allow_nan=True)


def _plain(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return str(value)


# -- inspect ----------------------------------------------------------------------------------
def model_structure(model) -> dict:
    """A loaded model (interpreter/loader/model_objects.Model): subgraphs with their ops and
    tensors (dtype, shape, quantization), signatures, description."""
    return {
        "schema_version": model.version,
        "description": model.description,
        "signatures": [{"key": s.key, "subgraph": s.subgraph_index, "inputs": dict(s.inputs),
                        "outputs": dict(s.outputs)} for s in model.signature_defs],
        "subgraphs": [_subgraph(sg) for sg in model.subgraphs],
    }


def _subgraph(sg) -> dict:
    return {
        "index": sg.index, "name": sg.name, "inputs": list(sg.inputs),
        "outputs": list(sg.outputs),
        "ops": [{"index": op.index, "op": op.name, "custom_code": op.custom_code,
                 "version": op.version, "inputs": list(op.inputs), "outputs": list(op.outputs),
                 "options": dict(op.options)} for op in sg.operators],
        "tensors": [{"index": t.index, "name": t.name,
                     "dtype": t.dtype.name if t.dtype is not None else None,
                     "shape": list(t.shape), "shape_signature": list(t.shape_signature),
                     "constant": t.data is not None, "variable": t.is_variable,
                     "quantization": _quantization(t.quantization)} for t in sg.tensors],
    }


def _quantization(q) -> dict | None:
    if q is None or q.scale.size == 0:
        return None
    return {"scale": q.scale.tolist(), "zero_point": q.zero_point.tolist(),
            "axis": q.quantized_dimension if q.scale.size > 1 else None}


# -- convert ----------------------------------------------------------------------------------
def conversion(result, output: str, float_reasons: dict[str, str]) -> dict:
    """A ConversionResult: the ops per signature, the quantization, the ops left float."""
    parts = result.signatures or (result,)
    q = result.quantization
    calib = q.calibration if q else None
    return {
        "output": output, "bytes": len(result.model),
        "signatures": [{"key": p.graph.signature.key if p.graph.signature else None,
                        "ops": len(p.graph.ops), "op_counts": p.graph.op_counts()}
                       for p in parts],
        "quantization": None if q is None else {
            "mode": q.mode.value,
            "calibration_samples": calib.used if calib else 0,
            "skipped_samples": list(calib.skipped) if calib else [],
            "calib_method": str(q.calib_method),
        },
        "left_float": [op for p in parts for op in left_float(p.graph, float_reasons)]
        if q is not None and q.mode.qtype is not None else [],
    }


def left_float(graph, reasons: dict[str, str]) -> list[dict]:
    """Each op of a full-integer model that computes in float, and why (`reasons`: output
    name or op type -> why, from the flags; otherwise: no integer kernel was used)."""
    from ..converter.ir import all_graphs
    out = []
    for g in all_graphs(graph):
        for op in g.ops:
            if op.type in ("QUANTIZE", "DEQUANTIZE"):
                continue
            live = [t for t in (*op.inputs, *op.outputs) if t is not None and not t.is_const]
            if any(t.dtype == np.float32 for t in live):
                why = next((reasons[k] for k in (op.outputs[0].name, op.name, op.type)
                            if op.outputs and k in reasons), None)
                out.append({"op": op.type, "name": op.name, "why": why or
                            "no integer kernel for it here (ops without one stay float)"})
    return out


# -- check ------------------------------------------------------------------------------------
def support(report) -> dict:
    """converter.check's SupportReport."""
    return {
        "supported": report.ok,
        "ops": [{"tf_op": s.op_type, "nodes": len(s.nodes), "supported": s.supported,
                 "unsupported_nodes": list(s.unsupported_nodes)}
                for s in sorted(report.ops.values(), key=lambda s: (s.supported, s.op_type))],
        "hints": list(report.hints),
    }


# -- run --------------------------------------------------------------------------------------
def outputs(outs: list[tuple[str, np.ndarray]]) -> dict:
    return {"outputs": [{"name": name, "dtype": v.dtype.name, "shape": list(v.shape),
                         "values": v.tolist()} for name, v in outs]}
