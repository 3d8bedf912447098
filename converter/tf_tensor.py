"""TensorFlow DataType / TensorProto / TensorShapeProto -> numpy, without TensorFlow.

A TensorProto stores its values either packed in `tensor_content` (raw little-endian bytes)
or in the typed repeated field for its dtype (`float_val`, `int_val`, ...). A typed field
shorter than the shape is padded by repeating its last value -- TensorFlow's own rule
(tensor_util.MakeNdarray), which is how a scalar fill like `zeros([1024])` is stored in 4 bytes.
"""

from __future__ import annotations

import math
import sys
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

from edgelite.errors import GraphError, ModelFormatError, UnsupportedOpError
from ..schema import graph_pb2 as pb

# The largest .tflite a flatbuffer can address is 2 GiB (32-bit offsets; flatbuffers' Builder
# refuses to grow past it), so no conversion needs more constant bytes than that. Every
# constant decoded while a ConstBudget is active (convert_detailed opens one per conversion)
# is charged to it before its array is allocated -- tensor_content and fills from a short
# typed field alike -- so a tiny file that declares huge fills is refused, not allocated.
MAX_CONST_BYTES = 2**31 - 1

# numpy's limit on ndarray dimensions (NPY_MAXDIMS: 64 since numpy 2.0, 32 before).
MAX_RANK = 64 if int(np.__version__.split(".")[0]) >= 2 else 32
# TFLite stores shapes as int32 (schema.fbs: Tensor.shape:[int]).
INT32_MAX = 2**31 - 1


@dataclass
class ConstBudget:
    """Constant bytes one conversion may materialise, charged before each allocation."""

    limit: int = MAX_CONST_BYTES
    used: int = 0

    def charge(self, nbytes: int, what) -> None:
        """Count nbytes more; `what` (a str, or a function making it) starts the refusal."""
        if self.used + nbytes > self.limit:
            after = f" after {_size(self.used)} of other constants" if self.used else ""
            what = what() if callable(what) else what
            raise ModelFormatError(
                f"{what} needs {_size(nbytes)}{after}, over the {_size(self.limit)} limit on "
                "a conversion's constants (a .tflite file cannot exceed 2 GiB); refusing to "
                "allocate it")
        self.used += nbytes


_BUDGET: ContextVar[ConstBudget | None] = ContextVar("edgelite_const_budget", default=None)


@contextmanager
def const_budget(limit: int = MAX_CONST_BYTES):
    """Charge every constant decoded inside the block to one ConstBudget (yielded)."""
    budget = ConstBudget(limit)
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def _size(nbytes: int) -> str:
    """'2.6 GB (2600000000 bytes)' -- decimal units, exact count."""
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit} ({nbytes} bytes)"
    return f"{nbytes} bytes"


# DataType enum value -> (numpy dtype, TensorProto typed field). Values from types.proto.
_DTYPES: dict[int, tuple[np.dtype, str]] = {
    1: (np.dtype(np.float32), "float_val"),
    2: (np.dtype(np.float64), "double_val"),
    3: (np.dtype(np.int32), "int_val"),
    4: (np.dtype(np.uint8), "int_val"),
    5: (np.dtype(np.int16), "int_val"),
    6: (np.dtype(np.int8), "int_val"),
    7: (np.dtype(object), "string_val"),
    8: (np.dtype(np.complex64), "scomplex_val"),  # (re, im) float pairs
    9: (np.dtype(np.int64), "int64_val"),
    10: (np.dtype(np.bool_), "bool_val"),
    17: (np.dtype(np.uint16), "int_val"),
    19: (np.dtype(np.float16), "half_val"),
    22: (np.dtype(np.uint32), "uint32_val"),
    23: (np.dtype(np.uint64), "uint64_val"),
}
_DTYPE_NAMES = {1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16", 6: "int8",
                7: "string", 8: "complex64", 9: "int64", 10: "bool", 14: "bfloat16",
                17: "uint16", 19: "float16", 20: "resource", 21: "variant", 22: "uint32",
                23: "uint64"}


def dtype_name(dt: int) -> str:
    return _DTYPE_NAMES.get(dt % 100, f"DataType({dt})")


def numpy_dtype(dt: int, where: str) -> np.dtype:
    """DataType enum -> numpy dtype; `_REF` variants (100 + t) map like their base type."""
    entry = _DTYPES.get(dt % 100 if dt > 100 else dt)
    if entry is None:
        raise UnsupportedOpError(f"{where}: TensorFlow dtype {dtype_name(dt)} is not supported")
    return entry[0]


def shape_from_proto(shape_proto, where: str = "") -> tuple[int, ...] | None:
    """TensorShapeProto -> tuple with -1 for unknown dims; None for unknown rank.

    The one place GraphDef shapes are checked: at most MAX_RANK dims, each -1 (unknown) or
    more. (Whether a dim fits TFLite's int32 shapes is checked where a shape is written:
    export.py.) `where` (e.g. "node 'x' (Placeholder)") starts the message.
    """
    if shape_proto.unknown_rank:
        return None
    dims = shape_proto.dim
    rank = len(dims)
    if rank > MAX_RANK:
        raise ModelFormatError(f"{_prefix(where)}shape has {rank} dimensions; at most "
                               f"{MAX_RANK} are supported")
    shape = tuple([d.size for d in dims])  # (an int64 field: Python ints already)
    if shape and min(shape) < -1:
        prefix = _prefix(where)
        raise ModelFormatError(f"{prefix}shape {_shown_dims(shape)} has a dimension below -1 "
                               "(-1 means unknown); the GraphDef is malformed")
    return shape


def _prefix(where: str) -> str:
    return f"{where}: " if where else ""


def _shown_dims(shape: tuple[int, ...]) -> str:
    dims = ", ".join(map(str, shape[:8]))
    return f"[{dims}{', ...' if len(shape) > 8 else ''}]"


def num_elements(shape) -> int:
    """Element count as a Python int (no int64 wrap-around, unlike np.prod)."""
    return math.prod(int(d) for d in shape)


def tensor_to_numpy(proto, where: str) -> np.ndarray:
    """Decode a TensorProto into a numpy array. `where` names the node for errors.

    The size the shape declares is checked before anything is allocated: against the bytes
    the proto holds (tensor_content must match exactly; a typed field may be shorter and is
    then filled with its last value, as TF's MakeNdarray does) and against the active
    ConstBudget (or MAX_CONST_BYTES for this constant alone). Fills are materialised: a
    .tflite stores every element, so export needs the full array anyway, and a zero-stride
    view would only postpone the allocation and hand read-only arrays to every pass.
    """
    enum = proto.dtype  # (each field read once: protobuf access is slow)
    dtype = numpy_dtype(enum, where)
    shape = shape_from_proto(proto.tensor_shape, where)
    if shape is None or shape and min(shape) < 0:
        raise ModelFormatError(f"{where}: constant tensor has an unknown shape "
                               f"{None if shape is None else _shown_dims(shape)}")
    count = math.prod(shape)  # (num_elements: the dims are Python ints already)
    nbytes = count * max(dtype.itemsize, 1)
    def what() -> str:  # (made for the message only: a graph may hold 100,000 constants)
        return f"{where}: constant of shape {_shown_dims(shape)} ({dtype_name(enum)})"
    budget = _BUDGET.get()
    if budget is None:
        budget = ConstBudget()  # no conversion-wide budget: this constant alone
    raw = proto.tensor_content
    if raw and dtype != object:
        if len(raw) != count * dtype.itemsize:
            raise ModelFormatError(
                f"{where}: tensor_content holds {len(raw)} bytes but shape "
                f"{_shown_dims(shape)} of {dtype.name} needs {count * dtype.itemsize}; the "
                "file is corrupt")
        budget.charge(nbytes, what)
        return _from_little_endian(raw, dtype).reshape(shape)
    if dtype == object:
        values = np.array(list(proto.string_val), dtype=object)
    else:
        field = _DTYPES[enum % 100 if enum > 100 else enum][1]
        values = np.asarray(getattr(proto, field))
        if field == "half_val":  # float16 bit patterns stored in int32s
            values = values.astype(np.uint16).view(np.float16)
        elif field == "scomplex_val":  # (re, im) pairs
            if values.size % 2:
                raise ModelFormatError(f"{where}: scomplex_val holds {values.size} floats; "
                                       "complex values come in (re, im) pairs")
            values = values.astype(np.float32).view(np.complex64)
    if values.size > count:
        raise ModelFormatError(f"{where}: constant has {values.size} values for {count} "
                               "elements")
    budget.charge(nbytes, what)
    return _fill(values.astype(dtype), count).reshape(shape)


def _from_little_endian(raw: bytes, dtype: np.dtype) -> np.ndarray:
    """A writable native-order copy of little-endian bytes. (On a little-endian machine
    that is the bytes copied: converting '<' to native costs more than the copy for the
    small constants most graphs hold.)"""
    if _LITTLE_ENDIAN:
        return np.frombuffer(raw, dtype=dtype).copy()
    return np.frombuffer(raw, dtype=dtype.newbyteorder("<")).astype(dtype)


_LITTLE_ENDIAN = sys.byteorder == "little"


def _fill(values: np.ndarray, count: int) -> np.ndarray:
    """`values` padded to `count` elements with its last value (zeros if it is empty)."""
    if values.size == count:
        return values
    out = np.empty(count, dtype=values.dtype)
    if values.size == 0:
        out[...] = b"" if values.dtype == object else 0
        return out
    out[:values.size] = values
    out[values.size:] = values[-1]
    return out


# -- numpy -> TensorProto ------------------------------------------------------------------------
# numpy dtype -> TF DataType (types.proto)
_ENUM = {np.dtype(np.float32): 1, np.dtype(np.float64): 2, np.dtype(np.int32): 3,
         np.dtype(np.uint8): 4, np.dtype(np.int16): 5, np.dtype(np.int8): 6,
         np.dtype(np.int64): 9, np.dtype(np.bool_): 10, np.dtype(np.uint16): 17,
         np.dtype(np.float16): 19, np.dtype(np.uint32): 22, np.dtype(np.uint64): 23}
STRING = 7


def tensor_proto(value: np.ndarray) -> pb.TensorProto:
    """A numpy array (or an object array of bytes: DT_STRING) as a TensorProto."""
    t = pb.TensorProto()
    for d in value.shape:
        t.tensor_shape.dim.add().size = int(d)
    if value.dtype == object:
        t.dtype = STRING
        t.string_val.extend(bytes(v) for v in value.ravel())
        return t
    if value.dtype not in _ENUM:
        raise GraphError(f"a value of dtype {value.dtype} cannot become a constant")
    t.dtype = _ENUM[value.dtype]
    t.tensor_content = np.ascontiguousarray(value, value.dtype.newbyteorder("<")).tobytes()
    return t


def to_const(node, value: np.ndarray) -> None:
    """Make `node` (in place) a Const holding `value`, keeping its name and device."""
    name, device = node.name, node.device
    node.Clear()
    node.name, node.op, node.device = name, "Const", device
    proto = tensor_proto(value)
    node.attr["dtype"].type = proto.dtype
    node.attr["value"].tensor.CopyFrom(proto)
