"""TensorFlow DataType / TensorProto / TensorShapeProto -> numpy, without TensorFlow.

A TensorProto stores its values either packed in `tensor_content` (raw little-endian bytes)
or in the typed repeated field for its dtype (`float_val`, `int_val`, ...). A typed field
shorter than the shape is padded by repeating its last value -- TensorFlow's own rule
(tensor_util.MakeNdarray), which is how a scalar fill like `zeros([1024])` is stored in 4 bytes.
"""

from __future__ import annotations

import numpy as np

from ..interpreter.errors import ModelFormatError, UnsupportedOpError

# A GraphDef constant bigger than this is refused before anything is allocated.
MAX_CONST_BYTES = 1 << 31

# DataType enum value -> (numpy dtype, TensorProto typed field). Values from types.proto.
_DTYPES: dict[int, tuple[np.dtype, str]] = {
    1: (np.dtype(np.float32), "float_val"),
    2: (np.dtype(np.float64), "double_val"),
    3: (np.dtype(np.int32), "int_val"),
    4: (np.dtype(np.uint8), "int_val"),
    5: (np.dtype(np.int16), "int_val"),
    6: (np.dtype(np.int8), "int_val"),
    7: (np.dtype(object), "string_val"),
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


def shape_from_proto(shape_proto) -> tuple[int, ...] | None:
    """TensorShapeProto -> tuple with -1 for unknown dims; None for unknown rank."""
    if shape_proto.unknown_rank:
        return None
    return tuple(int(d.size) for d in shape_proto.dim)


def tensor_to_numpy(proto, where: str) -> np.ndarray:
    """Decode a TensorProto into a read-only numpy array. `where` names the node for errors."""
    dtype = numpy_dtype(proto.dtype, where)
    shape = shape_from_proto(proto.tensor_shape)
    if shape is None or any(d < 0 for d in shape):
        raise ModelFormatError(f"{where}: constant tensor has an unknown shape {shape}")
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if count * max(dtype.itemsize, 1) > MAX_CONST_BYTES:
        raise ModelFormatError(f"{where}: constant of shape {list(shape)} is larger than "
                               f"{MAX_CONST_BYTES >> 20} MiB; refusing to allocate it")
    if dtype == object:
        values = list(proto.string_val)
        return _fill(np.array(values, dtype=object), count, where).reshape(shape)
    if proto.tensor_content:
        raw = proto.tensor_content
        if len(raw) != count * dtype.itemsize:
            raise ModelFormatError(
                f"{where}: tensor_content holds {len(raw)} bytes but shape {list(shape)} "
                f"of {dtype.name} needs {count * dtype.itemsize}; the file is corrupt")
        return np.frombuffer(raw, dtype=dtype.newbyteorder("<")).astype(dtype).reshape(shape)
    field = _DTYPES[proto.dtype % 100 if proto.dtype > 100 else proto.dtype][1]
    values = np.asarray(getattr(proto, field))
    if field == "half_val":  # float16 bit patterns stored in int32s
        values = values.astype(np.uint16).view(np.float16)
    return _fill(values.astype(dtype), count, where).reshape(shape)


def _fill(values: np.ndarray, count: int, where: str) -> np.ndarray:
    if values.size == count:
        return values
    if values.size == 0:
        return np.zeros(count, dtype=values.dtype) if values.dtype != object else \
            np.array([b""] * count, dtype=object)
    if values.size > count:
        raise ModelFormatError(f"{where}: constant has {values.size} values for {count} elements")
    out = np.empty(count, dtype=values.dtype)
    out[:values.size] = values
    out[values.size:] = values[-1]
    return out
