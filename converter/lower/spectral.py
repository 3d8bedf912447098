"""Spectral ops (tf.signal's audio front ends): RFFT / RFFT2D, ComplexAbs, Real, Imag, the
Complex of constants, and BroadcastArgs (tf.signal.linear_to_mel_weight_matrix computes two).

TFLite's builtins (and TF's converter, prepare_tf.cc ConvertRfftToRfft2d + legalize_tf):

* RFFT(x, [n]) has no 1-D builtin: x [.., n] -> EXPAND_DIMS(axis -2) [.., 1, n] ->
  RFFT2D(fft_length [1, n]) -> SQUEEZE(-2) [.., n / 2 + 1]; RFFT2D maps one to one.
  LiteRT's RFFT2D takes float32 -> complex64 with power-of-two lengths (rfft2d.cc), so other
  dtypes and lengths are refused here, naming the node;
* ComplexAbs -> COMPLEX_ABS, Real -> REAL, Imag -> IMAG (complex64 -> float32);
* Complex(re, im) has no builtin: constants are combined here (tf.signal.dct builds its
  twiddle factors that way); a computed one is refused;
* BroadcastArgs -> BROADCAST_ARGS (folded away when both shapes are constants).

None of these ops has an integer kernel in LiteRT: their OpDefs say FLOAT_ONLY, so an int8
model keeps them float between DEQUANTIZE and QUANTIZE.
"""

from __future__ import annotations

import numpy as np

from ...interpreter.errors import ShapeError, UnsupportedOpError
from .context import LowerCtx, fail
from .spec import INDEX, Attr, In, Lowering, spec

_D = np.dtype
F32 = frozenset({_D(np.float32)})
C64 = frozenset({_D(np.complex64)})


def _lengths(ctx: LowerCtx, node, n: int) -> list[int]:
    """fft_length: n constant powers of two (LiteRT's fft2d library takes nothing else)."""
    lengths = [int(v) for v in np.asarray(ctx.const_input(node, 1, "fft_length")).reshape(-1)]
    if len(lengths) != n:
        raise fail(ShapeError, node, f"fft_length has {len(lengths)} values; {node.op} takes "
                   f"{n}")
    if not all(v > 0 and not v & (v - 1) for v in lengths):
        raise fail(UnsupportedOpError, node, f"fft_length {lengths} is not a power of two; "
                   "TFLite's RFFT2D takes powers of two only (pad the frames to one)")
    return lengths


def _rank_at_least(node, x, rank: int) -> None:
    if x.shape is not None and len(x.shape) < rank:
        raise fail(ShapeError, node, f"the input has shape {list(x.shape)}; {node.op} needs "
                   f"at least {rank} dimension{'s' if rank > 1 else ''}")


def rfft(ctx: LowerCtx, node) -> None:
    """[.., n] -> [.., 1, n] -> RFFT2D [1, n] -> [.., n / 2 + 1] (TF's ConvertRfftToRfft2d)."""
    x = ctx.input(node, 0)
    _rank_at_least(node, x, 1)
    (n,) = _lengths(ctx, node, 1)
    g = ctx.graph
    expanded = g.tensor(f"{node.name}/expand", x.dtype)
    g.add_op("EXPAND_DIMS", [x, ctx.const(node, "axis", np.array([-2], np.int32))],
             [expanded], name=node.name)
    spectrum = g.tensor(f"{node.name}/rfft2d", np.complex64)
    g.add_op("RFFT2D", [expanded, ctx.const(node, "fft_length", np.array([1, n], np.int32))],
             [spectrum], name=node.name)
    ctx.emit("SQUEEZE", node, [spectrum], dict(squeeze_dims=[-2]), dtype=np.complex64)


def rfft2d(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    _rank_at_least(node, x, 2)
    lengths = _lengths(ctx, node, 2)
    ctx.emit("RFFT2D", node, [x, ctx.const(node, "fft_length", np.array(lengths, np.int32))],
             dtype=np.complex64)


def _part(tfl_type: str):
    def rule(ctx: LowerCtx, node) -> None:
        ctx.emit(tfl_type, node, [ctx.input(node, 0)], dtype=np.float32)
    rule.__name__ = tfl_type.lower()
    return rule


def complex_(ctx: LowerCtx, node) -> None:
    """Complex(re, im) of constants, broadcast as TF does; TFLite has no builtin for it."""
    re, im = ctx.input(node, 0), ctx.input(node, 1)
    if not (re.is_const and im.is_const):
        raise fail(UnsupportedOpError, node, "builds a complex tensor from computed values; "
                   "TFLite has no builtin for that (only constants are converted)")
    try:
        value = (re.data.astype(np.complex64) + np.complex64(1j) * im.data).astype(np.complex64)
    except ValueError:
        raise fail(ShapeError, node, f"shapes {list(re.data.shape)} and "
                   f"{list(im.data.shape)} do not broadcast") from None
    ctx.alias(node, ctx.graph.const(node.name, value))


def broadcast_args(ctx: LowerCtx, node) -> None:
    ctx.emit("BROADCAST_ARGS", node, ctx.inputs(node))


# -- specs (TF op definitions: spectral_ops.cc, math_ops.cc, array_ops.cc) ------------------
_FFT = spec(In("the input", F32, "Treal"),
            In("fft_length", frozenset({_D(np.int32)}), None, const=True, ranks=(1,)),
            attrs=(Attr("Tcomplex", "type", dtypes=C64),))


# the real outputs (Tout) must be float32: LiteRT's COMPLEX_ABS / REAL / IMAG (complex64 in)
_COMPLEX_IN = spec(In("the input", C64), attrs=(Attr("Tout", "type", dtypes=F32),))
_SHAPES = spec(In("shape s0", INDEX), In("shape s1", INDEX))

RULES = {
    "RFFT": Lowering(rfft, _FFT),
    "RFFT2D": Lowering(rfft2d, _FFT),
    "ComplexAbs": Lowering(_part("COMPLEX_ABS"), _COMPLEX_IN),
    "Real": Lowering(_part("REAL"), _COMPLEX_IN),
    "Imag": Lowering(_part("IMAG"), _COMPLEX_IN),
    "Complex": Lowering(complex_, spec(In("the real part", F32), In("the imaginary part", F32),
                                       attrs=(Attr("Tout", "type", dtypes=C64),))),
    "BroadcastArgs": Lowering(broadcast_args, _SHAPES),
}
