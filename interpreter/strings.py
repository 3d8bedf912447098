"""STRING tensors: TFLite's string buffer format, and numpy values for them.

A STRING tensor's value is held as an object array of ``bytes`` (outside the arena). In a
file, a constant STRING tensor's buffer is TFLite's packed form (string_util.h,
DynamicBuffer::WriteToBuffer): int32 count N, then N + 1 int32 offsets from the start of
the buffer, then the bytes; string i is ``buffer[offset[i]:offset[i + 1]]``. All little
endian.
"""

from __future__ import annotations

import numpy as np

from edgelite.errors import DTypeError, ModelFormatError


def decode(raw: np.ndarray, shape: tuple[int, ...], where: str) -> np.ndarray:
    """The object array of bytes a packed string buffer holds, checked against ``shape``
    (ModelFormatError naming ``where`` for a count or an offset out of place)."""
    data = raw.tobytes()
    if len(data) < 4:
        raise ModelFormatError(f"{where}: its string buffer holds {len(data)} bytes, too few "
                               "for the string count")
    count = int(np.frombuffer(data, "<i4", 1)[0])
    expected = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if count != expected or 4 * (count + 2) > len(data):
        raise ModelFormatError(f"{where}: its string buffer holds {count} strings in "
                               f"{len(data)} bytes, the shape {list(shape)} needs {expected}")
    offsets = np.frombuffer(data, "<i4", count + 1, 4).astype(np.int64)
    if offsets[0] != 4 * (count + 2) or offsets[-1] > len(data) or np.any(np.diff(offsets) < 0):
        raise ModelFormatError(f"{where}: its string buffer has offsets out of order or "
                               "outside the buffer")
    out = np.empty(count, dtype=object)
    for i in range(count):
        out[i] = data[offsets[i]:offsets[i + 1]]
    return out.reshape(shape)


def encode(values) -> bytes:
    """The packed buffer of ``values`` (str encoded UTF-8, or bytes), in C order."""
    items = [v.encode("utf-8") if isinstance(v, str) else bytes(v)
             for v in np.asarray(values, dtype=object).reshape(-1)]
    header = 4 * (len(items) + 2)
    offsets = np.cumsum([header] + [len(v) for v in items])
    return (np.array([len(items)], "<i4").tobytes() + offsets.astype("<i4").tobytes()
            + b"".join(items))


def as_strings(value: np.ndarray) -> np.ndarray:
    """str / bytes elements as an object array of bytes (str encoded UTF-8, as LiteRT). A
    0-d bytes array keeps all its bytes, trailing NULs too (LiteRT reads its buffer)."""
    if value.ndim == 0 and value.dtype.kind == "S":
        return np.array(value.tobytes(), dtype=object)
    out = np.empty(value.shape, dtype=object)
    for i, v in np.ndenumerate(value):
        if not isinstance(v, (bytes, str)):
            raise DTypeError(f"a STRING tensor takes str or bytes elements, got "
                             f"{type(v).__name__}")
        out[i] = v.encode("utf-8") if isinstance(v, str) else bytes(v)
    return out
