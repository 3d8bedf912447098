"""TensorFlow's sorted string table (tensorflow/tsl/lib/io/table*.cc, LevelDB's format): the
`variables.index` file of a checkpoint. Read without TensorFlow, every block's checksum checked.

    file   = data blocks | metaindex block | index block | footer (48 bytes)
    footer = metaindex handle, index handle (each: varint64 offset, varint64 size), zero
             padding to 40 bytes, magic 0xdb4775248b80fb57 (little-endian fixed64)
    block  = contents[size] | type (1 byte: 0 none, 1 snappy) | masked crc32c(contents + type)
    contents = entries | restarts (uint32 each) | number of restarts (uint32)
    entry  = shared key bytes, unshared key bytes, value bytes (varint32 each) | key tail | value

The index block maps each data block's last key (or a separator) to its handle. Keys come out
in order; a key must extend the previous one by `shared` bytes it actually has.
TensorFlow's bundle writer and merger write every block uncompressed (tensor_bundle.cc:
"options.compression = table::kNoCompression"); a snappy block is refused.
"""

from __future__ import annotations

import struct
from typing import Iterator

from edgelite.errors import ModelFormatError
from .crc32c import crc32c, unmask

MAGIC = 0xDB4775248B80FB57
FOOTER_BYTES = 48
TRAILER_BYTES = 5           # type byte + crc
NO_COMPRESSION, SNAPPY = 0, 1


class TableError(ModelFormatError):
    """The index file is damaged; `what` names the file."""


def varint(buf: bytes, pos: int, end: int, what: str, bits: int = 64) -> tuple[int, int]:
    """A little-endian base-128 integer at buf[pos:end] and the position after it."""
    value = shift = 0
    while True:
        if pos >= end or shift >= bits:
            raise TableError(f"{what}: a varint runs past its block or is too long")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def _handle(buf: bytes, pos: int, end: int, what: str) -> tuple[tuple[int, int], int]:
    offset, pos = varint(buf, pos, end, what)
    size, pos = varint(buf, pos, end, what)
    return (offset, size), pos


def _block(data: bytes, handle: tuple[int, int], what: str) -> bytes:
    offset, size = handle
    if offset + size + TRAILER_BYTES > len(data) - FOOTER_BYTES:
        raise TableError(f"{what}: a block at byte {offset} ({size} bytes) runs past the end "
                         "of the file; the file is truncated or damaged")
    contents = data[offset:offset + size + 1]  # with the type byte
    (stored,) = struct.unpack_from("<I", data, offset + size + 1)
    if crc32c(contents) != unmask(stored):
        raise TableError(f"{what}: the block at byte {offset} fails its CRC-32C check; the "
                         "file is damaged -- copy the checkpoint again")
    kind = contents[-1]
    if kind == SNAPPY:
        raise TableError(f"{what}: the block at byte {offset} is snappy-compressed, which "
                         "TensorFlow's checkpoint writer never does; re-save the model with "
                         "TensorFlow")
    if kind != NO_COMPRESSION:
        raise TableError(f"{what}: the block at byte {offset} has unknown compression {kind}")
    return contents[:-1]


def _entries(block: bytes, what: str) -> Iterator[tuple[bytes, bytes]]:
    if len(block) < 4:
        raise TableError(f"{what}: a block is too short for its restart count")
    (restarts,) = struct.unpack_from("<I", block, len(block) - 4)
    end = len(block) - 4 - 4 * restarts
    if restarts == 0 or end < 0:
        raise TableError(f"{what}: a block's restart array is malformed")
    pos, key = 0, b""
    while pos < end:
        shared, pos = varint(block, pos, end, what, 32)
        unshared, pos = varint(block, pos, end, what, 32)
        n_value, pos = varint(block, pos, end, what, 32)
        if shared > len(key) or pos + unshared + n_value > end:
            raise TableError(f"{what}: a block entry is malformed")
        key = key[:shared] + block[pos:pos + unshared]
        pos += unshared
        yield key, block[pos:pos + n_value]
        pos += n_value


def read_table(data: bytes, what: str) -> Iterator[tuple[bytes, bytes]]:
    """Every (key, value) of the table in `data`, in key order."""
    if len(data) < FOOTER_BYTES:
        raise TableError(f"{what}: {len(data)} bytes is too short for a table footer; the "
                         "file is truncated")
    footer = data[-FOOTER_BYTES:]
    (magic,) = struct.unpack_from("<Q", footer, 40)
    if magic != MAGIC:
        raise TableError(f"{what}: not a TensorFlow table (bad magic number); the file is "
                         "damaged or not a checkpoint index")
    _, pos = _handle(footer, 0, 40, what)          # the metaindex: nothing TF stores there
    index, _ = _handle(footer, pos, 40, what)
    last = None
    for _, value in _entries(_block(data, index, what), what):
        handle, _ = _handle(value, 0, len(value), what)
        for key, val in _entries(_block(data, handle, what), what):
            if last is not None and key <= last:
                raise TableError(f"{what}: keys out of order; the file is damaged")
            last = key
            yield key, val
