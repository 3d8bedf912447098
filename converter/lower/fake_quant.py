"""FakeQuantWithMinMaxVars / Args / VarsPerChannel: ranges for quantization-aware graphs.

On an activation, a FakeQuant node becomes an IDENTITY whose output carries the nudged range
(so quantization needs no calibration data for it). On a constant (QAT weights) it is
applied numerically, so the float model computes what TensorFlow computes.

TF's nudging (fake_quant_ops_functor.h), qmin = 1 if narrow_range else 0, qmax = 2^bits - 1:
    scale = (max - min) / (qmax - qmin)
    zp = clamp(round(qmin - min / scale), qmin, qmax)
    nudged_min = (qmin - zp) * scale,  nudged_max = (qmax - zp) * scale
"""

from __future__ import annotations

import numpy as np

from ...interpreter.errors import GraphError, ShapeError
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
    clamped = np.clip(x, nmin, nmax)
    safe = np.where(scale > 0, scale, np.float32(1))
    return (np.floor((clamped - nmin) / safe + np.float32(0.5)) * scale + nmin).astype(np.float32)


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
    if x.is_const:
        out = ctx.output(node, x.dtype)
        out.data = fake_quantize(x.data, rmin, rmax, bits, narrow)
        out.shape = tuple(out.data.shape)
        return
    out = ctx.output(node, x.dtype)
    ctx.graph.add_op("IDENTITY", [x], [out], name=node.name)
    nmin, nmax, _ = nudge(rmin, rmax, bits, narrow)
    if np.ndim(nmin) == 0:
        out.range = (float(nmin), float(nmax))
        x.range = x.range or out.range


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
