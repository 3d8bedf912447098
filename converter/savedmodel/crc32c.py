"""CRC-32C (Castagnoli), as TensorFlow's checkpoints use it (tensorflow/tsl/lib/hash/crc32c.h),
with numpy only -- fast enough for variable shards of hundreds of MB.

The byte-at-a-time table form (reflected polynomial 0x82F63B78) is linear over GF(2) in the
register and the data, so a long message is cut into K equal lanes that run side by side as
numpy vectors (each from register 0; leading zero bytes leave a zero register unchanged, so
the message is zero-padded at the front), and the lanes are chained with the linear map "feed
L zero bytes", a 32x32 bit matrix raised to the L-th power by squaring. The initial register
~0 enters the same way: crc(m) = ~(raw(m) ^ zeros_n(~0)).

TF stores checksums masked (crc32c.h Mask): rotate right by 15 bits, add 0xa282ead8.

Where google-crc32c is installed with its C extension (the hardware CRC instruction, over
100x faster than these lanes on large shards) `crc32c` uses it; the numpy form stays the
fallback, and tests check both give the same values.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

POLY = 0x82F63B78
MASK_DELTA = 0xA282EAD8
_M32 = 0xFFFFFFFF
LANE_BYTES = 256          # bytes per lane at least: below that the lanes' setup dominates


def _table() -> np.ndarray:
    t = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        t = np.where(t & 1, (t >> 1) ^ np.uint32(POLY), t >> 1).astype(np.uint32)
    return t


TABLE = _table()


# -- the register as a GF(2) vector: a 32x32 bit matrix is 32 column ints -----------------------
def _apply(matrix, v: int) -> int:
    out, i = 0, 0
    while v:
        if v & 1:
            out ^= matrix[i]
        v >>= 1
        i += 1
    return out


def _compose(a, b) -> list[int]:
    """a after b."""
    return [_apply(a, col) for col in b]


def _one_zero_byte() -> list[int]:
    t = [int(x) for x in TABLE]
    return [t[(1 << i) & 0xFF] ^ ((1 << i) >> 8) for i in range(32)]


@lru_cache(maxsize=64)
def _zeros(n: int) -> tuple[int, ...]:
    """The map 'feed n zero bytes' (matrix power by squaring)."""
    result = [1 << i for i in range(32)]
    step = _one_zero_byte()
    while n:
        if n & 1:
            result = _compose(step, result)
        n >>= 1
        if n:
            step = _compose(step, step)
    return tuple(result)


@lru_cache(maxsize=16)
def _shift_tables(length: int) -> tuple[np.ndarray, ...]:
    """Per byte of a register: the contribution of each of its 256 values after `length`
    zero bytes."""
    shift = _zeros(length)
    return tuple(np.array([_apply(shift, v << (8 * k)) for v in range(256)], np.uint32)
                 for k in range(4))


def _raw(data: np.ndarray) -> int:
    """The register after `data` from register 0 (no inversions)."""
    n = data.size
    lanes = max(1, min(65536, n // LANE_BYTES))
    length = -(-n // lanes)
    padded = np.zeros(lanes * length, np.uint8)
    padded[lanes * length - n:] = data
    rows = padded.reshape(lanes, length)
    reg = np.zeros(lanes, np.uint32)
    for col in range(length):
        reg = TABLE[(reg ^ rows[:, col]) & 0xFF] ^ (reg >> 8)
    if lanes == 1:
        return int(reg[0])
    parts = _shift_tables(length)
    out = 0
    for r in reg.tolist():
        out = (int(parts[0][out & 0xFF]) ^ int(parts[1][(out >> 8) & 0xFF])
               ^ int(parts[2][(out >> 16) & 0xFF]) ^ int(parts[3][out >> 24])) ^ r
    return out


def _accelerator():
    """google_crc32c when its C extension is there (its pure-Python fallback is slower
    than the numpy lanes), else None."""
    try:
        import google_crc32c
    except ImportError:
        return None
    return google_crc32c if getattr(google_crc32c, "implementation", None) == "c" else None


ACCELERATOR = _accelerator()


def crc32c(data) -> int:
    """The CRC-32C of bytes / a uint8 array."""
    if ACCELERATOR is not None:
        # it takes read-only buffers only: bytes as they are, anything else copied once
        return ACCELERATOR.value(data if isinstance(data, bytes) else bytes(memoryview(data)))
    return crc32c_numpy(data)


def crc32c_numpy(data) -> int:
    """crc32c with numpy only."""
    buf = np.frombuffer(memoryview(data).cast("B"), np.uint8)
    raw = _raw(buf)
    return (raw ^ _apply(_zeros(buf.size), _M32)) ^ _M32


def mask(crc: int) -> int:
    return ((((crc >> 15) | (crc << 17)) & _M32) + MASK_DELTA) & _M32


def unmask(masked: int) -> int:
    rot = (masked - MASK_DELTA) & _M32
    return ((rot >> 17) | (rot << 15)) & _M32
