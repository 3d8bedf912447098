"""Placeholders bound to constants: `--set NAME=VALUE` (`convert(..., set_values=...)`).

A TF1 training graph feeds its mode at run time: `is_training` (bool) switching batch norm
and dropout through tf.cond, `keep_prob` (float) scaling tf.nn.dropout, sometimes an int
`mode` or `batch_size`. Binding such a placeholder turns its node into a Const of the value
before anything else reads the graph, so the rest of the conversion sees a constant: the
conds it decides fold to their taken branch (the lowering inlines an If / a TF1 cond whose
predicate is constant; the other branch, with its RandomUniform, is never lowered), and
dropout's mask compares noise with a constant rate (lower/random.py).

Values (`parse_value`): true / false, integers, floats, and arrays written as nested lists
(`[1, 2, 3]`, `[[0.5, 1], [2, 3]]`). `bind_placeholders` checks each against its
placeholder: the name (one line listing close placeholder names when it is not one), the
dtype (bool takes true/false or 1/0, an integer type integers in its range, a float type
numbers) and the declared shape (unknown dimensions match any size; a scalar placeholder
takes a scalar).
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Mapping

import numpy as np

from edgelite.errors import DTypeError, GraphError, ShapeError
from edgelite.names import quoted, shown
from .graphdef import parse_ref
from .tf_tensor import dtype_name, numpy_dtype, shape_from_proto, to_const

PLACEHOLDER_OPS = ("Placeholder", "PlaceholderWithDefault", "PlaceholderV2")
MAX_VALUE_CHARS = 1 << 20   # a --set value longer than this is not typed by hand
_WORDS = re.compile(r"\b(true|false)\b", re.IGNORECASE)


def parse_set(text: str) -> tuple[str, np.ndarray]:
    """'NAME=VALUE' (one --set flag) -> (name, value)."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise GraphError(f"--set {quoted(shown(text, 60))}: expected NAME=VALUE, e.g. "
                         "is_training=false or keep_prob=1.0")
    return name.strip(), parse_value(value, name.strip())


def parse_value(text: str, name: str = "") -> np.ndarray:
    """true / false / a number / a nested list of them -> a numpy array (bool, int64 or
    float64 until bind_placeholders gives it the placeholder's dtype)."""
    what = f"--set {quoted(name)}" if name else "--set"
    text = text.strip()
    if len(text) > MAX_VALUE_CHARS:
        raise GraphError(f"{what}: the value is longer than {MAX_VALUE_CHARS} characters")
    try:
        value = ast.literal_eval(_WORDS.sub(lambda m: m.group(1).capitalize(), text))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        value = None
    try:
        arr = None if value is None or not _numeric(value) else np.array(value)
    except ValueError:  # a ragged list
        arr = None
    if arr is None or arr.dtype.kind not in "biuf":
        raise GraphError(f"{what}: {quoted(shown(text, 60))} is not a value --set takes: "
                         "true/false, a number, or a list of them like [1, 2, 3]")
    return arr


def _numeric(value) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_numeric(v) for v in value)
    return isinstance(value, (bool, int, float))


def bind_placeholders(gd, values: Mapping[str, object]) -> None:
    """Make each named placeholder of `gd` (a GraphDef, changed in place) a Const holding
    its value, checked against the placeholder's dtype and shape."""
    if not values:
        return
    nodes = {n.name: n for n in gd.node}
    for name, value in values.items():
        ref = parse_ref(name)
        node = nodes.get(ref.node) if ref.index == 0 else None
        if node is None or node.op not in PLACEHOLDER_OPS:
            raise GraphError(_not_a_placeholder(name, node, gd))
        to_const(node, constant_for(node, value))


def constant_for(node, value) -> np.ndarray:
    """`value` as the placeholder `node` declares it: its dtype and shape (checked)."""
    what = f"--set {quoted(node.name)}"
    if isinstance(value, str):  # as typed on the command line
        arr = parse_value(value, node.name)
    else:
        try:
            arr = np.array(value)
        except ValueError:  # a ragged list
            raise GraphError(f"{what}: the value is not an array of numbers") from None
    if "dtype" not in node.attr:
        raise GraphError(f"{what}: the placeholder declares no dtype; the GraphDef is "
                         "malformed")
    dtype = numpy_dtype(node.attr["dtype"].type, f"{what}: the placeholder")
    arr = _cast(arr, dtype, what, dtype_name(node.attr["dtype"].type))
    if "shape" in node.attr:
        declared = shape_from_proto(node.attr["shape"].shape, what)
        if declared is not None and (len(declared) != arr.ndim or any(
                d >= 0 and d != n for d, n in zip(declared, arr.shape))):
            raise ShapeError(f"{what}: the placeholder has shape {_dims(declared)}, the value "
                             f"{_dims(arr.shape)}")
    return arr


def _cast(arr: np.ndarray, dtype: np.dtype, what: str, tf_name: str) -> np.ndarray:
    kind = arr.dtype.kind
    if kind not in "biuf":
        raise DTypeError(f"{what}: the value is not numeric ({arr.dtype})")
    if dtype == np.bool_:
        if kind == "b" or (kind in "iu" and np.isin(arr, (0, 1)).all()):
            return arr.astype(np.bool_)
        raise DTypeError(f"{what}: the placeholder is bool; give true/false (or 1/0)")
    if dtype.kind in "iu":
        if kind not in "iu":
            raise DTypeError(f"{what}: the placeholder is {tf_name}; give an integer")
        info = np.iinfo(dtype)
        if arr.size and (arr.min() < info.min or arr.max() > info.max):
            raise DTypeError(f"{what}: the value does not fit the placeholder's {tf_name} "
                             f"({info.min} to {info.max})")
        return arr.astype(dtype)
    if dtype.kind == "f":
        if kind == "b":
            raise DTypeError(f"{what}: the placeholder is {tf_name}; give a number")
        return arr.astype(dtype)
    raise DTypeError(f"{what}: the placeholder is {tf_name}; --set binds bool, integer and "
                     "float placeholders")


def _dims(shape) -> str:
    return "[" + ", ".join("?" if d < 0 else str(d) for d in shape) + "]" if shape else \
        "[] (a scalar)"


def _not_a_placeholder(name: str, node, gd) -> str:
    if node is not None:
        return (f"--set {quoted(name)}: the node is a {shown(node.op)}, not a placeholder; "
                "--set binds Placeholder / PlaceholderWithDefault nodes")
    names = [n.name for n in gd.node if n.op in PLACEHOLDER_OPS]
    close = difflib.get_close_matches(parse_ref(name).node, names, n=3, cutoff=0.5)
    if close:
        hint = f"did you mean {', '.join(quoted(n) for n in close)}?"
    elif names:
        more = f", ... ({len(names)} in all)" if len(names) > 8 else ""
        hint = f"its placeholders: {', '.join(quoted(n) for n in names[:8])}{more}"
    else:
        hint = "the graph has no placeholders"
    return f"--set {quoted(name)}: the graph has no placeholder of that name; {hint}"
