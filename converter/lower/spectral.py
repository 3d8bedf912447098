"""Spectral ops (tf.signal's audio front ends): RFFT / RFFT2D, ComplexAbs, Real, Imag, the
Complex of constants, and BroadcastArgs (tf.signal.linear_to_mel_weight_matrix computes two).

TFLite's builtins (and TF's converter, prepare_tf.cc ConvertRfftToRfft2d + legalize_tf):

* RFFT(x, [n]) has no 1-D builtin: x [.., n] -> EXPAND_DIMS(axis -2) [.., 1, n] ->
  RFFT2D(fft_length [1, n]) -> SQUEEZE(-2) [.., n / 2 + 1]; RFFT2D maps one to one.
  LiteRT's RFFT2D takes float32 -> complex64 with power-of-two lengths (rfft2d.cc): an RFFT
  of another length becomes the DFT as two constant matrix products (its real and imaginary
  parts, below; TF's converter writes an RFFT2D of that length, which LiteRT refuses when
  it allocates), an RFFT2D of one is refused, naming the node;
* ComplexAbs -> COMPLEX_ABS, Real -> REAL, Imag -> IMAG (complex64 -> float32);
* Cast of a complex64 tensor -> CAST (LiteRT's cast.cc casts its real part to any type);
* Complex(re, im) has no builtin: constants are combined here (tf.signal.dct builds its
  twiddle factors that way); a computed one is refused;
* BroadcastArgs -> BROADCAST_ARGS (folded away when both shapes are constants).

Complex values past the FFT (tf.signal.dct: Real(StridedSlice(RFFT(x)) * twiddles)).
TFLite's builtins have no complex STRIDED_SLICE, MUL, EXP, ... (TF's converter needs Flex
there), so edgelite carries such a value as its two float parts ("parts"): `complex_lowering`
takes over a node reading a complex tensor when TFLite cannot run its op on complex64:

* ops that move or select elements (StridedSlice, Slice, Reshape, ...) run their own
  rule on each part;
* Mul / Add / Sub / AddV2 of parts and real or complex operands: the complex arithmetic
  on the parts (a constant's real and imaginary parts as constants);
* ops on constants only (Exp, Mul, ... of tf.signal's twiddle factors) are folded in numpy;
* Real / Imag / ComplexAbs of parts: the real part, the imaginary part, sqrt(re^2 + im^2);
  a Cast of parts: the real part, cast (to complex64: the parts themselves).

The node's own output is then a complex64 tensor no op computes (a stand-in the parts are
keyed by): any other consumer of it is refused, naming both nodes.

None of these ops has an integer kernel in LiteRT: their OpDefs say FLOAT_ONLY, so an int8
model keeps them float between DEQUANTIZE and QUANTIZE.
"""

from __future__ import annotations

import numpy as np

from edgelite.errors import ShapeError, UnsupportedOpError
from edgelite.names import quoted
from ..graphdef import TensorRef, data_inputs
from ..ir import Activation
from .context import LowerCtx, attr_dtype, fail
from .einsum import static_shape
from .spec import ANY, INDEX, REAL, Attr, In, Lowering, NodeSpec, spec, validate

_D = np.dtype
F32 = frozenset({_D(np.float32)})
C64 = frozenset({_D(np.complex64)})


def _lengths(ctx: LowerCtx, node, n: int, powers_of_two: bool = True) -> list[int]:
    """fft_length: n constant positive lengths, powers of two unless told otherwise (LiteRT's
    fft2d library takes nothing else)."""
    lengths = [int(v) for v in np.asarray(ctx.const_input(node, 1, "fft_length")).reshape(-1)]
    if len(lengths) != n:
        raise fail(ShapeError, node, f"fft_length has {len(lengths)} values; {node.op} takes "
                   f"{n}")
    if any(v <= 0 for v in lengths):
        raise fail(ShapeError, node, f"fft_length {lengths} must be positive")
    if powers_of_two and any(v & (v - 1) for v in lengths):
        raise fail(UnsupportedOpError, node, f"fft_length {lengths} is not a power of two; "
                   "TFLite's RFFT2D takes powers of two only (pad the frames to one)")
    return lengths


def _power_of_two(v: int) -> bool:
    return not v & (v - 1)


def _rank_at_least(node, x, rank: int) -> None:
    if x.shape is not None and len(x.shape) < rank:
        raise fail(ShapeError, node, f"the input has shape {list(x.shape)}; {node.op} needs "
                   f"at least {rank} dimension{'s' if rank > 1 else ''}")


def rfft(ctx: LowerCtx, node) -> None:
    """[.., n] -> [.., 1, n] -> RFFT2D [1, n] -> [.., n / 2 + 1] (TF's ConvertRfftToRfft2d)."""
    x = ctx.input(node, 0)
    _rank_at_least(node, x, 1)
    (n,) = _lengths(ctx, node, 1, powers_of_two=False)
    if not _power_of_two(n):
        _dft(ctx, node, x, n)
        return
    g = ctx.graph
    expanded = g.tensor(f"{node.name}/expand", x.dtype)
    g.add_op("EXPAND_DIMS", [x, ctx.const(node, "axis", np.array([-2], np.int32))],
             [expanded], name=node.name)
    spectrum = g.tensor(f"{node.name}/rfft2d", np.complex64)
    g.add_op("RFFT2D", [expanded, ctx.const(node, "fft_length", np.array([1, n], np.int32))],
             [spectrum], name=node.name)
    ctx.emit("SQUEEZE", node, [spectrum], dict(squeeze_dims=[-2]), dtype=np.complex64)


def _dft(ctx: LowerCtx, node, x, n: int) -> None:
    """RFFT of a length RFFT2D cannot take (tf.signal.dct of 20 mel bins: 40): the DFT as two
    constant matrices, re = x W_cos and im = -x W_sin (W[j, k] = cos / sin(2 pi j k / n),
    rows past n zero: the crop; a shorter input is zero-padded, so its rows are all there is),
    carried as parts. Each is one FULLY_CONNECTED after the passes."""
    try:  # the shapes of the ops lowered so far tell it (einsum's helper works them out)
        shape = static_shape(ctx, node, x)
    except ShapeError:
        shape = None
    width = shape[-1] if shape else None
    if width is None or width < 0:
        raise fail(ShapeError, node, f"fft_length {n} is not a power of two, so edgelite "
                   "computes the DFT as a matrix product, which needs the input's last "
                   "dimension; give the input's shape (--input-shape)")
    bins = n // 2 + 1
    if width * bins > MAX_DFT_VALUES:
        raise fail(UnsupportedOpError, node, f"fft_length {n} is not a power of two, and its "
                   f"DFT matrix for {width} samples would hold {width * bins} values (limit "
                   f"{MAX_DFT_VALUES}); pad the frames to a power of two")
    j = np.arange(width)[:, None]
    angle = 2 * np.pi * ((j * np.arange(bins)[None, :]) % n) / n  # exact phases, then cos
    keep = (j < n).astype(np.float64)
    parts = []
    for name, w in (("dft_re", np.cos(angle) * keep), ("dft_im", -np.sin(angle) * keep)):
        out = ctx.graph.tensor(f"{node.name}/{name}", np.float32)
        ctx.graph.add_op("BATCH_MATMUL", [x, ctx.const(node, name, w.astype(np.float32))],
                         [out], dict(adj_x=False, adj_y=False), name=node.name)
        parts.append(out)
    _set_parts(ctx, node, *parts)


# A DFT matrix's values (each of the two): 2^20 float32 = 4 MB, e.g. 2048 samples x 513 bins.
MAX_DFT_VALUES = 1 << 20


def rfft2d(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    _rank_at_least(node, x, 2)
    lengths = _lengths(ctx, node, 2)
    ctx.emit("RFFT2D", node, [x, ctx.const(node, "fft_length", np.array(lengths, np.int32))],
             dtype=np.complex64)


def _part(tfl_type: str):
    def rule(ctx: LowerCtx, node) -> None:
        x = ctx.input(node, 0)
        parts = _parts_of(ctx, x)
        if parts is None:
            ctx.emit(tfl_type, node, [x], dtype=np.float32)
        elif tfl_type == "COMPLEX_ABS":  # sqrt(re^2 + im^2)
            re, im = parts
            total = _binary(ctx, node, "ADD", _binary(ctx, node, "MUL", re, re),
                            _binary(ctx, node, "MUL", im, im))
            ctx.emit("SQRT", node, [total], dtype=np.float32)
        else:
            ctx.alias(node, parts[0] if tfl_type == "REAL" else parts[1])
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


# -- complex values as two float parts ----------------------------------------------------------
# TF ops that only move or select elements: each part goes through the op's own rule.
PER_PART = ("StridedSlice", "Slice", "Reshape", "ExpandDims", "Squeeze", "Transpose", "Pad")
# Elementwise TF ops folded in numpy when every input is a constant (complex ones included).
_UNARY_FOLD = {"Exp": np.exp, "Neg": np.negative, "Conj": np.conj}
_BINARY_FOLD = {"Mul": np.multiply, "Add": np.add, "AddV2": np.add, "Sub": np.subtract,
                "RealDiv": np.divide}
_ARITHMETIC = ("Mul", "Add", "AddV2", "Sub")
_OPERAND = In("operand", REAL | C64, None)
_ONE, _TWO = spec(_OPERAND), spec(_OPERAND, _OPERAND)
_CAST = spec(In("the input", C64, "SrcT"), attrs=(Attr("DstT", "type", True, dtypes=ANY | C64),))


def _parts_of(ctx: LowerCtx, t):
    entry = ctx.complex_parts.get(id(t))
    return None if entry is None else entry[1:]


def _set_parts(ctx: LowerCtx, node, re, im) -> None:
    """The node's output: a complex64 stand-in no op computes, keyed to its float parts."""
    stand_in = ctx.output(node, np.complex64)
    ctx.complex_parts[id(stand_in)] = (stand_in, re, im)


def _binary(ctx: LowerCtx, node, tfl: str, a, b):
    out = ctx.graph.tensor(f"{node.name}/{tfl.lower()}", np.float32)
    ctx.graph.add_op(tfl, [a, b], [out], dict(fused_activation_function=Activation.NONE),
                     name=node.name)
    return out


def _split(ctx: LowerCtx, node, t):
    """(re, im) of a complex tensor: its parts, a constant's halves, or REAL / IMAG ops."""
    parts = _parts_of(ctx, t)
    if parts is not None:
        return parts
    if t.is_const:
        return (ctx.const(node, "re", np.real(t.data).astype(np.float32)),
                ctx.const(node, "im", np.imag(t.data).astype(np.float32)))
    out = []
    for tfl in ("REAL", "IMAG"):
        part = ctx.graph.tensor(f"{t.name}/{tfl.lower()}", np.float32)
        ctx.graph.add_op(tfl, [t], [part], name=node.name)
        out.append(part)
    return tuple(out)


def complex_lowering(ctx: LowerCtx, node) -> Lowering | None:
    """The lowering of a node reading a complex tensor where TFLite has no complex64 kernel
    for its op (None: the registry's own rule applies)."""
    if node.op in RULES or not _reads_complex(ctx, node):
        return None
    ins = [ctx.tensors.get(r.name) for r in ctx.refs(node)]
    if all(t is not None and t.is_const for t in ins):
        if node.op in _UNARY_FOLD:
            return Lowering(_fold(_UNARY_FOLD[node.op]), _ONE)
        if node.op in _BINARY_FOLD:
            return Lowering(_fold(_BINARY_FOLD[node.op]), _TWO)
    if node.op == "Identity":
        return Lowering(_identity, _ONE)
    if node.op == "Cast":
        return Lowering(_cast, _CAST)
    if node.op in PER_PART:
        return Lowering(_per_part, NodeSpec(variadic=_OPERAND, n_min=1))
    if node.op in _ARITHMETIC:
        return Lowering(_arithmetic, _TWO)
    carried = next((r.name for r, t in zip(ctx.refs(node), ins)
                    if t is not None and _parts_of(ctx, t) is not None), None)
    if carried is not None:
        raise fail(UnsupportedOpError, node, f"reads the complex value {quoted(carried)}, "
                   "which edgelite carries as real and imaginary parts (TFLite has no complex "
                   f"{node.op}); only {', '.join(PER_PART + _ARITHMETIC)}, Identity, Cast, "
                   "Real, Imag and ComplexAbs take it")
    return None  # the op's own spec refuses complex64, naming the node


def _reads_complex(ctx: LowerCtx, node) -> bool:
    """Whether an input of node is complex64 (asked of every node: a plain loop)."""
    tensors = ctx.tensors
    for r in ctx.refs(node):
        t = tensors.get(r.name)
        if t is not None and t.dtype == _COMPLEX64:
            return True
    return False


_COMPLEX64 = _D(np.complex64)  # (a dtype compares with a dtype faster than with a type)


def check_output(ctx: LowerCtx, name: str) -> None:
    """A model output cannot be a value carried as parts (no op computes it)."""
    if _parts_of(ctx, ctx.tensors[name]) is not None:
        raise UnsupportedOpError(f"output {quoted(name)} is a complex value TFLite cannot "
                                 "compute with builtins (edgelite carries it as real and "
                                 "imaginary parts); output tf.math.real / tf.math.imag of it")


def _fold(fn):
    def rule(ctx: LowerCtx, node) -> None:
        with np.errstate(all="ignore"):  # inf / nan are values here, as in TF
            out = np.asarray(fn(*(t.data for t in ctx.inputs(node))))
        ctx.alias(node, ctx.graph.const(node.name, out.astype(np.complex64)))
    return rule


def _identity(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    parts = _parts_of(ctx, x)
    if parts is None:
        ctx.alias(node, x)
    else:
        _set_parts(ctx, node, *parts)


def _cast(ctx: LowerCtx, node) -> None:
    """Cast of a complex64 tensor: TF and LiteRT (cast.cc) cast its real part; a value
    carried as parts casts the real part (a Cast to complex64 keeps the parts)."""
    x, dst = ctx.input(node, 0), attr_dtype(node, "DstT")
    parts = _parts_of(ctx, x)
    if dst == np.complex64:
        _identity(ctx, node)
    elif parts is None:
        ctx.emit("CAST", node, [x], dtype=dst)
    elif dst == np.float32:
        ctx.alias(node, parts[0])
    else:
        ctx.emit("CAST", node, [parts[0]], dtype=dst)


def _per_part(ctx: LowerCtx, node) -> None:
    """The op's own rule on each part: input 0 (the complex data) is swapped for it, and
    the node's type attribute T reads float32."""
    from . import REGISTRY  # (the registry imports this module)

    x = ctx.input(node, 0)
    ref = data_inputs(node)[0].name
    plain = type(node)()
    plain.CopyFrom(node)
    if "T" in plain.attr:
        plain.attr["T"].type = 1  # DT_FLOAT
    entry, parts = REGISTRY[node.op], []
    try:
        for part in _split(ctx, node, x):
            ctx.tensors[ref] = part
            validate(ctx, plain, entry.spec)
            entry.rule(ctx, plain)
            parts.append(ctx.tensors[TensorRef(node.name, 0).name])
    finally:
        ctx.tensors[ref] = x
    _set_parts(ctx, node, *parts)


def _arithmetic(ctx: LowerCtx, node) -> None:
    """(a + ib) op (c + id) on parts; a real operand has no imaginary part."""
    a, b = (_operand(ctx, node, t) for t in ctx.inputs(node))
    if node.op == "Mul":
        (ar, ai), (br, bi) = a, b
        re = _combine(ctx, node, "SUB", _product(ctx, node, ar, br), _product(ctx, node, ai, bi))
        im = _combine(ctx, node, "ADD", _product(ctx, node, ar, bi), _product(ctx, node, ai, br))
    else:
        tfl = "SUB" if node.op == "Sub" else "ADD"
        re, im = (_combine(ctx, node, tfl, x, y) for x, y in zip(a, b))
    # a part with no term is 0, in the other part's shape
    zero = ctx.const(node, "zero", np.zeros((), np.float32))
    re = _binary(ctx, node, "MUL", im, zero) if re is None else re
    im = _binary(ctx, node, "MUL", re, zero) if im is None else im
    _set_parts(ctx, node, re, im)


def _operand(ctx: LowerCtx, node, t):
    """(re, im) with None for a part known to be zero (a real operand's imaginary part, a
    constant's all-zero part)."""
    if t.dtype != np.complex64:
        return t, None
    re, im = _split(ctx, node, t)
    return tuple(None if p.is_const and not np.any(p.data) else p for p in (re, im))


def _product(ctx: LowerCtx, node, x, y):
    return None if x is None or y is None else _binary(ctx, node, "MUL", x, y)


def _combine(ctx: LowerCtx, node, tfl: str, x, y):
    """x + y or x - y where None is a zero term."""
    if y is None:
        return x
    if x is None:
        return y if tfl == "ADD" else _binary(ctx, node, "MUL", y,
                                              ctx.const(node, "minus_one", np.float32(-1)))
    return _binary(ctx, node, tfl, x, y)


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
