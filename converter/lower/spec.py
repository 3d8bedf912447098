"""What a well-formed node of each TF op looks like, checked before its lowering rule runs.

Every registry entry is a `Lowering`: the rule and its `NodeSpec` together (one op, one home).
A spec declares the data inputs (how many, which dtypes, which must be constants, their rank),
the attributes the rule reads (kind, range, allowed values) and which inputs share the dtype
named by a type attribute (`T`, `Tidx`, ...). `validate` checks all of it generically, so a
rule can index its inputs and read its attributes without guarding against hostile GraphDefs;
what a table cannot say (a batch norm's channel count, an axis against a known rank) the rule
checks itself. The facts follow TensorFlow's op definitions (tensorflow/core/ops/*.cc:
input lists, `N` minimums, attribute types and their allowed dtypes).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from edgelite.errors import DTypeError, GraphError, ShapeError
from edgelite.names import quoted, shown
from .context import LowerCtx, dtype_value, fail

_D = np.dtype
FLOAT = frozenset(map(_D, (np.float16, np.float32, np.float64)))
INT = frozenset(map(_D, (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                         np.int64, np.uint64)))
REAL = FLOAT | INT                      # TF's realnumbertypes
BOOL = frozenset({_D(np.bool_)})
ANY = REAL | BOOL                       # every dtype edgelite can hold: no strings
INDEX = frozenset(map(_D, (np.int32, np.int64)))  # shapes, axes, perms, paddings, sizes

INT32_MIN, INT32_MAX = -2**31, 2**31 - 1  # TFLite option fields and index tensors are int32
# Strides, window sizes, dilations and block sizes. No real model comes near 2^16, and the
# bound keeps the kernels' int32 window arithmetic ((k - 1) * d + 1, TFLite's
# ComputePaddingHeightWidth) far from overflow.
MAX_WINDOW = 1 << 16
# Outputs of one Split / Unpack node: each becomes an IR tensor, so a hostile count must not
# create millions of them.
MAX_OUTPUTS = 1 << 14
STRUCTURE = "the GraphDef is malformed; re-export it from TensorFlow"


@dataclass(frozen=True)
class In:
    """One data input: what it is (for messages), its dtypes and the shape it must have."""

    what: str
    dtypes: frozenset = REAL
    typed: str | None = "T"      # the type attribute naming its dtype (shared by its group)
    const: bool = False          # must be a constant once folding has run
    ranks: tuple[int, ...] | None = None  # allowed ranks, checked when the shape is known
    scalar: bool = False         # exactly one element (rank 0, or [1])


@dataclass(frozen=True)
class Attr:
    """One attribute the rule reads. kind is the AttrValue oneof: i, f, b, s, type, list."""

    name: str
    kind: str
    required: bool = False
    lo: float = INT32_MIN        # ints, list elements and floats: inclusive bounds
    hi: float = INT32_MAX
    lengths: tuple[int, ...] | None = None   # allowed list lengths
    choices: tuple[str, ...] | None = None   # allowed strings
    dtypes: frozenset | None = None          # allowed dtypes of a `type` attribute


@dataclass(frozen=True)
class NodeSpec:
    """A well-formed node: `variadic` inputs (count from attribute `n_attr`, at least
    `n_min`) come first, then exactly `inputs`."""

    inputs: tuple[In, ...] = ()
    variadic: In | None = None
    n_attr: str | None = None
    n_min: int = 1
    attrs: tuple[Attr, ...] = ()


@dataclass(frozen=True)
class Lowering:
    """A registry entry: the rule and the spec of the nodes it accepts."""

    rule: Callable[[LowerCtx, object], None]
    spec: NodeSpec


def spec(*inputs: In, attrs: tuple[Attr, ...] = (), **kw) -> NodeSpec:
    return NodeSpec(tuple(inputs), attrs=tuple(attrs), **kw)


# Attribute shapes shared by many ops.
def window(name: str, required: bool = True) -> Attr:
    """strides / ksize / dilations: [1, h, w, 1] with positive, bounded h and w."""
    return Attr(name, "list", required, lo=1, hi=MAX_WINDOW, lengths=(4,))


def padding(*choices: str) -> Attr:
    return Attr("padding", "s", True, choices=choices or ("SAME", "VALID"))


DATA_FORMAT = Attr("data_format", "s", choices=("NHWC", "NCHW"))


def scalar_input(what: str, dtypes=INDEX, typed: str | None = None, const: bool = True) -> In:
    return In(what, dtypes, typed, const=const, scalar=True)


def vector_input(what: str, typed: str | None = None, const: bool = False) -> In:
    return In(what, INDEX, typed, const=const, ranks=(1,))


# -- checking ---------------------------------------------------------------------------------
def validate(ctx: LowerCtx, node, s: NodeSpec) -> None:
    """Raise a one-line EdgeliteError naming the node if it does not match its spec."""
    refs = ctx.refs(node)
    slots = _slots(node, s, len(refs))
    for a in s.attrs:
        _check_attr(node, a)
    groups: dict[str, list] = {}
    dead = ctx.has_dead()  # (most graphs have no dead tensors: no question per input)
    for i, (ref, want) in enumerate(zip(refs, slots)):
        if dead and ctx.is_dead_ref(ref):
            continue  # an untaken tf.cond branch (Merge's other input)
        t = ctx.tensor_of(node, i, ref)
        _check_input(node, i, t, want)
        if want.typed:
            members = groups.get(want.typed)
            if members is None:
                groups[want.typed] = [(i, t)]
            else:
                members.append((i, t))
    for attr, members in groups.items():
        _check_group(node, attr, members)


def _slots(node, s: NodeSpec, n: int) -> tuple[In, ...] | list[In]:
    """The spec of each of the node's n data inputs; arity errors are raised here."""
    fixed = len(s.inputs)
    if s.variadic is None:
        if n != fixed:
            raise fail(GraphError, node, f"takes {fixed} data input{_s(fixed)}, found {n}; "
                       f"{STRUCTURE}")
        return s.inputs
    count = n - fixed
    if count < s.n_min:
        also = f" and {', '.join(i.what for i in s.inputs)}" if fixed else ""
        raise fail(GraphError, node, f"takes at least {s.n_min} {s.variadic.what} "
                   f"input{_s(s.n_min)}{also}, found {n} data input{_s(n)}; {STRUCTURE}")
    if s.n_attr is not None and s.n_attr in node.attr:
        declared = _int_attr(node, s.n_attr)
        if declared != count:
            raise fail(GraphError, node, f"attribute {s.n_attr}={declared} but the node has "
                       f"{count} {s.variadic.what} input{_s(count)}; {STRUCTURE}")
    return [s.variadic] * count + list(s.inputs)


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _int_attr(node, name: str) -> int:
    return int(_check_attr(node, Attr(name, "i", lo=0, hi=INT32_MAX)))


def _check_attr(node, a: Attr):
    """Raise if attribute `a` of node is malformed; its value (None if it is absent)."""
    value = node.attr.get(a.name)  # (one lookup: protobuf map access is slow)
    if value is None:
        if a.required:
            raise fail(GraphError, node, f"lacks attribute {a.name}; {STRUCTURE}")
        return None
    kind = value.WhichOneof("value")
    if kind != a.kind:
        raise fail(GraphError, node, f"attribute {a.name} should be of kind {a.kind!r}, "
                   f"found {kind!r}; {STRUCTURE}")
    v = getattr(value, a.kind)
    if a.kind == "list":
        ints = list(v.i)
        if a.lengths is not None and len(ints) not in a.lengths:
            raise fail(GraphError, node, f"attribute {a.name} has {len(ints)} integers, "
                       f"expected {' or '.join(map(str, a.lengths))}; {STRUCTURE}")
        bad = [x for x in ints if not a.lo <= x <= a.hi]
        if bad:
            raise fail(GraphError, node, f"attribute {a.name}={_short(ints)}: {bad[0]} is "
                       f"outside [{a.lo}, {a.hi}]")
    elif a.kind == "i" and not a.lo <= v <= a.hi:
        raise fail(GraphError, node, f"attribute {a.name}={v} is outside [{a.lo}, {a.hi}]")
    elif a.kind == "f" and not (math.isfinite(v) and a.lo <= v <= a.hi):
        raise fail(GraphError, node, f"attribute {a.name}={v} is not a finite number in "
                   f"[{a.lo}, {a.hi}]")
    elif a.kind == "s" and a.choices is not None:
        text = v.decode("utf-8", "backslashreplace")
        if text not in a.choices:
            raise fail(GraphError, node, f"attribute {a.name} is {quoted(text)}; it must be "
                       f"one of {', '.join(a.choices)}")
    elif a.kind == "type" and a.dtypes is not None:
        dt = dtype_value(node, a.name, v)
        if dt not in a.dtypes:
            raise fail(DTypeError, node, f"attribute {a.name} is {dtype_name(dt)}; expected "
                       f"{dtype_names(a.dtypes)}")
    return v


def _check_input(node, i: int, t, want: In) -> None:
    if t.dtype not in want.dtypes:
        raise fail(DTypeError, node, f"{_where(i, t, want)} is {dtype_name(t.dtype)}; "
                   f"{shown(node.op)} takes {dtype_names(want.dtypes)} there")
    if want.const and not t.is_const:
        raise fail(GraphError, node, f"{_where(i, t, want)} must be a constant; edgelite "
                   "converts only graphs whose such operands are frozen in (or computed from "
                   "constants)")
    shape = t.shape
    if shape is None:
        return
    if want.scalar and (len(shape) > 1 or math.prod(shape) != 1):
        raise fail(ShapeError, node, f"{_where(i, t, want)} has shape {list(shape)}; it must "
                   "be a scalar")
    if want.ranks is not None and len(shape) not in want.ranks:
        raise fail(ShapeError, node, f"{_where(i, t, want)} has shape {list(shape)}; its rank "
                   f"must be {' or '.join(map(str, want.ranks))}")
    if t.is_const and want.dtypes <= INDEX and t.data.size:
        lo, hi = int(t.data.min()), int(t.data.max())
        if lo < INT32_MIN or hi > INT32_MAX:
            raise fail(ShapeError, node, f"{_where(i, t, want)} holds "
                       f"{lo if lo < INT32_MIN else hi}, outside the int32 range TFLite's "
                       "index operands use")


def _where(i: int, t, want: In) -> str:
    """How _check_input's messages name the input (made for a message only)."""
    return f"input {i} ({quoted(t.name)}, {want.what})"


def _check_group(node, attr: str, members) -> None:
    """Inputs typed by one attribute share its dtype (and the attribute's, if present)."""
    declared = None
    v = _check_attr(node, _type_attr(attr))  # (None when the node has no such attribute)
    if v is not None:
        declared = dtype_value(node, attr, v)
    first_i, first = members[0]
    want = declared if declared is not None else first.dtype
    for i, t in members:
        if t.dtype != want:
            other = f"attribute {attr}={dtype_name(declared)}" if declared is not None else \
                f"input {first_i} ({quoted(first.name)}) is {dtype_name(first.dtype)}"
            raise fail(DTypeError, node, f"input {i} ({quoted(t.name)}) is "
                       f"{dtype_name(t.dtype)} but {other}; {STRUCTURE}")


@functools.lru_cache(maxsize=None)
def _type_attr(name: str) -> Attr:
    """Attr(name, "type"), made once per name (a check per node: 100,000 of them)."""
    return Attr(name, "type")


def dtype_name(dt) -> str:
    dt = np.dtype(dt)
    return "string" if dt == object else dt.name


def dtype_names(dts) -> str:
    named = _SET_NAMES.get(frozenset(dts))
    return named or "/".join(sorted(dtype_name(d) for d in dts))


_SET_NAMES = {REAL: "a float or integer type", FLOAT: "float16/float32/float64",
              ANY: "a float, integer or bool type"}


def _short(values: list) -> str:
    return str(values) if len(values) <= 8 else f"[{', '.join(map(str, values[:8]))}, ...]"
