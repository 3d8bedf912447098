"""FakeQuantWithMinMaxVars / Args / VarsPerChannel: ranges for quantization-aware graphs.

On a constant (QAT weights) a FakeQuant node is applied numerically at conversion (TF's kernel,
bit for bit). On an activation it is lowered to an IDENTITY whose output carries the nudged
range and whose options hold the node's grid; then

- when quantizing (convert_detailed with a quantize mode), the range is the tensor's
  quantization range (no calibration data needed for it) and the IDENTITY goes away;
- in a float model, `quantize_dequantize` makes it TF's quantize-dequantize, as TensorFlow's
  converter writes it in float mode (QUANTIZE -> DEQUANTIZE with the nudged scale and zero
  point): [MAXIMUM nudged_min] [MINIMUM nudged_max] QUANTIZE DEQUANTIZE. Up to 8 bits the
  levels are stored as uint8 as they are (zero point = TF's nudged one: TF's file, same
  types and op versions); above, as int16 with zero point 0 (LiteRT's DEQUANTIZE requires
  it), level k stored as k - zero_point. A clamp is written only where the stored grid
  stops short of the type's range: MAXIMUM for narrow_range (level 0 unused), MINIMUM below
  8 bits (levels above 2^num_bits - 1), both for 9..15 bits. The float model then computes
  TF's FakeQuant except where x / scale falls exactly halfway between two levels (TFLite's
  QUANTIZE rounds half away from zero, TF's kernel half up) -- as TF's own float file.
  TF 2.21's converter writes the same pair without the clamps: wrong for narrow_range
  activations (values below nudged_min become level 0, not 1), for num_bits 2, 3, 5, 6, 7
  (an 8-bit grid) and 9..16 (uint16 tensors LiteRT's QUANTIZE refuses to load).
- What a float model drops (values pass through, no rounding): a per-channel FakeQuant on an
  activation (no TFLite QUANTIZE for per-channel activations), and a 16-bit one whose zero
  point is not the middle level (no int16 grid with zero point 0 holds its 65536 levels;
  half a level is at most 2^-17 of its range).

TF's nudging (fake_quant_ops_functor.h), qmin = 1 if narrow_range else 0, qmax = 2^bits - 1:
    scale = (max - min) / (qmax - qmin)
    zp = clamp(round(qmin - min / scale), qmin, qmax)
    nudged_min = (qmin - zp) * scale,  nudged_max = (qmax - zp) * scale
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.errors import GraphError, ShapeError
from ..ir import Graph, Op, QuantParams, all_graphs
from ..quantize.qarith import nudged_zero_point
from .context import LowerCtx, attr_bool, attr_float, attr_int, fail
from .spec import FLOAT, Attr, In, Lowering, spec


def nudge(rmin, rmax, num_bits: int = 8, narrow_range: bool = False):
    """Per element of rmin/rmax: (nudged_min, nudged_max, scale), as TF computes them."""
    qmin = 1.0 if narrow_range else 0.0
    qmax = float(2 ** num_bits - 1)
    rmin = np.asarray(rmin, np.float32)
    rmax = np.asarray(rmax, np.float32)
    scale = (rmax - rmin) / np.float32(qmax - qmin)
    safe = np.where(scale > 0, scale, np.float32(1))
    zp = nudged_zero_point(qmin - rmin / safe, qmin, qmax).astype(np.float32)
    return ((qmin - zp) * scale).astype(np.float32), ((qmax - zp) * scale).astype(np.float32), \
        scale.astype(np.float32)


def fake_quantize(x: np.ndarray, rmin, rmax, num_bits: int, narrow: bool, axis: int = -1):
    """Quantize-dequantize x with the nudged range (per channel along `axis` if vectors)."""
    nmin, nmax, scale = nudge(rmin, rmax, num_bits, narrow)
    x = np.asarray(x, np.float32)
    safe = np.where(scale > 0, scale, np.float32(1))
    with np.errstate(invalid="ignore"):  # a NaN weight (a signaling one too) stays NaN, as in TF
        clamped = np.clip(x, nmin, nmax)
        return (np.floor((clamped - nmin) / safe + np.float32(0.5)) * scale
                + nmin).astype(np.float32)


def _range_inputs(ctx: LowerCtx, node):
    if node.op == "FakeQuantWithMinMaxArgs":
        return attr_float(node, "min", -6.0), attr_float(node, "max", 6.0)
    rmin, rmax = (ctx.const_input(node, i, what) for i, what in ((1, "the min"), (2, "the max")))
    if node.op == "FakeQuantWithMinMaxVarsPerChannel":
        x = ctx.input(node, 0)
        channels = (x.shape[-1],) if x.shape else rmin.shape
        if rmin.shape != channels or rmax.shape != channels:
            raise fail(ShapeError, node, f"min (shape {list(rmin.shape)}) and max (shape "
                       f"{list(rmax.shape)}) must both hold one value per channel "
                       f"({channels[0] if channels else '?'})")
        return rmin, rmax
    return rmin.reshape(()), rmax.reshape(())  # spec: one element each


def fake_quant(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    rmin, rmax = _range_inputs(ctx, node)
    bits = attr_int(node, "num_bits", 8)
    narrow = attr_bool(node, "narrow_range", False)
    if not (np.all(np.isfinite(rmin)) and np.all(np.isfinite(rmax))):
        raise fail(GraphError, node, "min or max is NaN or infinite")
    if np.any(np.asarray(rmin) > np.asarray(rmax)):
        raise fail(GraphError, node, "min > max")
    with np.errstate(over="ignore"):  # nudge() divides max - min, in float32 as TF does
        width = np.asarray(rmax, np.float32) - np.asarray(rmin, np.float32)
    if not np.all(np.isfinite(width)):
        raise fail(GraphError, node, "max - min overflows float32 (the range is wider than "
                   "3.4e38)")
    if x.is_const:
        out = ctx.output(node, x.dtype)
        out.data = fake_quantize(x.data, rmin, rmax, bits, narrow)
        out.shape = tuple(out.data.shape)
        return
    out = ctx.output(node, x.dtype)
    op = ctx.graph.add_op("IDENTITY", [x], [out], name=node.name)
    nmin, nmax, scale = nudge(rmin, rmax, bits, narrow)
    if np.ndim(nmin) == 0:
        out.range = (float(nmin), float(nmax))
        x.range = x.range or out.range
        qmin = 1 if narrow else 0
        zp = int(round(qmin - float(nmin) / float(scale))) if scale > 0 else qmin
        op.options[GRID] = Grid(np.float32(nmin), np.float32(nmax), np.float32(scale), zp,
                                qmin, 2 ** bits - 1)


# -- float models: TF's quantize-dequantize ---------------------------------------------------
GRID = "fake_quant_grid"  # the IDENTITY option holding an activation FakeQuant's Grid


@dataclass(frozen=True)
class Grid:
    """One FakeQuant's nudged grid: level k in [qmin, qmax] is (k - zero_point) * scale."""

    nmin: np.float32
    nmax: np.float32
    scale: np.float32
    zero_point: int
    qmin: int
    qmax: int


def quantize_dequantize(graph: Graph) -> int:
    """Float model: every activation FakeQuant becomes TF's quantize-dequantize (see the module
    docstring). Returns how many were rewritten."""
    n = 0
    for g in all_graphs(graph):
        for op in [o for o in g.ops if o.type == "IDENTITY" and GRID in o.options]:
            _expand(g, op, op.options[GRID])
            n += 1
    return n


def _expand(g: Graph, op: Op, grid: Grid) -> None:
    x, out = op.inputs[0], op.outputs[0]
    dtype = np.dtype(np.uint8 if grid.qmax < 256 else np.int16)  # TF's float files: uint8
    lo, hi = int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)
    # stored integer = level + shift: uint8 stores the levels as they are; int16 needs the
    # stored zero point 0 (dequantize.cc), so level zero_point is stored as 0
    shift = 0 if dtype == np.uint8 else -grid.zero_point
    if not lo <= grid.qmin + shift <= grid.qmax + shift <= hi:
        del op.options[GRID]  # no int16 grid for it: values pass through (module docstring)
        return
    t = x
    for needed, kind, bound in ((grid.qmin + shift > lo, "MAXIMUM", grid.nmin),
                                (grid.qmax + shift < hi, "MINIMUM", grid.nmax)):
        if needed or grid.scale == 0:  # (min == max: clamped to 0.0 both ways)
            clamped = g.tensor(f"{out.name}/{kind.lower()}", np.float32, x.shape)
            bound_t = g.const(f"{out.name}/{kind.lower()}/y", np.float32(bound))
            g.insert_op(Op(kind, [t, bound_t], [clamped], {}, op.name), op)
            t = clamped
    q = g.tensor(f"{out.name}_{dtype.name}", dtype, x.shape)
    scale = grid.scale if grid.scale > 0 else np.float32(1)  # min == max: every value is 0.0
    q.quant = QuantParams(np.asarray([scale], np.float32),
                          np.asarray([grid.zero_point + shift], np.int64))
    g.insert_op(Op("QUANTIZE", [t], [q], {}, op.name), op)
    g.replace_op(op, Op("DEQUANTIZE", [q], [out], {}, op.name))


# -- specs (TF op definitions: array_ops.cc; num_bits in [2, 16]) ------------------------------
_BITS = (Attr("num_bits", "i", lo=2, hi=16), Attr("narrow_range", "b"))
_X = In("the input", FLOAT, None)


def _vars(per_channel: bool):
    shape = dict(ranks=(1,)) if per_channel else dict(scalar=True)
    bounds = (In(what, FLOAT, None, const=True, **shape) for what in ("the min", "the max"))
    return spec(_X, *bounds, attrs=_BITS)


RULES = {
    "FakeQuantWithMinMaxVars": Lowering(fake_quant, _vars(False)),
    "FakeQuantWithMinMaxArgs": Lowering(fake_quant, spec(_X, attrs=(
        *_BITS, Attr("min", "f", lo=-1e30, hi=1e30), Attr("max", "f", lo=-1e30, hi=1e30)))),
    "FakeQuantWithMinMaxVarsPerChannel": Lowering(fake_quant, _vars(True)),
}
