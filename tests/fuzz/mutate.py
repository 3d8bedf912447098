"""Deterministic mutants of the committed sample models, for the fuzz harness.

A case is (kind, seed); `build(case)` always makes the same bytes from it:
  tflite    byte mutants of a committed .tflite: bit flips, byte overwrites, inserted or
            deleted runs, truncation, copied chunks, and extreme int32/int64 values written
            at aligned offsets (where flatbuffer offsets, vector lengths and shape values
            live);
  graphdef  structured mutants of a committed GraphDef: node arity (dropped, duplicated,
            added, swapped, dangling inputs), op types, dtypes, attribute values (huge /
            negative / zero ints, NaN floats, wrong kinds, deleted or added attributes),
            shapes of Consts and Placeholders, Const contents, removed / renamed nodes.
Each case applies 1 to 3 mutations, and returns a description of each for reproducers.
"""

from __future__ import annotations

import random
import struct
from dataclasses import dataclass
from pathlib import Path

from edgelite.schema import graph_pb2
from tests.conftest import sample_files

MODELS = Path(__file__).resolve().parents[2] / "models"
# Small files only: the harness runs hundreds of cases. (mobilenet_v2_digits.pb, 1.8 MB, takes
# seconds per conversion.)
MAX_MODEL_BYTES = 100_000
KINDS = ("tflite", "graphdef")

INT32_EXTREMES = (0, 1, -1, 2, 255, 256, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 1 << 24, 0x7FFFFFFF,
                  -0x80000000, -2)
INT_ATTR_VALUES = (0, -1, 1, 2, 3, 7, 1000, -2**31, 2**31 - 1, 2**31, 2**40, 2**62, -2**63,
                   2**63 - 1)
FLOAT_VALUES = (float("nan"), float("inf"), float("-inf"), -1.0, 0.0, 1e38, -1e38, 1e-45, 2.5)
STRING_VALUES = (b"", b"SAME", b"VALID", b"EXPLICIT", b"NCHW", b"NHWC", b"REFLECT",
                 b"SYMMETRIC", b"bogus", b"\x00\xff\n")
# TF DataType values: the supported ones, string, complex, bfloat16, resource, variant, _REF
# variants, and numbers that are no DataType at all.
DTYPE_VALUES = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 14, 17, 19, 20, 21, 22, 23, 101, 103, 0, 99, 1000)
DIM_VALUES = (-1, 0, 1, 2, 3, 7, 2**20, 2**31, 2**40, -5)
OP_TYPES_EXTRA = ("Erf", "NoOp", "Placeholder", "Const", "Identity", "Switch", "Merge", "")
ADDED_ATTRS = ("strides", "ksize", "dilations", "explicit_paddings", "padding", "N", "num",
               "axis", "num_split", "block_size", "squeeze_dims", "T", "dtype", "data_format",
               "epsilon", "is_training", "value", "shape", "_output_shapes", "out_type")


@dataclass(frozen=True)
class Case:
    kind: str
    seed: int

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.seed}"


def model_files(kind: str) -> list[Path]:
    pattern = "*.tflite" if kind == "tflite" else "*.pb"
    return [p for p in sample_files(pattern, MODELS) if p.stat().st_size <= MAX_MODEL_BYTES]


def build(case: Case) -> tuple[bytes, list[str]]:
    """The mutant of `case` and one line per mutation applied."""
    rng = random.Random(case.label)  # str seeds hash deterministically (sha512)
    path = rng.choice(model_files(case.kind))
    data = path.read_bytes()
    notes = [path.name]
    mutate = _mutate_tflite if case.kind == "tflite" else _mutate_graphdef
    return mutate(rng, data, notes), notes


# -- .tflite: bytes ---------------------------------------------------------------------------
def _mutate_tflite(rng: random.Random, data: bytes, notes: list[str]) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        op = rng.choice(_BYTE_MUTATIONS)
        notes.append((op if buf else _insert)(rng, buf))  # an emptied file can only grow
    return bytes(buf)


def _flip(rng, buf) -> str:
    i = rng.randrange(len(buf))
    bit = rng.randrange(8)
    buf[i] ^= 1 << bit
    return f"flip bit {bit} of byte {i}"


def _overwrite(rng, buf) -> str:
    i = rng.randrange(len(buf))
    buf[i] = rng.randrange(256)
    return f"byte {i} = {buf[i]}"


def _insert(rng, buf) -> str:
    i = rng.randrange(len(buf) + 1)
    n = rng.choice((1, 4, 8, 64))
    buf[i:i] = bytes(rng.randrange(256) for _ in range(n))
    return f"insert {n} random bytes at {i}"


def _delete(rng, buf) -> str:
    i = rng.randrange(len(buf))
    n = rng.choice((1, 4, 8, 64))
    del buf[i:i + n]
    return f"delete {n} bytes at {i}"


def _truncate(rng, buf) -> str:
    n = rng.randrange(len(buf))
    del buf[n:]
    return f"truncate to {n} bytes"


def _copy_chunk(rng, buf) -> str:
    src, dst = rng.randrange(len(buf)), rng.randrange(len(buf))
    n = rng.choice((4, 16, 64))
    chunk = buf[src:src + n]
    buf[dst:dst + len(chunk)] = chunk
    return f"copy {len(chunk)} bytes from {src} to {dst}"


def _extreme_int(rng, buf) -> str:
    if len(buf) < 8:
        return _overwrite(rng, buf)
    wide = rng.random() < 0.25
    size = 8 if wide else 4
    i = rng.randrange(0, len(buf) - size + 1, 4)
    if wide:
        value = rng.choice((2**63 - 1, -2**63, 2**32, -1))
        buf[i:i + 8] = struct.pack("<q", value)
    else:
        value = rng.choice(INT32_EXTREMES)
        buf[i:i + 4] = struct.pack("<i", value)
    return f"int{size * 8} {value} at {i}"


# Weighted towards in-place changes: an insertion, deletion or truncation shifts every offset
# after it, which the reader's bounds checks mostly catch at once.
_BYTE_MUTATIONS = (_flip,) * 6 + (_overwrite,) * 4 + (_extreme_int,) * 8 + (_copy_chunk,) * 2 \
    + (_insert, _delete, _truncate)


# -- GraphDef: structure ----------------------------------------------------------------------
def _mutate_graphdef(rng: random.Random, data: bytes, notes: list[str]) -> bytes:
    gd = graph_pb2.GraphDef()
    gd.ParseFromString(data)
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):  # few at a time: each should get deep
        op = rng.choice(_GRAPH_MUTATIONS)
        ops = [n for n in gd.node if n.op not in _PLUMBING]  # anew: a node may be removed
        node = rng.choice(ops if ops and rng.random() < 0.8 else gd.node)
        notes.append(f"node {node.name!r} ({node.op}): {op(rng, gd, node)}")
    return gd.SerializeToString()


# Half the nodes of a frozen graph are Consts and Identity reads of them; mutations mostly
# pick among the others.
_PLUMBING = frozenset({"Const", "Identity", "NoOp"})


def _drop_input(rng, gd, node) -> str:
    if not node.input:
        return _add_input(rng, gd, node)
    i = rng.randrange(len(node.input))
    del node.input[i]
    return f"drop input {i}"


def _dup_input(rng, gd, node) -> str:
    if not node.input:
        return _add_input(rng, gd, node)
    ref = rng.choice(node.input)
    node.input.insert(rng.randrange(len(node.input) + 1), ref)
    return f"duplicate input {ref!r}"


def _add_input(rng, gd, node) -> str:
    ref = rng.choice(gd.node).name
    if rng.random() < 0.3:
        ref += f":{rng.choice((1, 2, 5))}"
    node.input.append(ref)
    return f"add input {ref!r}"


def _swap_inputs(rng, gd, node) -> str:
    if len(node.input) < 2:
        return _dup_input(rng, gd, node)
    i, j = rng.sample(range(len(node.input)), 2)
    node.input[i], node.input[j] = node.input[j], node.input[i]
    return f"swap inputs {i} and {j}"


def _output_index(rng, gd, node) -> str:
    if not node.input:
        return _add_input(rng, gd, node)
    i = rng.randrange(len(node.input))
    base = node.input[i].lstrip("^").rsplit(":", 1)[0]
    node.input[i] = f"{base}:{rng.choice((1, 2, 9, 99999))}"
    return f"input {i} -> {node.input[i]!r}"


def _change_op(rng, gd, node) -> str:
    from edgelite.converter.lower import REGISTRY
    choices = sorted(REGISTRY) + sorted({n.op for n in gd.node}) + list(OP_TYPES_EXTRA) * (
        rng.random() < 0.2)
    node.op = rng.choice(choices)
    return f"op -> {node.op!r}"


def _type_attrs(node) -> list[str]:
    return [k for k, v in node.attr.items() if v.WhichOneof("value") == "type"]


def _change_dtype(rng, gd, node) -> str:
    keys = _type_attrs(node)
    key = rng.choice(keys) if keys else rng.choice(("T", "dtype"))
    node.attr[key].type = rng.choice(DTYPE_VALUES)
    return f"attr {key} type -> {node.attr[key].type}"


def _attrs_of(node, kind: str) -> list[str]:
    return sorted(k for k, v in node.attr.items() if v.WhichOneof("value") == kind)


def _attr_value(rng, gd, node) -> str:
    """A new value of the attribute's own kind."""
    keys = sorted(k for k in node.attr if k != "value")
    if not keys:
        return _add_attr(rng, gd, node)
    key = rng.choice(keys)
    a = node.attr[key]
    kind = a.WhichOneof("value")
    if kind == "i":
        a.i = rng.choice(INT_ATTR_VALUES)
        return f"attr {key} = {a.i}"
    if kind == "f":
        a.f = rng.choice(FLOAT_VALUES)
        return f"attr {key} = {a.f}"
    if kind == "s":
        a.s = rng.choice(STRING_VALUES)
        return f"attr {key} = {a.s!r}"
    if kind == "b":
        a.b = not a.b
        return f"attr {key} = {a.b}"
    if kind == "list":
        return f"attr {key}: {_mutate_list(rng, a.list)}"
    if kind == "shape":
        return f"attr {key}: {_mutate_shape(rng, a.shape)}"
    return _change_dtype(rng, gd, node)


def _mutate_list(rng, lst) -> str:
    ints = list(lst.i)
    choice = rng.randrange(4)
    if choice == 0 and ints:
        ints[rng.randrange(len(ints))] = rng.choice(INT_ATTR_VALUES)
    elif choice == 1:
        ints.append(rng.choice(INT_ATTR_VALUES))
    elif choice == 2 and ints:
        ints.pop(rng.randrange(len(ints)))
    else:
        ints = [rng.choice(INT_ATTR_VALUES) for _ in range(rng.choice((0, 1, 4, 8)))]
    del lst.i[:]
    lst.i.extend(ints)
    return f"list.i = {ints}"


def _mutate_shape(rng, shape) -> str:
    choice = rng.randrange(4)
    if choice == 0 or not shape.dim:
        shape.dim.add(size=rng.choice(DIM_VALUES))
    elif choice == 1:
        del shape.dim[rng.randrange(len(shape.dim))]
    elif choice == 2:
        shape.dim[rng.randrange(len(shape.dim))].size = rng.choice(DIM_VALUES)
    else:
        shape.unknown_rank = not shape.unknown_rank
    return "shape = " + ("?" if shape.unknown_rank else str([d.size for d in shape.dim]))


def _attr_kind(rng, gd, node) -> str:
    """Replace an attribute's value with one of another kind."""
    keys = sorted(node.attr) or ["T"]
    key = rng.choice(keys)
    a = node.attr[key]
    a.Clear()
    kind = rng.choice(("i", "f", "b", "s", "type", "list", "shape", "tensor"))
    if kind == "i":
        a.i = rng.choice(INT_ATTR_VALUES)
    elif kind == "f":
        a.f = rng.choice(FLOAT_VALUES)
    elif kind == "b":
        a.b = True
    elif kind == "s":
        a.s = rng.choice(STRING_VALUES)
    elif kind == "type":
        a.type = rng.choice(DTYPE_VALUES)
    elif kind == "list":
        a.list.i.extend([1, 2])
    elif kind == "shape":
        a.shape.dim.add(size=rng.choice(DIM_VALUES))
    else:
        a.tensor.dtype = 1
    return f"attr {key} -> kind {kind}"


def _delete_attr(rng, gd, node) -> str:
    if not node.attr:
        return _add_attr(rng, gd, node)
    key = rng.choice(sorted(node.attr))
    del node.attr[key]
    return f"delete attr {key}"


def _add_attr(rng, gd, node) -> str:
    key = rng.choice(ADDED_ATTRS)
    node.attr[key].Clear()
    a = node.attr[key]
    if key in ("strides", "ksize", "dilations", "explicit_paddings", "squeeze_dims"):
        a.list.i.extend(rng.choice(INT_ATTR_VALUES) for _ in range(rng.choice((1, 4, 8))))
    elif key in ("padding", "data_format"):
        a.s = rng.choice(STRING_VALUES)
    elif key in ("T", "dtype", "out_type"):
        a.type = rng.choice(DTYPE_VALUES)
    elif key == "epsilon":
        a.f = rng.choice(FLOAT_VALUES)
    elif key == "is_training":
        a.b = True
    elif key == "shape":
        _mutate_shape(rng, a.shape)
    elif key == "_output_shapes":
        for _ in range(rng.choice((1, 3))):
            _mutate_shape(rng, a.list.shape.add())
    elif key == "value":
        a.tensor.dtype = rng.choice(DTYPE_VALUES)
    else:
        a.i = rng.choice(INT_ATTR_VALUES)
    return f"add attr {key}"


def _tensor(node):
    if "value" in node.attr and node.attr["value"].WhichOneof("value") == "tensor":
        return node.attr["value"].tensor
    return None


def _const_node(rng, gd, node):
    """`node` if it is a Const, else a random Const of the graph (None if there is none)."""
    if _tensor(node) is not None:
        return node
    consts = [n for n in gd.node if _tensor(n) is not None]
    return rng.choice(consts) if consts else None


def _const_shape(rng, gd, node) -> str:
    c = _const_node(rng, gd, node)
    if c is None:
        return _attr_value(rng, gd, node)
    return f"Const {c.name!r} tensor {_mutate_shape(rng, _tensor(c).tensor_shape)}"


def _const_content(rng, gd, node) -> str:
    c = _const_node(rng, gd, node)
    if c is None:
        return _attr_value(rng, gd, node)
    t = _tensor(c)
    raw = bytearray(t.tensor_content)
    choice = rng.randrange(5)
    if choice == 0 and raw:
        for _ in range(max(1, len(raw) // 16)):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        what = "random bytes"
    elif choice == 1 and len(raw) >= 4:
        pattern = rng.choice((b"\x00\x00\xc0\x7f", b"\x00\x00\x80\x7f", b"\xff\xff\xff\x7f",
                              b"\x00\x00\x00\x80"))
        raw = bytearray(pattern * (len(raw) // 4) + raw[len(raw) // 4 * 4:])
        what = f"every 4 bytes = {pattern.hex()}"
    elif choice == 2:
        raw = raw[:rng.randrange(len(raw) + 1)]
        what = f"truncated to {len(raw)} bytes"
    elif choice == 3:
        raw += bytes(rng.choice((1, 4, 64)))
        what = f"extended to {len(raw)} bytes"
    else:
        t.ClearField("tensor_content")
        t.int_val.extend([rng.choice(INT32_EXTREMES)] * rng.choice((1, 3)))
        t.float_val.append(rng.choice(FLOAT_VALUES))
        return f"Const {c.name!r}: typed fields instead of tensor_content"
    t.tensor_content = bytes(raw)
    return f"Const {c.name!r}: content {what}"


def _const_dtype(rng, gd, node) -> str:
    c = _const_node(rng, gd, node)
    if c is None:
        return _change_dtype(rng, gd, node)
    _tensor(c).dtype = rng.choice(DTYPE_VALUES)
    return f"Const {c.name!r}: tensor dtype -> {_tensor(c).dtype}"


def _placeholder_shape(rng, gd, node) -> str:
    holders = [n for n in gd.node if n.op == "Placeholder"]
    if not holders:
        return _const_shape(rng, gd, node)
    p = rng.choice(holders)
    return f"Placeholder {p.name!r} {_mutate_shape(rng, p.attr['shape'].shape)}"


def _remove_node(rng, gd, node) -> str:
    gd.node.remove(node)
    return "removed"


def _rename_node(rng, gd, node) -> str:
    other = rng.choice(gd.node)
    node.name = other.name if rng.random() < 0.5 else node.name + "\n\x1b[31m"
    return f"renamed to {node.name!r}"


_GRAPH_MUTATIONS = ((_attr_value,) * 6 + (_const_content,) * 4 + (_const_shape,) * 3
                    + (_placeholder_shape,) * 2 + (_change_dtype,) * 2 + (_change_op,) * 2
                    + (_add_attr,) * 2
                    + (_drop_input, _dup_input, _add_input, _swap_inputs, _output_index,
                       _attr_kind, _delete_attr, _const_dtype, _remove_node, _rename_node))
