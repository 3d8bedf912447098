"""Per-layer footprint of a .tflite model on TensorFlow Lite Micro (like STM32Cube.AI's
``analyze``): for every op of subgraph 0, its multiply-accumulates, the bytes of its
constant inputs (flash) and the activation bytes TFLM's memory plan keeps live while it
runs (RAM), and the peak.

"Live at op i" is every buffer of TFLM's plan (plan.py: activation tensors and
scratch buffers, 16-byte aligned as TFLM allocates them) whose lifetime covers the scope
op i runs at; the peak of these sums can be below the arena's head, which also counts the
holes the greedy placement leaves.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .arena import micro_arena_report
from .plan import called_subgraphs
from ..loader.model import load_model
from ..loader.model_objects import num_elements


@dataclass(frozen=True)
class LayerFootprint:
    index: int
    op: str
    output: str  # name of the op's first output tensor
    macs: int
    weight_bytes: int  # constant inputs (flash)
    activation_bytes: int  # planned buffers live while the op runs (RAM)


@dataclass(frozen=True)
class Footprint:
    layers: tuple[LayerFootprint, ...]
    macs: int
    weight_bytes: int
    peak_activation_bytes: int
    peak_op: int  # index of the first op at the peak (-1 without ops)
    arena_32bit: int
    arena_host: int

    def as_dict(self) -> dict:
        """Plain JSON types (lists, ints, strings)."""
        d = asdict(self)
        d["layers"] = list(d["layers"])
        return d


def _macs(sg, op) -> int:
    """Multiply-accumulates of the ops that have them (conv, depthwise, transpose conv,
    fully connected, batch matmul); 0 for the others."""
    def shape(i):
        return sg.tensors[i].shape if 0 <= i < len(sg.tensors) else ()
    out = shape(op.outputs[0]) if op.outputs else ()
    if op.name == "CONV_2D" and len(shape(op.inputs[1])) == 4:
        _, kh, kw, cin = shape(op.inputs[1])  # OHWI: each output sums kh*kw*cin products
        return num_elements(out) * kh * kw * cin
    if op.name == "DEPTHWISE_CONV_2D" and len(shape(op.inputs[1])) == 4:
        _, kh, kw, _ = shape(op.inputs[1])  # 1HWC: each output sums kh*kw products
        return num_elements(out) * kh * kw
    if op.name == "TRANSPOSE_CONV" and len(shape(op.inputs[1])) == 4:
        cout, kh, kw, _ = shape(op.inputs[1])  # every input value meets kh*kw*cout weights
        return num_elements(shape(op.inputs[2])) * kh * kw * cout
    if op.name == "FULLY_CONNECTED" and len(shape(op.inputs[1])) == 2:
        units, depth = shape(op.inputs[1])
        return num_elements(out) * depth if units else 0
    if op.name == "BATCH_MATMUL" and len(shape(op.inputs[0])) >= 2:
        x = shape(op.inputs[0])
        depth = x[-2] if op.options.get("adj_x") else x[-1]
        return num_elements(out) * depth
    return 0


def footprint(model: bytes) -> Footprint:
    """The per-op footprint of subgraph 0 of ``model`` (.tflite bytes)."""
    m = load_model(model)
    host = micro_arena_report(m, "host")
    arena32 = micro_arena_report(m, "32bit").total
    sg = m.subgraphs[0]
    buffers = [b for b in host.buffers if b.subgraph == 0]
    scopes = _op_scopes(m)
    layers = []
    for op, scope in zip(sg.operators, scopes):
        live = sum(b.size for b in buffers if b.first <= scope <= b.last)
        weights = sum(sg.tensors[i].data.nbytes for i in set(op.inputs)
                      if i >= 0 and sg.tensors[i].data is not None)
        out = sg.tensors[op.outputs[0]].name if op.outputs else ""
        name = f"CUSTOM {op.custom_code}" if op.name == "CUSTOM" else op.name
        layers.append(LayerFootprint(op.index, name, out, _macs(sg, op), weights, live))
    peak = max((layer.activation_bytes for layer in layers), default=0)
    peak_op = next((layer.index for layer in layers if layer.activation_bytes == peak), -1)
    # constants shared by several ops are counted once in the total
    shared = {i for op in sg.operators for i in op.inputs
              if i >= 0 and sg.tensors[i].data is not None}
    return Footprint(tuple(layers), sum(x.macs for x in layers),
                     sum(sg.tensors[i].data.nbytes for i in shared), peak, peak_op,
                     arena32, host.total)


def _op_scopes(model) -> list[int]:
    """The scope each op of subgraph 0 runs at (micro_plan.lifetimes' counting): one per
    op, plus one per subgraph an IF / WHILE / CALL_ONCE walks and that subgraph's ops."""
    def walk(sg_index: int, scope: int, out: list[int] | None, running) -> int:
        for op in model.subgraphs[sg_index].operators:
            scope += 1
            if out is not None:
                out.append(scope)
            for sub in called_subgraphs(model, sg_index, op, running):
                scope = walk(sub, scope + 1, None, (*running, sub))
        return scope

    scopes: list[int] = []
    walk(0, 0, scopes, (0,))
    return scopes
