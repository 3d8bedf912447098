"""TensorFlow's tensor bundle (the V2 checkpoint format: tensorflow/core/util/tensor_bundle/),
read without TensorFlow.

    <prefix>.index                    a sorted string table (table.py): under the empty key a
                                      BundleHeaderProto (shard count, endianness), under each
                                      tensor's name a BundleEntryProto (dtype, shape, shard,
                                      offset, size, masked CRC-32C of the bytes)
    <prefix>.data-NNNNN-of-MMMMM      the shards: each tensor's raw little-endian bytes at its
                                      offset; a string tensor as varint64 lengths, a masked
                                      CRC-32C of the lengths, then the bytes

A SavedModel's bundle is `DIR/variables/variables`. Every file is opened as a regular file only
(a named pipe would block, /dev/zero never ends) and the index is bounded before it is read.
Every tensor is checked before its bytes are read: dtype, shape against size, the shard's
length; after, the CRC. A damaged bundle gets one ModelFormatError naming the file and the
tensor, never a wrong value and never a read sized by a hostile field.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

import numpy as np

from edgelite.errors import ModelFormatError, UnsupportedOpError
from edgelite.fileio import open_regular, read_regular
from edgelite.names import quoted
from ...schema import graph_pb2 as pb
from ..files import quoted_path
from ..tf_tensor import MAX_RANK, dtype_name, num_elements, numpy_dtype
from .crc32c import crc32c, unmask
from .table import read_table, varint

MAX_SHARDS = 1 << 16
MAX_INDEX_BYTES = 1 << 30   # an index holds names and small protos: 1 GiB is absurd already
STRING = 7


@dataclass(frozen=True)
class Entry:
    key: str
    dtype: int
    shape: tuple[int, ...]
    shard: int
    offset: int
    size: int
    crc: int          # unmasked
    sliced: bool


def data_path(prefix: str, shard: int, shards: int) -> str:
    return f"{prefix}.data-{shard:05d}-of-{shards:05d}"


class Bundle:
    """The tensors of one checkpoint, read lazily: `Bundle(prefix)[key]` -> numpy array."""

    def __init__(self, prefix: str | os.PathLike):
        self.prefix = os.fspath(prefix)
        index = f"{self.prefix}.index"
        what = f"checkpoint index {quoted_path(index)}"
        data = read_regular(index, what, ModelFormatError, MAX_INDEX_BYTES)
        self.entries: dict[str, Entry] = {}
        header = None
        for key, value in read_table(data, what):
            if key == b"":
                header = _parse(pb.BundleHeaderProto, value, f"{what}: the header")
                continue
            name = key.decode("utf-8", "replace")
            self.entries[name] = _entry(name, value, what)
        if header is None:
            raise ModelFormatError(f"{what} has no header entry; the file is damaged")
        if header.endianness != pb.BundleHeaderProto.LITTLE:
            raise UnsupportedOpError(f"{what} was written on a big-endian machine; re-save "
                                     "the checkpoint on a little-endian one")
        if not 1 <= header.num_shards <= MAX_SHARDS:
            raise ModelFormatError(f"{what}: {header.num_shards} data shards; the header is "
                                   "damaged")
        self.shards = header.num_shards
        for e in self.entries.values():
            if e.shard >= self.shards:
                raise ModelFormatError(f"{what}: tensor {quoted(e.key)} is in shard {e.shard} "
                                       f"of {self.shards}; the index is damaged")

    def __contains__(self, key: str) -> bool:
        return key in self.entries

    def keys(self) -> list[str]:
        return list(self.entries)

    def __getitem__(self, key: str) -> np.ndarray:
        e = self.entries.get(key)
        if e is None:
            raise ModelFormatError(f"checkpoint {quoted_path(self.prefix)} has no tensor "
                                   f"{quoted(key)}")
        where = f"tensor {quoted(key)} of checkpoint {quoted_path(self.prefix)}"
        if e.sliced:
            raise UnsupportedOpError(f"{where} is saved in slices (a partitioned variable); "
                                     "save the model without variable partitioning")
        if e.dtype == STRING:
            # at least one length byte per string, plus the 4-byte checksum of the lengths
            if e.size < num_elements(e.shape) + 4:
                raise ModelFormatError(f"{where}: {e.size} bytes cannot hold "
                                       f"{num_elements(e.shape)} strings; the index is damaged")
            return _strings(self._read(e, where), e, where)
        dtype = numpy_dtype(e.dtype, where)
        if num_elements(e.shape) * dtype.itemsize != e.size:  # checked before reading
            raise ModelFormatError(f"{where}: {e.size} bytes for shape {list(e.shape)} of "
                                   f"{dtype_name(e.dtype)}; the index is damaged")
        raw = self._read(e, where)
        if crc32c(raw) != e.crc:
            raise ModelFormatError(f"{where} fails its CRC-32C check; the checkpoint is "
                                   "damaged -- copy or save it again")
        return np.frombuffer(raw, dtype.newbyteorder("<")).astype(dtype).reshape(e.shape)

    def _read(self, e: Entry, where: str) -> bytes:
        path = data_path(self.prefix, e.shard, self.shards)
        with open_regular(path, f"data file {quoted_path(path)} of {where}",
                          ModelFormatError) as f:
            length = os.fstat(f.fileno()).st_size
            try:
                if e.offset + e.size > length:
                    raise ModelFormatError(
                        f"{where}: bytes [{e.offset}, {e.offset + e.size}) lie past the end of "
                        f"{quoted_path(path)} ({length} bytes); the data file is truncated")
                f.seek(e.offset)
                raw = f.read(e.size)
            except OSError as exc:
                raise ModelFormatError(f"{where}: cannot read {quoted_path(path)}: "
                                       f"{exc.strerror or exc}") from None
        if len(raw) != e.size:  # the file shrank meanwhile
            raise ModelFormatError(f"{where}: {quoted_path(path)} ended after {len(raw)} of "
                                   f"{e.size} bytes; the data file is truncated")
        return raw


def _parse(cls, value: bytes, what: str):
    msg = cls()
    try:
        msg.ParseFromString(value)
    except Exception:  # protobuf's DecodeError, or worse on hostile bytes
        raise ModelFormatError(f"{what} is not a valid {cls.__name__}; the file is "
                               "damaged") from None
    return msg


def _entry(name: str, value: bytes, what: str) -> Entry:
    proto = _parse(pb.BundleEntryProto, value, f"{what}: the entry of {quoted(name)}")
    dims = tuple(int(d.size) for d in proto.shape.dim)
    if len(dims) > MAX_RANK or any(d < 0 for d in dims) or proto.offset < 0 or proto.size < 0:
        raise ModelFormatError(f"{what}: the entry of {quoted(name)} has shape {list(dims)}, "
                               f"offset {proto.offset}, size {proto.size}; the index is "
                               "damaged")
    return Entry(name, int(proto.dtype), dims, int(proto.shard_id), int(proto.offset),
                 int(proto.size), unmask(proto.crc32c), len(proto.slices) > 0)


def _strings(raw: bytes, e: Entry, where: str) -> np.ndarray:
    """tensor_bundle.cc WriteStringTensor: varint64 lengths, the masked CRC-32C of the
    lengths (each as 4 little-endian bytes, or 8 past 2^32), then the bytes. The entry's
    CRC covers those fixed-width lengths, the 4 checksum bytes and the strings."""
    count = num_elements(e.shape)
    if count > len(raw):
        raise ModelFormatError(f"{where}: {count} strings in {len(raw)} bytes")
    lengths, pos = [], 0
    for _ in range(count):
        n, pos = varint(raw, pos, len(raw), f"{where}: a string length")
        lengths.append(n)
    fixed = b"".join(struct.pack("<I" if n <= 0xFFFFFFFF else "<Q", n) for n in lengths)
    if pos + 4 > len(raw) or crc32c(fixed) != unmask(struct.unpack_from("<I", raw, pos)[0]):
        raise ModelFormatError(f"{where}: the string lengths fail their CRC-32C check; the "
                               "checkpoint is damaged -- copy or save it again")
    body = raw[pos + 4:]
    if sum(lengths) != len(body) or crc32c(fixed + raw[pos:]) != e.crc:
        raise ModelFormatError(f"{where} fails its CRC-32C check; the checkpoint is "
                               "damaged -- copy or save it again")
    out, start = np.empty(count, object), 0
    for i, n in enumerate(lengths):
        out[i] = body[start:start + n]
        start += n
    return out.reshape(e.shape)
