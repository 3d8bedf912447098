"""Data of any size as a stream of shards: each shard a batch of samples with a global index.

Sources (`shards_of`):

* a folder: its .npy / .npz files sorted by name, each a batch of samples (first axis);
  labels given as a folder are paired with the data shard by shard in the same sorted order
  (a .npy longer than `piece` samples is read in pieces, as below, on both sides);
* a .npy file: memory-mapped, its header checked against the file size
  (sample_data.npy_layout), and read in pieces of at most `piece` samples, each piece mapped
  on its own, so neither the file nor even one whole mapping of it is ever held;
* an .npz file: read whole (sample_data.read_arrays, bounded) and cut in pieces;
* arrays or {name: array} in memory: cut in pieces;
* in Python any other iterable of batches (an array, {name: array}, or an (x, y) pair when
  no labels are given), consumed lazily so memory stays bounded by a few batches.

A `Shard` is small and picklable (a file piece is its path and sample range), so it travels
to worker processes or Ray tasks cheaply; `Shard.load()` reads it there.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from edgelite.errors import EdgeliteError, ShapeError
from ..files import quoted_path
from ..sample_data import NpyLayout, npy_layout, read_arrays

PIECE_SAMPLES = 256  # samples per shard when one file or array is cut in pieces
DATA_SUFFIXES = (".npy", ".npz")


@dataclass(frozen=True)
class FilePiece:
    """Samples [start, stop) of one data file (stop None: to the end)."""
    path: str
    start: int = 0
    stop: int | None = None
    what: str = "input data"

    def load(self) -> Any:
        if self.path.lower().endswith(".npy"):
            layout = npy_layout(self.path, self.what)
            if layout is not None and not layout.fortran_order:
                return _map_rows(self.path, layout, self.start, self.stop)
        data = read_arrays(self.path, self.what)
        return _rows(data, self.start, self.stop)

    def describe(self) -> str:
        whole = self.start == 0 and self.stop is None
        rows = "" if whole else f" samples {self.start}..{self.stop}"
        return f"{self.what} {quoted_path(self.path)}{rows}"


@dataclass(frozen=True)
class Shard:
    """One batch: `data` and `labels` are FilePieces, or arrays / {name: array} in memory."""
    index: int
    data: Any
    labels: Any = None

    def load(self) -> tuple[Any, Any, str]:
        """(data, labels or None, a description for messages)."""
        data = self.data.load() if isinstance(self.data, FilePiece) else self.data
        labels = self.labels.load() if isinstance(self.labels, FilePiece) else self.labels
        what = (self.data.describe() if isinstance(self.data, FilePiece)
                else f"the data (batch {self.index})")
        return data, labels, what


def _map_rows(path: str, layout: NpyLayout, start: int, stop: int | None) -> np.ndarray:
    """Rows [start, stop) of a checked C-order .npy, mapped alone (read-only)."""
    n = layout.shape[0]
    stop = n if stop is None else min(stop, n)
    start = min(start, stop)
    row = layout.dtype.itemsize * int(np.prod(layout.shape[1:], dtype=np.int64))
    shape = (stop - start, *layout.shape[1:])
    if stop == start or row == 0:
        return np.empty(shape, layout.dtype)
    return np.memmap(path, layout.dtype, "r", layout.offset + start * row, shape)


def _rows(data: Any, start: int, stop: int | None) -> Any:
    if isinstance(data, np.ndarray):
        return data[start:stop]
    return {k: np.asarray(v)[start:stop] for k, v in data.items()}


def sample_count(data: Any) -> int:
    """Samples in a batch: the first axis of its (first) array."""
    if isinstance(data, np.ndarray):
        return len(data) if data.ndim else 1
    first = next(iter(data.values()), None)
    return 0 if first is None else len(np.asarray(first))


def _npy_samples(path: str, what: str) -> int | None:
    """The sample count of a .npy file from its header alone (None: not a .npy: an .npz)."""
    if not path.lower().endswith(".npy"):
        return None
    layout = npy_layout(path, what)
    return None if layout is None else layout.shape[0]


def _file_length(path: str, what: str) -> tuple[int, Any]:
    """(samples, the loaded data or None): a .npy's header only; an .npz read whole."""
    n = _npy_samples(path, what)
    if n is not None:
        return n, None
    data = read_arrays(path, what)
    return sample_count(data), data


def shard_files(folder: str, what: str) -> list[str]:
    """The .npy / .npz files of a folder, sorted by name."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.lower().endswith(DATA_SUFFIXES))
    except OSError as e:
        raise EdgeliteError(f"{what} {quoted_path(folder)} cannot be listed "
                            f"({e.strerror or e})") from None
    if not names:
        raise EdgeliteError(f"{what} {quoted_path(folder)} holds no .npy / .npz files")
    return [os.path.join(folder, n) for n in names]


def _file_pieces(path: str, what: str, piece: int) -> Iterator[FilePiece]:
    n = _npy_samples(path, what)
    if n is None:
        yield FilePiece(path, 0, None, what)
        return
    for start in range(0, n, piece):
        yield FilePiece(path, start, min(start + piece, n), what)


def _memory_pieces(data: Any, piece: int) -> Iterator[Any]:
    n = sample_count(data)
    for start in range(0, n, piece):
        yield _rows(data, start, start + piece)


def _is_path(x: Any) -> bool:
    return isinstance(x, (str, os.PathLike))


def _is_batch(x: Any) -> bool:
    return isinstance(x, np.ndarray) or hasattr(x, "keys")


def _stream(source: Any, what: str, piece: int) -> Iterator[Any]:
    """Batches (FilePieces or in-memory batches) of one source, in order."""
    if _is_path(source):
        path = os.fspath(source)
        files = shard_files(path, what) if os.path.isdir(path) else [path]
        for f in files:  # a long .npy shard is mapped in pieces too
            yield from _file_pieces(f, what, piece)
    elif _is_batch(source):
        yield from _memory_pieces(source, piece)
    else:
        try:
            items = iter(source)
        except TypeError:
            raise EdgeliteError(f"{what}: expected a path, an array, a dict of arrays or an "
                                f"iterable of batches, got {type(source).__name__}") from None
        yield from items


def _whole(source: Any, what: str) -> tuple[Any, int | None, str]:
    """(source, its sample count, its description) for one file or one in-memory batch
    (an .npz file is read here, once, and cut in pieces like arrays); count None for a
    folder or an iterable."""
    if _is_path(source):
        path = os.fspath(source)
        if os.path.isdir(path):
            return source, None, what
        described = f"{what} {quoted_path(path)}"
        n = _npy_samples(path, what)
        if n is not None:
            return source, n, described
        source = read_arrays(path, what)
        return source, sample_count(source), described
    if _is_batch(source):
        return source, sample_count(source), "the data" if what == "input data" else what
    return source, None, what


def shards_of(data: Any, labels: Any = None, piece: int = PIECE_SAMPLES,
              samples: int | None = None) -> Iterator[Shard]:
    """The shards of `data` (with `labels` paired shard by shard), at most `samples` samples
    in all (the first ones); see the module doc for the sources taken."""
    if piece < 1:
        raise EdgeliteError(f"shard size must be >= 1 sample, got {piece}")
    data, count, what = _whole(data, "input data")
    if labels is not None:
        labels, n_labels, _ = _whole(labels, "labels")
        if count is not None and n_labels is not None and count != n_labels:
            raise ShapeError(f"{what} holds {count} samples but the labels {n_labels}")
    batches = _stream(data, "input data", piece)
    if labels is None:
        pairs = (_split_pair(b) for b in batches)
    else:
        pairs = _paired(batches, _stream(labels, "labels", piece), data, labels)
    taken = 0
    for index, (x, y) in enumerate(pairs):
        if samples is not None:
            if taken >= samples:
                return
            x, y, n = _limited(x, y, samples - taken)
            taken += n
        yield Shard(index, x, y)


def _split_pair(item: Any) -> tuple[Any, Any]:
    if isinstance(item, tuple) and len(item) == 2:
        return item
    return item, None


def _paired(xs: Iterator, ys: Iterator, data: Any, labels: Any) -> Iterator[tuple]:
    sentinel = object()
    for x, y in itertools.zip_longest(xs, ys, fillvalue=sentinel):
        if x is sentinel or y is sentinel:
            more, fewer = ("labels", "input data") if x is sentinel else ("input data",
                                                                            "labels")
            raise ShapeError(f"the {more} have more shards than the {fewer}; give data and "
                             "labels as folders with one labels file per data file")
        yield x, y


def _limited(x: Any, y: Any, left: int) -> tuple[Any, Any, int]:
    """The batch cut to its first `left` samples, and how many samples it then holds."""
    if isinstance(x, FilePiece):
        stop = _file_length(x.path, x.what)[0] if x.stop is None else x.stop
        n = stop - x.start
    else:
        n = sample_count(x)
    if n > left:
        x, y = _head(x, left), None if y is None else _head(y, left)
    return x, y, min(n, left)


def _head(item: Any, left: int) -> Any:
    if isinstance(item, FilePiece):
        return FilePiece(item.path, item.start, item.start + left, item.what)
    return _rows(item if _is_batch(item) else np.asarray(item), 0, left)
